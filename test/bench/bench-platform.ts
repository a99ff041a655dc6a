import { connectPhoneNumber, provisionAccount, type ProvisionedAccount } from '@switchboard/accounts';
import { type AppConfig, loadConfig, SecretBox } from '@switchboard/core';
import Redis from 'ioredis';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { hostname, setPriority } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BenchContext, DIST } from './bench-context';
import { freePorts } from '../../scripts/free-ports';
import { postJson as post } from './helpers';

/** The sandbox, an API and workers as their own processes, and an account whose number(s) the sandbox paces. */
export interface Platform {
  api: string;
  sandboxUrl: string;
  apiProcess: ChildProcess;
  sandboxProcess: ChildProcess;
  workers: ChildProcess[];
  account: ProvisionedAccount;
  /** the account's first number (`phoneIds[0]`) */
  phoneId: string;
  /** every connected number of the account (`numbers` of them), each paced at `rate` by the platform and the sandbox */
  phoneIds: string[];
  authz: { authorization: string };
  /** Stops the API and the workers (the sandbox too); the next platform must not compete with them for the CPU. */
  stop(): Promise<void>;
}

export async function startPlatform(
  ctx: BenchContext,
  options: {
    name: string;
    rate: number;
    workers?: number;
    env?: Record<string, string>;
    messageLogLimit: number;
    /** connected numbers of the account (1 unless told), all of the same WABA and rate */
    numbers?: number;
    /** more of the sandbox's configuration (POST /_sandbox/config), over the defaults below */
    sandboxConfig?: Record<string, unknown>;
  },
): Promise<Platform> {
  const [apiPort, sandboxPort] = (await freePorts(2)).map(String);
  const api = `http://127.0.0.1:${apiPort}`;
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const env = { ALLOW_PRIVATE_NETWORK_TARGETS: 'true', WHATSAPP_API_BASE_URL: sandboxUrl, ...options.env };
  const config = loadConfig({ ...ctx.env, ...env });
  const sandboxProcess = await ctx.startProcess(
    `sandbox (${options.name})`,
    join(DIST, 'apps/sandbox/src/main.js'),
    {
      SANDBOX_PORT: sandboxPort,
      SANDBOX_WEBHOOK_URL: `${api}/webhooks/whatsapp`,
      WHATSAPP_APP_SECRET: config.WHATSAPP_APP_SECRET,
    },
    `${sandboxUrl}/_sandbox/health`,
  );
  favourSandbox(sandboxProcess);
  const apiProcess = await ctx.startProcess(
    `api (${options.name})`,
    join(DIST, 'apps/api/src/main.js'),
    { ...env, PORT: apiPort },
    `${api}/health`,
  );
  const workers: ChildProcess[] = [];
  for (let i = 0; i < (options.workers ?? 1); i++)
    workers.push(
      await ctx.startProcess(`worker ${i + 1} (${options.name})`, join(DIST, 'apps/worker/src/main.js'), env),
    );

  await waitForWorkers(config, workers);

  const box = new SecretBox(config.ENCRYPTION_KEY);
  const account = await provisionAccount(ctx.db, box, {
    name: `Bench ${options.name}`,
    apiBaseUrl: sandboxUrl,
    apiVersion: config.WHATSAPP_API_VERSION,
    messagesPerSecond: options.rate,
  });
  const phoneId = account.messagingPhoneIds[0];
  const phoneIds = [phoneId, ...(await connectMoreNumbers(ctx, box, account, (options.numbers ?? 1) - 1))];
  await post(`${sandboxUrl}/_sandbox/config`, {
    messagesPerSecond: Object.fromEntries(phoneIds.map((id) => [id, options.rate])),
    statusBatchSize: 100,
    statusDelaysMs: { sent: 200, delivered: 1000, read: null },
    messageLogLimit: options.messageLogLimit,
    // the scenarios read recipients and times only; bodies would lengthen the sandbox's GC pauses (docs/performance.md)
    messageLogPayloads: false,
    webhookLogLimit: 1000,
    autoReview: false,
    ...options.sandboxConfig,
  });
  const auth = await fetch(`${api}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };
  const processes = [...workers, apiProcess, sandboxProcess];
  return {
    api,
    sandboxUrl,
    apiProcess,
    sandboxProcess,
    workers,
    account,
    phoneId,
    phoneIds,
    authz: { authorization: token },
    stop: () =>
      Promise.all(
        processes.map((p) =>
          p.exitCode !== null ? undefined : new Promise((resolve) => (p.once('exit', resolve), p.kill('SIGTERM'))),
        ),
      ).then(() => undefined),
  };
}

/**
 * Connects `count` more numbers to the account as the operator's `connect-number` does (`connectPhoneNumber`): the
 * first number's WABA (so its templates), base URL, API version and rate; ids of their own, a sandbox token each.
 */
async function connectMoreNumbers(
  ctx: BenchContext,
  box: SecretBox,
  account: ProvisionedAccount,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  if (count <= 0) return ids;
  const firstPhoneId = account.messagingPhoneIds[0];
  const [first] = await ctx.db.query(
    `SELECT business_account_id AS "businessAccountId", api_base_url AS "apiBaseUrl", api_version AS "apiVersion",
            messages_per_second AS "messagesPerSecond"
       FROM phone_numbers WHERE messaging_phone_id = $1`,
    [firstPhoneId],
  );
  for (let i = 1; i <= count; i++) {
    const messagingPhoneId = String(BigInt(firstPhoneId) + BigInt(i));
    await connectPhoneNumber(ctx.db, box, {
      ...first,
      messagesPerSecond: Number(first.messagesPerSecond),
      accountId: account.accountId,
      messagingPhoneId,
      accessToken: `sandbox-${randomBytes(16).toString('hex')}`,
      displayPhoneNumber: `+1 555 010 ${1000 + i}`,
      verifiedName: `Bench number ${i + 1}`,
    });
    ids.push(messagingPhoneId);
  }
  return ids;
}

/** CPU seconds (user + system) a process has used so far; null once it has exited. */
export function cpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by every process with this command name (PostgreSQL's backends, redis-server), with those of
 * its children that have exited (cutime, cstime: a backend that exits during a measurement is counted in its
 * postmaster's, so a pool that closes idle connections does not make the figure go down).
 */
export function cpuSecondsOf(command: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== command) continue;
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
    } catch {
      // the process exited while we looked
    }
  }
  return total;
}

/**
 * CPU seconds of the platform's processes and of PostgreSQL, Redis and the Temporal server (0 without one) since
 * `cpuMeter` was called, in the order worker(s) / api / sandbox / postgres / redis / temporal. PostgreSQL counts every
 * backend on the machine: figures taken while other work runs are too high.
 */
export function cpuMeter(processes: ChildProcess[]): () => { seconds: number[]; total: number } {
  const services = ['postgres', 'redis-server', 'temporal'];
  const atStart = processes.map((p) => cpuSeconds(p.pid) ?? 0);
  const servicesAtStart = services.map(cpuSecondsOf);
  return () => {
    const seconds = [
      ...processes.map((p, i) => (cpuSeconds(p.pid) ?? 0) - atStart[i]),
      ...services.map((name, i) => cpuSecondsOf(name) - servicesAtStart[i]),
    ];
    return { seconds, total: seconds.reduce((a, b) => a + b, 0) };
  };
}

/**
 * Waits until every worker process has booted: its heartbeat key (written as the application starts, WorkerHeartbeat)
 * is in Redis. A campaign started right after the worker was spawned waited ~0.8 s for the fan-out consumer, which a
 * running system does not; after this wait, 2–6 ms.
 */
export async function waitForWorkers(config: AppConfig, workers: ChildProcess[]): Promise<void> {
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys = workers.map((w) => `${config.REDIS_PREFIX}:worker:heartbeat:${hostname()}:${w.pid}`);
    const deadline = Date.now() + 60_000;
    while ((await redis.exists(...keys)) < keys.length) {
      if (Date.now() > deadline)
        throw new Error(`worker processes not started after 60 s (no heartbeat: ${keys.join(', ')})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * The sandbox stands in for Meta's servers, which do not share our CPU. On 2 cores it does, and when the scheduler
 * leaves it waiting behind PostgreSQL and the worker, the sends it reads late are counted as arriving together: 130429
 * refusals that pacing cannot prevent (docs/performance.md, "Twelfth round"). So it runs at a higher priority (nice
 * BENCH_SANDBOX_NICE, default -10; 0 leaves it as it is). Its CPU is still counted. Raising a priority needs root or
 * CAP_SYS_NICE: without it the bench says so and goes on.
 */
function favourSandbox(sandbox: ChildProcess): void {
  const nice = Number(process.env.BENCH_SANDBOX_NICE ?? -10);
  if (!nice || sandbox.pid === undefined) return;
  try {
    setPriority(sandbox.pid, nice);
  } catch (error) {
    console.log(
      `[bench] the sandbox keeps its priority (nice ${nice}: ${(error as Error).message}); some 130429 may come from its waits for the CPU`,
    );
  }
}
