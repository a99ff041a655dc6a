import { provisionAccount, type ProvisionedAccount } from '@switchboard/accounts';
import { loadConfig, SecretBox } from '@switchboard/core';
import { dataSourceOptions, runMigrations } from '@switchboard/core/database';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { API_NODE_FLAGS } from '../../apps/api/src/node-flags';
import { ensureLocalServices, withDatabase } from '../../scripts/local-services';

/**
 * How long a stopped process may take to exit before it is killed: 5 s, or 60 s when BENCH_NODE_ARGS asks for a
 * profile (`--cpu-prof`, `--heap-prof`), which is written at exit and took the API longer than 5 s after a busy scenario.
 */
const STOP_GRACE_MS = /--(cpu|heap)-prof/.test(process.env.BENCH_NODE_ARGS ?? '') ? 60_000 : 5000;

/** What every benchmark scenario gets: a fresh migrated database, Redis, and helpers to run the real processes. */
export interface BenchContext {
  databaseUrl: string;
  redisUrl: string;
  db: DataSource;
  env: Record<string, string>;
  startProcess(name: string, entry: string, env?: Record<string, string>, waitForUrl?: string): Promise<ChildProcess>;
  createAccount(): Promise<ProvisionedAccount>;
  record(scenario: string, figures: Record<string, string | number>): void;
}

export const DIST = join(__dirname, '..', '..');

/**
 * A fresh context: its own database and Redis prefix (named after this process and `name`), so nothing one scenario
 * leaves behind (jobs, waiting runs, pending deliveries) is picked up by the next one's workers.
 */
export async function createBenchContext(name = 'bench'): Promise<
  BenchContext & {
    results: Array<{ scenario: string; figures: Record<string, string | number> }>;
    close(): Promise<void>;
  }
> {
  const services = await ensureLocalServices((line) => console.error(line));
  // One database and Redis prefix per run: benchmarks started from several worktrees on one machine must not collide.
  const suffix = name.replace(/[^a-z0-9]/gi, '_').toLowerCase();
  const dbName = `switchboard_bench_${process.pid}_${suffix}`;
  const redisPrefix = `sbbench${process.pid}${suffix}`;
  const databaseUrl = withDatabase(services.databaseUrl, dbName);
  const admin = new Client({ connectionString: withDatabase(services.databaseUrl, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  await runMigrations(databaseUrl);

  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: redisPrefix,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    WHATSAPP_APP_SECRET: 'bench-app-secret',
    WHATSAPP_VERIFY_TOKEN: 'bench-verify-token',
    ENCRYPTION_KEY: '0'.repeat(64),
  };
  const config = loadConfig(env);
  const db = new DataSource(dataSourceOptions(databaseUrl, { extra: { max: 4 } }));
  await db.initialize();
  const children: ChildProcess[] = [];
  const stopProcesses = async () => {
    await Promise.all(
      children.splice(0).map((child) =>
        child.exitCode !== null || child.signalCode !== null
          ? undefined
          : new Promise<void>((resolve) => {
              const timer = setTimeout(() => (child.kill('SIGKILL'), resolve()), STOP_GRACE_MS);
              child.once('exit', () => (clearTimeout(timer), resolve()));
              child.kill('SIGTERM');
            }),
      ),
    );
  };
  const results: Array<{ scenario: string; figures: Record<string, string | number> }> = [];

  return {
    databaseUrl,
    redisUrl: services.redisUrl,
    db,
    env,
    results,
    async startProcess(name, entry, extraEnv = {}, waitForUrl) {
      // BENCH_NODE_ARGS: extra node flags for every process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them
      const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
      // the API as production starts it (apps/api/src/node-flags.ts)
      if (entry.endsWith(join('apps', 'api', 'src', 'main.js'))) nodeArgs.unshift(...API_NODE_FLAGS);
      const child = spawn(process.execPath, [...nodeArgs, entry], {
        env: { ...env, ...extraEnv },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      children.push(child);
      child.on('exit', (code) => code && code !== 143 && console.error(`${name} exited with ${code}`));
      if (waitForUrl) {
        for (let i = 0; i < 300; i++) {
          // up to 30 s: a loaded machine boots slowly
          if (
            await fetch(waitForUrl).then(
              (r) => r.ok,
              () => false,
            )
          )
            return child;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`${name} did not answer at ${waitForUrl}`);
      }
      return child;
    },
    createAccount: () =>
      provisionAccount(db, new SecretBox(config.ENCRYPTION_KEY), {
        name: 'Bench',
        apiBaseUrl: config.WHATSAPP_API_BASE_URL,
        apiVersion: config.WHATSAPP_API_VERSION,
      }),
    record(scenario, figures) {
      results.push({ scenario, figures });
      console.log(`\n[${scenario}]`);
      for (const [key, value] of Object.entries(figures)) console.log(`  ${key.padEnd(34)} ${value}`);
    },
    async close() {
      await stopProcesses();
      await db.destroy();
      const cleanup = new Client({ connectionString: withDatabase(services.databaseUrl, 'postgres') });
      await cleanup.connect();
      // BENCH_KEEP_DB=true: the database stays for inspection (its name is printed)
      if (process.env.BENCH_KEEP_DB === 'true') console.log(`[bench] database kept: ${dbName}`);
      else await cleanup.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await cleanup.end();
      const redis = new Redis(services.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      for await (const keys of redis.scanStream({ match: `${redisPrefix}*`, count: 1000 }))
        if ((keys as string[]).length) await redis.unlink(...(keys as string[]));
      redis.disconnect();
      await services.stop();
    },
  };
}
