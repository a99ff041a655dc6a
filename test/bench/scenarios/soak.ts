import { createRedis, loadConfig, QUEUES } from '@switchboard/core';
import { computeSignature } from '@switchboard/whatsapp';
import { Queue, QueueEvents } from 'bullmq';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { BenchContext } from '../bench-context';
import { cpuSeconds, cpuSecondsOf, startPlatform } from '../bench-platform';
import { createApprovedTemplate, inboundWebhook, median, percentile, postJson } from '../helpers';

const APP_SECRET = 'bench-app-secret';
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
/** offered rates per second (open loop: requests go out on schedule whatever the answers take) */
const RATES = {
  send: env('BENCH_SOAK_SEND_RATE', 40),
  read: env('BENCH_SOAK_READ_RATE', 40),
  inbound: env('BENCH_SOAK_INBOUND_RATE', 10),
  workflow: env('BENCH_SOAK_WORKFLOW_RATE', 10),
};
/** the number's pace: API sends go first, campaigns take the rest */
const NUMBER_RATE = env('BENCH_SOAK_NUMBER_RATE', 400);
const CAMPAIGN_RECIPIENTS = env('BENCH_SOAK_CAMPAIGN_RECIPIENTS', 500);
const CAMPAIGN_EVERY_MS = env('BENCH_SOAK_CAMPAIGN_EVERY_S', 60) * 1000;
/** a workflow run is answered this long after it was started (it waits in wait_for_reply meanwhile) */
const REPLY_AFTER_MS = 3000;
const SAMPLE_MS = 10_000;
/** requests of one operation in flight beyond which the next is dropped (and counted) instead of piling up */
const MAX_IN_FLIGHT = 100;
/**
 * Send recipients, customers writing in, and contacts running the workflow come from fixed pools (each used up within
 * the first minute at the default rates): after that, contacts and conversations stop growing, and what still grows
 * per operation is the operation's own cost.
 */
const SEND_RECIPIENTS = 2000;
const CUSTOMERS = 500;
const WORKFLOW_CONTACTS = 500;
const READ_PATHS = [
  '/v2/contacts?page=1&pageSize=20',
  '/v2/contacts?search=49170&pageSize=20',
  '/v2/campaigns',
  '/v1/workflows',
  '/v2/templates',
];
const OPERATIONS = ['send', 'read', 'inbound', 'workflow', 'reply', 'reply→done', 'campaign'] as const;
type Operation = (typeof OPERATIONS)[number];
/** operations that write: the denominator of "per 1,000 operations" (a campaign counts its recipients) */
const WRITES: Operation[] = ['send', 'inbound', 'workflow', 'reply'];

interface OpStats {
  /** latencies in ms, per minute of the run */
  perMinute: number[][];
  ok: number;
  failed: number;
  dropped: number;
  inFlight: number;
  /** started after the baseline sample */
  afterBaseline: number;
  errors: Map<string, number>;
}

interface Sample {
  at: number;
  rssKb: Record<string, number>;
  pgBackends: { count: number; anonKb: number };
  queues: Record<string, { waiting: number; active: number; delayed: number; completed: number; oldestMs: number }>;
  load1: number;
  /** share of the last 10 s in which some runnable task waited for a CPU (/proc/pressure/cpu): the shared machine */
  cpuPressure: number;
}

/**
 * Soak (issue 22 item 5): N minutes (`--minutes N`, default 10) of a steady mix at well under the machine's capacity:
 * template sends through the REST API, a campaign now and then, signed customer messages on the platform webhook,
 * workflow runs started by the workflow webhook and resumed by the customer's reply, and authenticated reads. API,
 * worker and sandbox run as their own processes. Every 10 s it samples RSS, queue depths and the oldest waiting job;
 * at the end it prints memory growth since the warm-up, PostgreSQL growth per 1,000 operations, errors, and p99 per
 * operation per minute with its trend. Rates: BENCH_SOAK_SEND_RATE, _READ_RATE, _INBOUND_RATE, _WORKFLOW_RATE,
 * _NUMBER_RATE, _CAMPAIGN_RECIPIENTS, _CAMPAIGN_EVERY_S.
 */
