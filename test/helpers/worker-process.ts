import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-ports';
import type { TestApp } from './test-app';

/** The environment of a compiled process (worker or API) on the test app's database, Redis prefix and driver. */
export function processEnv(t: TestApp, poolSize = 10): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: t.config.DATABASE_URL,
    DATABASE_POOL_SIZE: String(poolSize),
    REDIS_URL: t.config.REDIS_URL,
    REDIS_PREFIX: t.config.REDIS_PREFIX,
    JWT_SECRET: t.config.JWT_SECRET,
    ENCRYPTION_KEY: t.config.ENCRYPTION_KEY,
    WHATSAPP_APP_SECRET: t.config.WHATSAPP_APP_SECRET,
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    RATE_LIMIT_PER_MINUTE: String(t.config.RATE_LIMIT_PER_MINUTE),
    // The test app's driver: with Temporal, the same server and task queue (and the prebuilt workflow bundle).
    ...(t.config.TEMPORAL_ADDRESS
      ? {
          TEMPORAL_ADDRESS: t.config.TEMPORAL_ADDRESS,
          TEMPORAL_TASK_QUEUE: t.config.TEMPORAL_TASK_QUEUE,
          TEMPORAL_NAMESPACE: t.config.TEMPORAL_NAMESPACE,
        }
      : { TEMPORAL_ADDRESS: '' }),
  };
}

/** A compiled entry point of dist/ as a child process; its output goes to `logs`. */
export function spawnDist(entry: string, env: NodeJS.ProcessEnv, logs: Pick<string[], 'push'>): ChildProcess {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', entry)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => logs.push(String(d)));
  child.stderr!.on('data', (d) => logs.push(String(d)));
  return child;
}

/**
 * The compiled worker (dist/, built by the jest global setup) as a real child process on the test app's database and
 * Redis prefix, for crash tests that SIGKILL it. Its output goes to `logs`, printed by the test when it fails.
 */
export function startWorkerProcess(
  t: TestApp,
  logs: string[],
  poolSize = 10,
  extraEnv: Record<string, string> = {},
): ChildProcess {
  return spawnDist('apps/worker/src/main.js', { ...processEnv(t, poolSize), ...extraEnv }, logs);
}

/**
 * The compiled API as a child process on a free port (same database, Redis and driver as the test app); resolves once
 * it answers. A port taken by another process between its choice and the child's bind is chosen again (up to 3 times);
 * a child that fails is killed, its output added to `logs` under a heading.
 */
export async function startApiProcess(
  t: TestApp,
  logs: string[],
  poolSize = 10,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string }> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const own: string[] = [];
    let destination = own; // this attempt's alone until it answers, then the caller's
    const child = spawnDist(
      'apps/api/src/main.js',
      { ...processEnv(t, poolSize), PORT: String(port), ...extraEnv },
      { push: (line: string) => destination.push(line) },
    );
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve())); // all of its output is in
    const url = `http://127.0.0.1:${port}`;
    const failed = async (why: string) => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await closed;
      logs.push(`[api on ${port}, attempt ${attempt}: ${why}]\n`, ...own);
      return own.join('');
    };
    for (;;) {
      if (child.exitCode !== null) {
        const output = await failed(`exited (${child.exitCode})`);
        if (output.includes('EADDRINUSE') && attempt < 3) break;
        throw new Error(`API process exited (${child.exitCode})\n${output.slice(-2000)}`);
      }
      const ok = await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok && child.exitCode === null) {
        logs.push(...own);
        destination = logs;
        return { child, url };
      }
      if (Date.now() > deadline) {
        const output = await failed('no answer within 60 s');
        throw new Error(`API process on ${port} did not answer within 60 s\n${output.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
