import Redis, { RedisOptions } from 'ioredis';

/** A Redis connection from REDIS_URL. BullMQ needs maxRetriesPerRequest: null on its connections. */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options });
}
