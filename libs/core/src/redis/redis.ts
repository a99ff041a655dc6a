import Redis, { RedisOptions } from 'ioredis';

/** A Redis connection from REDIS_URL. BullMQ needs maxRetriesPerRequest: null on its connections. */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options });
}

/**
 * Ends a connection at shutdown: QUIT, or a plain disconnect when QUIT fails. One already ended is left alone: a Nest
 * context closed twice would otherwise disconnect it again, and ioredis then arms a 2-s timer on a socket that has
 * already closed, which keeps the process alive for those 2 s.
 */
export async function closeRedis(redis: Redis | null | undefined): Promise<void> {
  if (!redis || redis.status === 'end') return;
  await redis.quit().catch(() => redis.disconnect());
}
