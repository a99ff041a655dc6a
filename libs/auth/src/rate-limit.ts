import { ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerStorage } from '@nestjs/throttler';
import {
  THROTTLER_BLOCK_DURATION,
  THROTTLER_KEY_GENERATOR,
  THROTTLER_LIMIT,
  THROTTLER_SKIP,
  THROTTLER_TRACKER,
  THROTTLER_TTL,
} from '@nestjs/throttler/dist/throttler.constants';
import type { ThrottlerRequest } from '@nestjs/throttler/dist/throttler.guard.interface';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import type Redis from 'ioredis';
import { isIPv6 } from 'node:net';
import { perRoute, type RouteTargets } from './route-metadata';

// One round trip: take `count` hits of the window, starting the window on the first. Sent by its SHA (EVALSHA,
// ioredis's defineCommand resends the text only after a NOSCRIPT), not as a full script on every request.
const CLAIM = `
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
if hits == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { hits, redis.call('PTTL', KEYS[1]) }`;

/** A key's hits claimed from Redis by this process and not used yet, for the current window. */
interface Lease {
  /** Local time at which the window ends (measured before the claim, so never later than Redis's expiry). */
  expiresAt: number;
  /** The window's count for the next request served from this lease, and the last one it may serve. */
  next: number;
  last: number;
  /** The window's counter had reached the limit: every later request of the window is refused. */
  full: boolean;
  /** Size and time of the last claim: busy keys claim more at once. */
  size: number;
  claimedAt: number;
  claiming?: Promise<void>;
}

/** A key claimed again within this time claims twice as many hits (up to MAX_LEASE). */
const BUSY_MS = 100;
const MAX_LEASE = 64;
/** A lease never takes more than this share of what is left of the limit, so other processes are not starved. */
const LEASE_SHARE = 16;
/** Keys remembered at most (each a few hundred bytes). */
const MAX_KEYS = 50_000;
/** A claim Redis has not answered in this time is given up: the process counts alone (below). */
export const CLAIM_TIMEOUT_MS = 1_000;
/** After a claim failed or timed out, this long without asking Redis: one slow claim, not one per key and window. */
export const REDIS_AWAY_MS = 5_000;

