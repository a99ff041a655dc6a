import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { TestApp } from './test-app';

/**
 * The compiled worker (dist/, built by the global setup) as a real child process on the test app's database and
 * Redis prefix, for crash tests that SIGKILL it. Its output goes to `logs`, printed by the test when it fails.
 */
export function startWorkerProcess(t: TestApp, logs: string[], poolSize = 10): ChildProcess {
  const env = {
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
    // The test app's driver: with Temporal, the same server and task queue (and the prebuilt workflow bundle).
    ...(t.config.TEMPORAL_ADDRESS
      ? { TEMPORAL_ADDRESS: t.config.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: t.config.TEMPORAL_TASK_QUEUE, TEMPORAL_NAMESPACE: t.config.TEMPORAL_NAMESPACE }
      : { TEMPORAL_ADDRESS: '' }),
  };
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist/apps/worker/src/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => logs.push(String(d)));
  child.stderr!.on('data', (d) => logs.push(String(d)));
  return child;
}