export async function soak(ctx: BenchContext, minutes = 10) {
  const durationMs = minutes * 60_000;
  // A fifth of the run, at most 2 minutes: on a quiet machine the API's and the worker's first full garbage collection
  // came at ~110 s of a 10-minute run (RSS 424 → 205 and 204 → 156 MB), their heaps sized up until then
  const warmupMs = Math.min(120_000, durationMs / 5);
  const platform = await startPlatform(ctx, {
    name: 'soak',
    rate: NUMBER_RATE,
    env: { WHATSAPP_APP_SECRET: APP_SECRET, TEMPORAL_ADDRESS: '' }, // the embedded automation driver
    // small logs, full within the warm-up: their filling up is not growth
    messageLogLimit: 1000,
    sandboxConfig: { enforceCustomerCareWindow: false, failureRules: [], webhookLogLimit: 200 },
  });
  const { api, sandboxUrl, account, phoneId, authz } = platform;
  const config = loadConfig(ctx.env);
  const processes: Record<string, ChildProcess> = {
    sandbox: platform.sandboxProcess,
    api: platform.apiProcess,
    worker: platform.workers[0],
  };
  const templateName = await createApprovedTemplate(api, sandboxUrl, authz, phoneId);
  const workflow = await postJson(
    `${api}/v1/workflows`,
    {
      mode: 'create',
      name: 'Soak',
      trigger: { type: 'webhook' },
      startNodeId: 'wait',
      nodes: [
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout: '1h',
          branches: [{ match: { type: 'any' }, next: 'done' }],
          onTimeout: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    },
    authz,
  );
  if (workflow.status !== 200) throw new Error(`workflow create failed: ${JSON.stringify(workflow.body)}`);
  const { id: workflowId, identifier } = workflow.body.data as { id: number; identifier: string };
  const [group] = await ctx.db.query(`INSERT INTO contact_groups (account_id, name) VALUES ($1, 'soak') RETURNING id`, [
    account.accountId,
  ]);
  await ctx.db.query(
    `WITH c AS (INSERT INTO contacts (account_id, contact_number, name)
                SELECT $1, '4918' || lpad(i::text, 8, '0'), 'Member ' || i FROM generate_series(1, $2::int) i RETURNING id)
     INSERT INTO contact_group_members (group_id, contact_id) SELECT $3, id FROM c`,
    [account.accountId, CAMPAIGN_RECIPIENTS, group.id],
  );

  const connection = createRedis(config.REDIS_URL);
  const bullPrefix = `${config.REDIS_PREFIX}:bull`;
  const queues = Object.values(QUEUES).map((name) => new Queue(name, { connection, prefix: bullPrefix }));
  // failed jobs are removed at once by some queues (removeOnFail): count them as they happen
  const failedJobs: Record<string, number> = {};
  const eventConnections = Object.values(QUEUES).map(() => createRedis(config.REDIS_URL));
  const queueEvents = Object.values(QUEUES).map((name, i) => {
    const events = new QueueEvents(name, { connection: eventConnections[i], prefix: bullPrefix });
    events.on('failed', () => (failedJobs[name] = (failedJobs[name] ?? 0) + 1));
    return events;
  });
  await Promise.all(queueEvents.map((e) => e.waitUntilReady()));

  const stats = new Map<Operation, OpStats>(
    OPERATIONS.map((op) => [
      op,
      { perMinute: [], ok: 0, failed: 0, dropped: 0, inFlight: 0, afterBaseline: 0, errors: new Map() },
    ]),
  );
  let loadStart = Date.now();
  let baselineAt = Infinity;
  const record = (op: Operation, startedAt: number, ms: number) => {
    const minute = Math.floor((startedAt - loadStart) / 60_000);
    ((stats.get(op)!.perMinute[minute] ??= []) as number[]).push(ms);
  };
  /** runs one operation, timing it; `call` answers an error text, or nothing when it went well */
  const timed = async (op: Operation, call: () => Promise<string | undefined>) => {
    const s = stats.get(op)!;
    if (s.inFlight >= MAX_IN_FLIGHT) return void s.dropped++;
    s.inFlight++;
    const startedAt = Date.now();
    if (startedAt >= baselineAt) s.afterBaseline++;
    const t = performance.now();
    let error: string | undefined;
    try {
      error = await call();
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      error = `${(e as Error).message}${cause ? `: ${cause.code ?? cause.message}` : ''}`;
    } finally {
      s.inFlight--;
    }
    if (error === undefined) {
      s.ok++;
      record(op, startedAt, performance.now() - t);
    } else {
      s.failed++;
      s.errors.set(error, (s.errors.get(error) ?? 0) + 1);
    }
  };
  const request = async (path: string, init: RequestInit = {}, okStatus?: number) => {
    const res = await fetch(`${api}${path}`, init);
    const text = await res.text();
    const ok = okStatus === undefined ? res.ok : res.status === okStatus;
    return ok ? undefined : `${res.status} ${text.slice(0, 120)}`;
  };
  const signedInbound = (from: string, id: string) => {
    const body = inboundWebhook(phoneId, from, id);
    return request('/webhooks/whatsapp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': computeSignature(Buffer.from(body), APP_SECRET),
      },
      body,
    });
  };

  const counters = { send: 0, read: 0, inbound: 0, workflow: 0 };
  const phone = (prefix: string, n: number, pool: number) => `${prefix}${String(n % pool).padStart(8, '0')}`;
  /** run id → when its reply was posted */
  const replySentAt = new Map<string, number>();
  const pendingReplies = new Set<NodeJS.Timeout>();
  const fire: Record<keyof typeof RATES, () => void> = {
    send: () => {
      const to = phone('49150', counters.send++, SEND_RECIPIENTS);
      void timed('send', () =>
        request(
          `/send-message/${phoneId}`,
          {
            method: 'POST',
            headers: { ...authz, 'content-type': 'application/json' },
            body: JSON.stringify({ templateName, to, variables: { name: 'friend' } }),
          },
          200, // 207 = not sent
        ),
      );
    },
    read: () => {
      const path = READ_PATHS[counters.read++ % READ_PATHS.length];
      void timed('read', () => request(path, { headers: authz }));
    },
    inbound: () => {
      const n = counters.inbound++;
      void timed('inbound', () => signedInbound(phone('49170', n, CUSTOMERS), `wamid.soak-${n}`));
    },
    workflow: () => {
      const contact = phone('49160', counters.workflow++, WORKFLOW_CONTACTS);
      void timed('workflow', async () => {
        const res = await fetch(`${api}/webhook/workflow/${identifier}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ phone: contact }),
        });
        const text = await res.text();
        if (!res.ok) return `${res.status} ${text.slice(0, 120)}`;
        const { runId } = JSON.parse(text) as { runId: string };
        const timer = setTimeout(() => {
          pendingReplies.delete(timer);
          replySentAt.set(runId, Date.now());
          void timed('reply', () => signedInbound(contact, `wamid.soak-reply-${runId}`));
        }, REPLY_AFTER_MS);
        pendingReplies.add(timer);
      });
    },
  };
  const campaign = async (n: number) => {
    let completedIn = 0;
    await timed('campaign', async () => {
      const created = await postJson(
        `${api}/v2/campaigns`,
        {
          name: `soak ${n}`,
          messagingPhoneId: phoneId,
          templateName,
          variables: { name: 'friend' },
          group_ids: [Number(group.id)],
        },
        authz,
      );
      if (created.status !== 201) return `create ${created.status} ${JSON.stringify(created.body).slice(0, 120)}`;
      const id = created.body.data.campaign_id;
      const started = await postJson(`${api}/v2/campaigns/${id}/start`, undefined, authz);
      if (started.status !== 200) return `start ${started.status}`;
      const t = Date.now();
      for (;;) {
        const res = (await (await fetch(`${api}/v2/campaigns/${id}`, { headers: authz })).json()) as any;
        if (res.data.status === 'completed') return void (completedIn = Date.now() - t);
        if (Date.now() - t > 300_000) return `not completed after 300 s: ${JSON.stringify(res.data.progress)}`;
        await new Promise((r) => setTimeout(r, 1000));
      }
    });
    return completedIn;
  };

  const sample = async (): Promise<Sample> => {
    const rssKb: Record<string, number> = {};
    for (const [name, child] of Object.entries(processes)) rssKb[name] = procStatusKb(child.pid, 'VmRSS');
    const backends: Array<{ pid: number }> = await ctx.db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`,
    );
    const queueStats: Sample['queues'] = {};
    for (const queue of queues) {
      const counts = await queue.getJobCounts('wait', 'prioritized', 'active', 'delayed', 'completed');
      const [oldestWait] = await queue.getJobs(['wait', 'prioritized'], 0, 0, true);
      const [newestEnd] = await queue.getJobs(['wait', 'prioritized'], 0, 0, false);
      const oldest = Math.min(oldestWait?.timestamp ?? Infinity, newestEnd?.timestamp ?? Infinity);
      queueStats[queue.name] = {
        waiting: counts.wait + counts.prioritized,
        active: counts.active,
        delayed: counts.delayed,
        completed: counts.completed,
        oldestMs: Number.isFinite(oldest) ? Date.now() - oldest : 0,
      };
    }
    return {
      at: Date.now(),
      rssKb,
      pgBackends: {
        count: backends.length,
        anonKb: backends.reduce((sum, b) => sum + procStatusKb(b.pid, 'RssAnon'), 0),
      },
      queues: queueStats,
      load1: loadavg()[0],
      cpuPressure: cpuPressure(),
    };
  };
  const tableSizes = () => relationSizes(ctx);
  /** our Redis keys by kind (ids: numbers, uuids, hex replaced with `*`), with one key of each kind */
  const redisKeys = async () => {
    const kinds = new Map<string, number>();
    const examples = new Map<string, string>();
    let cursor = '0';
    do {
      const [next, keys] = await connection.scan(cursor, 'MATCH', `${config.REDIS_PREFIX}*`, 'COUNT', 1000);
      for (const key of keys) {
        const kind = key.slice(config.REDIS_PREFIX.length).replace(/[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{16,}|\d+/g, '*');
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        examples.set(kind, key);
      }
      cursor = next;
    } while (cursor !== '0');
    return { kinds, examples };
  };

  // the load: every operation on its own schedule; samples every 10 s
  await new Promise((r) => setTimeout(r, 2000)); // the worker boots
  console.error(
    `[soak] ${minutes} min: ${Object.entries(RATES)
      .map(([op, rate]) => `${op} ${rate}/s`)
      .join(', ')}, replies ${RATES.workflow}/s (${REPLY_AFTER_MS / 1000} s after each run), a campaign of ` +
      `${CAMPAIGN_RECIPIENTS} every ${CAMPAIGN_EVERY_MS / 1000} s, number at ${NUMBER_RATE} msg/s; warm-up ${warmupMs / 1000} s`,
  );
  const loadAtStart = loadavg();
  const cpuNow = (): Record<string, number> => ({
    ...Object.fromEntries(Object.entries(processes).map(([name, child]) => [name, cpuSeconds(child.pid) ?? 0])),
    'redis (shared)': cpuSecondsOf('redis-server'),
    'load driver': process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
  });
  const cpuAtStart = cpuNow();
  loadStart = Date.now();
  const loadEnd = loadStart + durationMs;
  const tickers = Object.entries(RATES).map(([op, rate]) => pace(rate, loadEnd, fire[op as keyof typeof RATES]));
  const campaigns: Array<Promise<number>> = [];
  let campaignRecipientsAfterBaseline = 0;
  const startCampaign = () => {
    if (Date.now() >= loadEnd) return;
    if (Date.now() >= baselineAt) campaignRecipientsAfterBaseline += CAMPAIGN_RECIPIENTS;
    campaigns.push(campaign(campaigns.length + 1));
  };
  const campaignTimer = setInterval(startCampaign, CAMPAIGN_EVERY_MS);
  const firstCampaign = setTimeout(startCampaign, Math.min(20_000, durationMs / 4));

  const samples: Sample[] = [];
  let baseline: { sample: Sample; tables: TableSize[]; redisKeys: Awaited<ReturnType<typeof redisKeys>> } | undefined;
  while (Date.now() < loadEnd) {
    await new Promise((r) => setTimeout(r, Math.min(SAMPLE_MS, loadEnd - Date.now())));
    const s = await sample();
    samples.push(s);
    if (!baseline && s.at - loadStart >= warmupMs) {
      baselineAt = Date.now();
      baseline = { sample: s, tables: await tableSizes(), redisKeys: await redisKeys() };
    }
    const q = Object.entries(s.queues)
      .filter(([, v]) => v.waiting + v.active > 0)
      .map(([n, v]) => `${n} ${v.waiting}+${v.active}`)
      .join(' ');
    console.error(
      `[soak] ${((s.at - loadStart) / 1000).toFixed(0)} s: RSS MB ${Object.entries(s.rssKb)
        .map(([n, kb]) => `${n} ${(kb / 1024).toFixed(0)}`)
        .join(' ')} pg ${s.pgBackends.count}×${(s.pgBackends.anonKb / 1024).toFixed(0)}; queues ${q || 'empty'}; ` +
        `load ${s.load1.toFixed(2)}, CPU pressure ${s.cpuPressure}%; ok ${OPERATIONS.map((op) => stats.get(op)!.ok).join('/')} failed ${OPERATIONS.reduce((n, op) => n + stats.get(op)!.failed, 0)}`,
    );
  }
  await Promise.all(tickers);
  clearInterval(campaignTimer);
  clearTimeout(firstCampaign);
  const end = samples[samples.length - 1];
  const cpuAtEnd = cpuNow();

  // drain: answers in flight, replies still to come, campaigns, queues
  const drainStarted = Date.now();
  const busy = () => [...stats.values()].some((s) => s.inFlight > 0) || pendingReplies.size > 0;
  while (busy() && Date.now() - drainStarted < 120_000) await new Promise((r) => setTimeout(r, 200));
  const campaignTimes = await Promise.all(campaigns);
  let drained = await sample();
  // (delayed jobs are timers: sweeps, reply timeouts)
  const queued = (s: Sample) => Object.values(s.queues).reduce((n, q) => n + q.waiting + q.active, 0);
  while (queued(drained) > 0 && Date.now() - drainStarted < 120_000) {
    await new Promise((r) => setTimeout(r, 1000));
    drained = await sample();
  }
  await new Promise((r) => setTimeout(r, 2000)); // the last status webhooks
  const drainMs = Date.now() - drainStarted;

  // reply → run finished (the step after wait_for_reply executed), bucketed by when the reply was posted
  const runs: Array<{ id: string; status: string; finished: number | null }> = await ctx.db.query(
    `SELECT id, status, extract(epoch FROM finished_at) * 1000 AS finished FROM workflow_runs WHERE workflow_id = $1`,
    [workflowId],
  );
  const replyDone = stats.get('reply→done')!;
  for (const run of runs) {
    const sentAt = replySentAt.get(run.id);
    if (sentAt === undefined) continue;
    if (run.status === 'completed' && run.finished !== null) {
      replyDone.ok++;
      record('reply→done', sentAt, Number(run.finished) - sentAt);
    } else {
      replyDone.failed++;
      replyDone.errors.set(
        `run ${run.status} after its reply`,
        (replyDone.errors.get(`run ${run.status} after its reply`) ?? 0) + 1,
      );
    }
  }
  const [db] = await ctx.db.query(
    `SELECT (SELECT count(*) FROM messages WHERE account_id = $1 AND status = 'failed')::int AS failed_messages,
            (SELECT count(*) FROM messages WHERE account_id = $1 AND status = 'queued')::int AS queued_messages,
            (SELECT count(*) FROM messages WHERE account_id = $1 AND status IN ('accepted', 'sent'))::int AS undelivered,
            (SELECT count(*) FROM messages WHERE account_id = $1)::int AS messages,
            (SELECT count(*) FROM workflow_runs WHERE workflow_id = $2 AND status = 'failed')::int AS failed_runs`,
    [account.accountId, workflowId],
  );
  const finalTables = await tableSizes();
  const finalRedisKeys = await redisKeys();
  const loadAtEnd = loadavg();

  // figures
  const mb = (kb: number) => (kb / 1024).toFixed(0);
  const growth = (from: number, to: number) => (from > 0 ? ((to - from) / from) * 100 : 0);
  const verdict = (ok: boolean, bad = 'ABOVE TARGET') => (ok ? 'OK' : bad);
  const figures: Record<string, string | number> = {
    duration: `${minutes} min of load, warm-up ${warmupMs / 1000} s (baseline), drain ${(drainMs / 1000).toFixed(0)} s`,
    'offered rates /s': `${Object.entries(RATES)
      .map(([op, rate]) => `${op} ${rate}`)
      .join(
        ', ',
      )}, reply ${RATES.workflow}; campaign ${CAMPAIGN_RECIPIENTS} recipients every ${CAMPAIGN_EVERY_MS / 1000} s`,
    'operations done (ok)': OPERATIONS.map((op) => `${op} ${stats.get(op)!.ok}`).join(', '),
    'load average at start / end (1/5/15)': `${fmtLoad(loadAtStart)} / ${fmtLoad(loadAtEnd)}; 1-min max over the run ${Math.max(...samples.map((s) => s.load1)).toFixed(2)}`,
    'CPU pressure (tasks waiting for a CPU) mean / max %': `${(samples.reduce((n, s) => n + s.cpuPressure, 0) / samples.length).toFixed(0)} / ${Math.max(...samples.map((s) => s.cpuPressure)).toFixed(0)}`,
    'CPU % of one core during the load': Object.entries(cpuAtEnd)
      .map(([name, sec]) => `${name} ${(((sec - cpuAtStart[name]) / (durationMs / 1000)) * 100).toFixed(0)}`)
      .join(', '),
  };
  if (!baseline) throw new Error('the run ended before its warm-up: use more minutes');
  // RSS saws with the garbage collector, and a full collection drops it by a third or more for a few samples before
  // the heap fills back to its working level: the median of a minute right after the warm-up against the median of
  // the last minute (lowest samples compared a collection's trough with a working level); floors and range beside it
  const windowMs = Math.min(60_000, warmupMs);
  const window = (from: number, to: number) =>
    samples.filter((s) => s.at - loadStart >= from && s.at - loadStart <= to);
  const early = [baseline.sample, ...window(warmupMs, warmupMs + windowMs)];
  const late = [...window(durationMs - windowMs, durationMs), end];
  for (const name of Object.keys(processes)) {
    const from = median(early.map((s) => s.rssKb[name]));
    const to = median(late.map((s) => s.rssKb[name]));
    const g = growth(from, to);
    figures[`RSS MB ${name}: median after warm-up → median at end (target < +10%)`] =
      `${mb(from)} → ${mb(to)} (${g >= 0 ? '+' : ''}${g.toFixed(1)}%) ${verdict(g < 10)}; ` +
      `lowest ${mb(Math.min(...early.map((s) => s.rssKb[name])))} → ${mb(Math.min(...late.map((s) => s.rssKb[name])))}, ` +
      `range ${mb(Math.min(...samples.map((s) => s.rssKb[name])))}–${mb(Math.max(...samples.map((s) => s.rssKb[name])))}`;
  }
  const pgFrom = baseline.sample.pgBackends;
  const pgEnd = end.pgBackends;
  const perBackend = (b: Sample['pgBackends']) => b.anonKb / Math.max(b.count, 1);
  const pgBefore = median(early.map((s) => perBackend(s.pgBackends)));
  const pgAfter = median(late.map((s) => perBackend(s.pgBackends)));
  const pgGrowth = growth(pgBefore, pgAfter);
  figures['PostgreSQL backends: private RSS MB per backend, medians (target < +10%)'] =
    `${(pgBefore / 1024).toFixed(1)} → ${(pgAfter / 1024).toFixed(1)} (${pgGrowth >= 0 ? '+' : ''}${pgGrowth.toFixed(1)}%) ${verdict(pgGrowth < 10)}; total ${pgFrom.count} backends ${mb(pgFrom.anonKb)} MB → ${pgEnd.count} backends ${mb(pgEnd.anonKb)} MB`;

  for (const queue of queues) {
    const over = samples.map((s) => s.queues[queue.name]);
    const maxWaiting = Math.max(...over.map((q) => q.waiting));
    const maxActive = Math.max(...over.map((q) => q.active));
    const maxAge = Math.max(...over.map((q) => q.oldestMs));
    const left = drained.queues[queue.name];
    if (maxWaiting + maxActive + left.completed + (failedJobs[queue.name] ?? 0) === 0 && left.delayed === 0) continue;
    figures[`queue ${queue.name}: max waiting / active, oldest s`] =
      `${maxWaiting} / ${maxActive}, ${(maxAge / 1000).toFixed(1)}; after drain ${left.waiting} waiting, ${left.delayed} delayed, ${left.completed} completed kept ${verdict(left.waiting + left.active === 0, 'NOT DRAINED')}`;
  }
  const writes = WRITES.reduce((n, op) => n + stats.get(op)!.afterBaseline, 0) + campaignRecipientsAfterBaseline;
  const keyCount = (keys: { kinds: Map<string, number> }) => [...keys.kinds.values()].reduce((a, b) => a + b, 0);
  figures['Redis keys under the prefix: warm-up → end'] =
    `${keyCount(baseline.redisKeys)} → ${keyCount(finalRedisKeys)}`;
  const grownKinds = [...finalRedisKeys.kinds]
    .map(([kind, n]) => [kind, n - (baseline!.redisKeys.kinds.get(kind) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5);
  for (const [kind, n] of grownKinds) {
    const example = finalRedisKeys.examples.get(kind)!;
    const [bytes, ttl] = await Promise.all([
      connection.call('MEMORY', 'USAGE', example) as Promise<number | null>,
      connection.pttl(example),
    ]);
    figures[`  grown: ${kind}`] =
      `+${n} (${((n / Math.max(writes, 1)) * 1000).toFixed(0)} per 1,000 ops; now ${finalRedisKeys.kinds.get(kind)}), ` +
      `${bytes ?? '?'} bytes each, ${ttl > 0 ? `expires in ${(ttl / 3600_000).toFixed(1)} h` : 'no expiry'}`;
  }

  figures['write operations after the warm-up'] =
    `${writes} (sends + customer messages + workflow runs + replies + campaign recipients)`;
  const before = new Map(baseline.tables.map((t) => [t.name, t]));
  const grown = finalTables
    .map((t) => {
      const b = before.get(t.name) ?? { total: 0, indexes: 0, rows: 0 };
      return {
        name: t.name,
        total: t.total - b.total,
        indexes: t.indexes - b.indexes,
        rows: t.rows - b.rows,
        size: t.total,
      };
    })
    .filter((t) => t.total > 0 || t.rows > 0)
    .sort((a, b) => b.total - a.total);
  for (const t of grown.slice(0, 10)) {
    const per = (n: number) => ((n / Math.max(writes, 1)) * 1000).toFixed(n > 100_000 ? 0 : 1);
    figures[`table ${t.name} per 1,000 ops`] =
      `${per(t.total / 1024)} kB (indexes ${per(t.indexes / 1024)} kB), ${per(t.rows)} rows; now ${(t.size / 1024 / 1024).toFixed(1)} MB`;
  }

  const httpErrors = OPERATIONS.filter((op) => op !== 'reply→done').reduce((n, op) => n + stats.get(op)!.failed, 0);
  const dropped = OPERATIONS.reduce((n, op) => n + stats.get(op)!.dropped, 0);
  figures['HTTP errors, non-2xx (target 0)'] = `${httpErrors} ${verdict(httpErrors === 0)}`;
  for (const op of OPERATIONS)
    for (const [error, n] of stats.get(op)!.errors) figures[`  ${op}: ${error.slice(0, 60)}`] = n;
  figures[`dropped at ${MAX_IN_FLIGHT} in flight (target 0)`] = `${dropped} ${verdict(dropped === 0)}`;
  const failedJobCount = Object.values(failedJobs).reduce((a, b) => a + b, 0);
  figures['failed jobs (target 0)'] =
    `${failedJobCount} ${verdict(failedJobCount === 0)}${failedJobCount ? ` ${JSON.stringify(failedJobs)}` : ''}`;
  figures['failed messages (target 0)'] =
    `${db.failed_messages} of ${db.messages} ${verdict(db.failed_messages === 0)}`;
  figures['messages still queued after drain'] = `${db.queued_messages} ${verdict(db.queued_messages === 0)}`;
  figures['messages accepted but never delivered (status lost)'] = `${db.undelivered} ${verdict(db.undelivered === 0)}`;
  const sandboxStats = (await (await fetch(`${sandboxUrl}/_sandbox/stats`)).json()) as Record<string, any>;
  figures['sandbox → API webhooks delivered / failed / dropped (target 0 failed)'] =
    `${sandboxStats.webhooksDelivered} / ${sandboxStats.webhooksFailed} / ${sandboxStats.webhooksDropped} ${verdict(sandboxStats.webhooksFailed + sandboxStats.webhooksDropped === 0)}`;
  figures['workflow runs failed / not finished after reply (target 0)'] =
    `${db.failed_runs} / ${replyDone.failed} ${verdict(db.failed_runs + replyDone.failed === 0)}`;
  figures['campaign start → completed s'] = campaignTimes.map((ms) => (ms / 1000).toFixed(1)).join(' / ');

  // p99 per operation per minute, and the trend: the last full minute against the first one after the warm-up
  const latencyOps = OPERATIONS.filter((op) => op !== 'campaign');
  figures['p99 ms per minute'] = latencyOps.join(' | ');
  const p99 = (op: Operation, minute: number) => {
    const values = [...(stats.get(op)!.perMinute[minute] ?? [])].sort((a, b) => a - b);
    return values.length ? Number(percentile(values, 0.99)) : NaN;
  };
  const fullMinutes = Math.ceil(minutes);
  for (let minute = 0; minute < fullMinutes; minute++)
    figures[`  minute ${minute + 1}`] = latencyOps.map((op) => fmt(p99(op, minute))).join(' | ');
  const first = Math.min(Math.ceil(warmupMs / 60_000), Math.max(0, fullMinutes - 2));
  const last = fullMinutes - 1;
  figures[`p99 trend, minute ${last + 1} / minute ${first + 1} (target <= 1.5)`] = latencyOps
    .map((op) => {
      const ratio = p99(op, last) / p99(op, first);
      return `${op} ${Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a'}${ratio > 1.5 ? ' RISING' : ''}`;
    })
    .join(', ');
  figures['overall p50 / p99 ms'] = latencyOps
    .map((op) => {
      const all = stats
        .get(op)!
        .perMinute.flat()
        .sort((a, b) => a - b);
      return `${op} ${percentile(all, 0.5)} / ${percentile(all, 0.99)}`;
    })
    .join(', ');
  ctx.record(`soak (${minutes} min)`, figures);

  await Promise.all(queueEvents.map((e) => e.close()));
  for (const c of eventConnections) c.disconnect();
  await Promise.all(queues.map((q) => q.close()));
  connection.disconnect();
}

function cpuPressure(): number {
  try {
    return Number(/some avg10=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

/** A field of /proc/<pid>/status in kB (VmRSS, RssAnon, ...); 0 once the process is gone. */
function procStatusKb(pid: number | undefined, field: string): number {
  if (!pid) return 0;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

interface TableSize {
  name: string;
  total: number;
  indexes: number;
  rows: number;
}

/** Every table's size with indexes and TOAST, its indexes' size, and its exact row count. */
function relationSizes(ctx: BenchContext): Promise<TableSize[]> {
  return ctx.db
    .query(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid)::bigint AS total, pg_indexes_size(c.oid)::bigint AS indexes,
              (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I', c.relname), false, true, '')))[1]::text::bigint AS rows
         FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND s.nspname = 'public'`,
    )
    .then((rows: Array<Record<string, string>>) =>
      rows.map((r) => ({ name: r.name, total: Number(r.total), indexes: Number(r.indexes), rows: Number(r.rows) })),
    );
}

/** Calls `fire` `rate` times a second until `until` (open loop, caught up every 20 ms). */
function pace(rate: number, until: number, fire: () => void): Promise<void> {
  return new Promise((resolve) => {
    if (rate <= 0) return resolve();
    const started = Date.now();
    let fired = 0;
    const timer = setInterval(() => {
      const now = Date.now();
      if (now >= until) return (clearInterval(timer), resolve());
      for (const due = Math.floor(((now - started) / 1000) * rate); fired < due; fired++) fire();
    }, 20);
  });
}