/**
 * Fixed-window counters in Redis, so every API process shares one limit per key. A busy key does not cost a round trip
 * per request: the process claims several hits at once (INCRBY; 1 at first, doubling while claims come less than
 * 100 ms apart, at most 64 and at most 1/16 of what is left of the limit) and spends them locally. Claims are counted
 * in Redis before they are spent, so no process ever lets more than the limit through; hits a process claimed and did
 * not spend before the window ended are lost to that window (docs/authentication.md, "Rate limits"). With one process
 * the count is exact. While Redis is away (a claim failed or took over CLAIM_TIMEOUT_MS), each process counts the
 * window alone, without asking Redis for REDIS_AWAY_MS: requests are limited per process rather than waiting for Redis.
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  private readonly redis: Redis & {
    sbRateLimitClaim(key: string, ttl: number, count: number): Promise<[number, number]>;
  };
  private readonly logger = new Logger('RateLimit');
  private readonly leases = new Map<string, Lease>();
  private prunedAt = 0;
  /** Until then Redis is not asked (it failed or did not answer a claim). */
  private awayUntil = 0;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('sbRateLimitClaim', { numberOfKeys: 1, lua: CLAIM });
    this.redis = redis as RedisThrottlerStorage['redis'];
  }

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    for (;;) {
      const now = Date.now();
      let lease = this.leases.get(key);
      if (lease && !lease.claiming && now >= lease.expiresAt) lease = undefined;
      if (lease?.claiming) {
        await lease.claiming;
        continue;
      }
      if (lease && lease.next <= lease.last) return record(lease.next++, lease.expiresAt - now, limit);
      if (lease?.full) return record(limit + 1, lease.expiresAt - now, limit);
      await this.claim(key, ttl, limit, lease, now);
    }
  }

  private claim(key: string, ttl: number, limit: number, previous: Lease | undefined, now: number): Promise<void> {
    const grown = previous && now - previous.claimedAt < BUSY_MS ? previous.size * 2 : 1;
    const left = previous ? limit - previous.last : limit;
    const size = Math.max(1, Math.min(grown, MAX_LEASE, Math.floor(left / LEASE_SHARE)));
    const lease: Lease = { expiresAt: now, next: 1, last: 0, full: false, size, claimedAt: now };
    this.prune(now);
    this.leases.set(key, lease);
    if (now < this.awayUntil) {
      countAlone(lease, previous, now, ttl, limit);
      return Promise.resolve();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CLAIM_TIMEOUT_MS} ms`)), CLAIM_TIMEOUT_MS);
    });
    const claimed = this.redis.sbRateLimitClaim(`${this.prefix}:rl:${key}`, ttl, size);
    claimed.catch(() => undefined); // given up on after the timeout: its late failure is no one's
    lease.claiming = Promise.race([claimed, timeout]).then(
      ([hits, pttl]) => {
        clearTimeout(timer);
        lease.expiresAt = now + Math.max(1, pttl);
        lease.next = hits - size + 1;
        lease.last = Math.min(hits, limit);
        lease.full = hits >= limit;
        lease.claiming = undefined;
      },
      (error: Error) => {
        clearTimeout(timer);
        if (Date.now() >= this.awayUntil)
          this.logger.warn(`Rate limits counted per process for ${REDIS_AWAY_MS / 1000} s: Redis ${error.message}`);
        this.awayUntil = Math.max(this.awayUntil, Date.now() + REDIS_AWAY_MS);
        countAlone(lease, previous, now, ttl, limit);
      },
    );
    return lease.claiming;
  }

  /**
   * Forgets ended windows, at most once a second, and everything unclaimed past MAX_KEYS (a flood from many addresses):
   * a forgotten lease only loses its unspent hits, it never lets a request through that Redis did not count.
   */
  private prune(now: number): void {
    if (now - this.prunedAt < 1000 && this.leases.size < MAX_KEYS) return;
    this.prunedAt = now;
    const flood = this.leases.size >= MAX_KEYS;
    for (const [key, lease] of this.leases)
      if (!lease.claiming && (flood || now >= lease.expiresAt)) this.leases.delete(key);
  }
}

/**
 * The address a per-IP limit counts: an IPv4 address as it is (also when written as IPv6, `::ffff:203.0.113.7`), an
 * IPv6 address by its /64 network: one subscriber usually holds a whole /64, and counting each of its 2^64 addresses
 * apart would let them pass the limit again and again.
 */
export function addressKey(ip: string | undefined): string {
  if (!ip || !isIPv6(ip)) return ip ?? '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * The rest of the window for this process alone (Redis away): the window of the last claim goes on from the hits it had
 * (all spent, or it would not claim), else a new one starts. Exact with one process; with more, each may pass what was
 * left of the limit.
 */
function countAlone(lease: Lease, previous: Lease | undefined, now: number, ttl: number, limit: number): void {
  const open = previous && now < previous.expiresAt;
  Object.assign(lease, {
    expiresAt: open ? previous.expiresAt : now + ttl,
    next: open ? previous.last + 1 : 1,
    last: limit,
    full: true,
    claiming: undefined,
  });
}

function record(totalHits: number, msLeft: number, limit: number): ThrottlerStorageRecord {
  const timeToExpire = Math.max(1, Math.ceil(msLeft / 1000));
  const isBlocked = totalHits > limit;
  return { totalHits, timeToExpire, isBlocked, timeToBlockExpire: isBlocked ? timeToExpire : 0 };
}

/** A route's throttles with their settings resolved, or 'per request' when a setting must be resolved each time. */
type RoutePlan = Array<Omit<ThrottlerRequest, 'context'>> | 'per request';

/**
 * SPEC §8: requests per minute per client. Counted per Client ID once the AuthGuard has identified the caller,
 * per IP address for the unauthenticated authentication endpoints; one counter across all routes.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly routePlan = perRoute((targets) => this.readRoutePlan(targets));

  /**
   * ThrottlerGuard's own check, with the route's settings read once instead of on every request: the library reads
   * five metadata keys per throttler and awaits each value (seven promises before the count), for settings that
   * never change after start-up. Routes whose settings are functions, or throttlers with `skipIf`, go the library's
   * way every time.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const plan = this.routePlan(context);
    if (plan === 'per request') return super.canActivate(context);
    for (const throttle of plan) await this.handleRequest({ context, ...throttle }); // 429 is thrown
    return true;
  }

  private readRoutePlan(targets: RouteTargets): RoutePlan {
    const plan: Exclude<RoutePlan, 'per request'> = [];
    for (const throttler of this.throttlers) {
      if (throttler.skipIf || this.commonOptions.skipIf) return 'per request';
      const read = <T>(key: string) => this.reflector.getAllAndOverride<T | undefined>(key + throttler.name, targets);
      if (read<boolean>(THROTTLER_SKIP)) continue;
      const limit = read<unknown>(THROTTLER_LIMIT) ?? throttler.limit;
      const ttl = read<unknown>(THROTTLER_TTL) ?? throttler.ttl;
      const blockDuration = read<unknown>(THROTTLER_BLOCK_DURATION) ?? throttler.blockDuration ?? ttl;
      if (typeof limit !== 'number' || typeof ttl !== 'number' || typeof blockDuration !== 'number')
        return 'per request';
      plan.push({
        throttler,
        limit,
        ttl,
        blockDuration,
        getTracker:
          read<ThrottlerRequest['getTracker']>(THROTTLER_TRACKER) ??
          throttler.getTracker ??
          this.commonOptions.getTracker!,
        generateKey:
          read<ThrottlerRequest['generateKey']>(THROTTLER_KEY_GENERATOR) ??
          throttler.generateKey ??
          this.commonOptions.generateKey!,
      });
    }
    return plan;
  }

  protected async getTracker(req: Record<string, any>): Promise<string> {
    // Console sessions have their own key per person (`user:<id>`), API clients per Client ID.
    if (req.client?.userId) return `user:${req.client.userId}`;
    return req.client?.clientId ? `client:${req.client.clientId}` : `ip:${addressKey(req.ip)}`;
  }

  protected generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }
}
