import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { hostname } from 'node:os';
import { AppConfig } from '../config/config';
import { REDIS } from '../redis/redis.module';

export const HEARTBEAT_INTERVAL_MS = 5_000;
/** A worker whose last heartbeat is older than this counts as gone. */
export const HEARTBEAT_TTL_MS = 20_000;

export function heartbeatPattern(prefix: string): string {
  return `${prefix}:worker:heartbeat:*`;
}

/** How many worker processes wrote a heartbeat within HEARTBEAT_TTL_MS (the keys expire after it). */
export async function aliveWorkers(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', heartbeatPattern(prefix), 'COUNT', 100);
    cursor = next;
    count += keys.length;
  } while (cursor !== '0');
  return count;
}

/**
 * The worker's liveness for GET /health/ready: every HEARTBEAT_INTERVAL_MS a key `<prefix>:worker:heartbeat:<host>:<pid>`
 * with a TTL of HEARTBEAT_TTL_MS; deleted on a clean shutdown.
 */
@Injectable()
export class WorkerHeartbeat implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHeartbeat.name);
  private timer?: NodeJS.Timeout;
  private readonly key: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: AppConfig,
  ) {
    this.key = `${config.REDIS_PREFIX}:worker:heartbeat:${hostname()}:${process.pid}`;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.del(this.key).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    try {
      await this.redis.set(this.key, new Date().toISOString(), 'PX', HEARTBEAT_TTL_MS);
    } catch (error) {
      this.logger.warn(`heartbeat not written: ${(error as Error).message}`);
    }
  }
}
