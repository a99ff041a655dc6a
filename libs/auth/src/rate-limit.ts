import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import type Redis from 'ioredis';

// One round trip: count the hit and start the window on the first one. Sent by its SHA (EVALSHA, ioredis's
// defineCommand resends the text only after a NOSCRIPT), not as a full script on every request.
const INCREMENT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { hits, redis.call('PTTL', KEYS[1]) }`;

/** Fixed-window counters in Redis, so every API process shares one limit per client. */
export class RedisThrottlerStorage implements ThrottlerStorage {
  private readonly redis: Redis & { sbRateLimitIncrement(key: string, ttl: number): Promise<[number, number]> };

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('sbRateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT });
    this.redis = redis as RedisThrottlerStorage['redis'];
  }

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    const [hits, pttl] = await this.redis.sbRateLimitIncrement(`${this.prefix}:rl:${key}`, ttl);
    const timeToExpire = Math.max(1, Math.ceil(pttl / 1000));
    const isBlocked = hits > limit;
    return { totalHits: hits, timeToExpire, isBlocked, timeToBlockExpire: isBlocked ? timeToExpire : 0 };
  }
}

/**
 * SPEC §8: requests per minute per client. Counted per Client ID once the AuthGuard has identified the caller,
 * per IP address for the unauthenticated authentication endpoints; one counter across all routes.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected async getTracker(req: Record<string, any>): Promise<string> {
    // Console sessions have their own key per person (`user:<id>`), API clients per Client ID.
    if (req.client?.userId) return `user:${req.client.userId}`;
    return req.client?.clientId ? `client:${req.client.clientId}` : `ip:${req.ip}`;
  }

  protected generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }
}
