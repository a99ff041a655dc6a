import { pacerWaitSeconds } from '@switchboard/core';
import type Redis from 'ioredis';

/**
 * Per-number send pacing over Redis, shared by every worker process and both send queues.
 *
 * A reservation scheduler rather than a check-and-retry limiter: each send asks for a time slot; the Lua script
 * hands out slot times spaced at least `windowMs / limit` apart (smooth, no bursts at window boundaries) and keeps
 * every slot at least `windowMs` after the slot `limit` places before it, so any window of `windowMs` holds at most
 * `limit` slots. The caller sleeps until its slot (one Redis call per send, no polling herd when the number is
 * saturated). Times come from Redis (`TIME`), so workers on several machines share one clock. A caller that wakes
 * up late (event-loop lag) gives its slot back and asks again (`acquire`), since a late request could land in the
 * next window at the platform.
 *
 * `windowMs` is 1 s plus a margin (SEND_PACING_MARGIN_MS): a request leaves a little after its slot (timer and
 * event-loop lag, network), and the platform counts arrivals; the margin keeps that jitter inside the limit.
 *
 * Bulk sends (`maxAheadMs`) may only reserve slots up to that far ahead; further out they are told to come back
 * later without reserving, so an API send never queues behind more than about `maxAheadMs` of bulk traffic.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local maxAhead = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window - 1)
local waits = {}
for i = 4, #ARGV do
  local n = redis.call('ZCARD', KEYS[1])
  local at = now
  if n > 0 then
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    local lastAt = tonumber(last[2]) + window / limit
    if lastAt > at then at = lastAt end
    if n >= limit then
      local kth = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
      local earliest = tonumber(kth[2]) + window
      if earliest > at then at = earliest end
    end
  end
  if maxAhead >= 0 and (at - now) > maxAhead then
    if #waits == 0 then return {0, at - now - maxAhead} end
    break
  end
  redis.call('ZADD', KEYS[1], at, ARGV[i])
  redis.call('PEXPIRE', KEYS[1], math.ceil((at - now) + window + 1000))
  waits[#waits + 1] = at - now
end
return {1, unpack(waits)}
`;

export interface SlotReservation {
  /** true: the slot is ours, send after `waitMs`; false: nothing reserved, ask again after `waitMs` */
  reserved: boolean;
  waitMs: number;
}

export class Pacer {
  private sha?: string;
  /** counters since start: slots taken, polls without a slot (bulk beyond the horizon), slots given back for lateness */
  readonly stats = { reserved: 0, polled: 0, late: 0, waitedMs: 0 };

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly windowMs: number,
  ) {}

  /** Asks for a send slot on `phoneNumberId` at `limit` messages per window; `member` must be unique per attempt. */
  async reserve(phoneNumberId: string, limit: number, member: string, maxAheadMs = -1): Promise<SlotReservation> {
    const { waitsMs, retryInMs } = await this.reserveMany(phoneNumberId, limit, [member], maxAheadMs);
    return waitsMs.length ? { reserved: true, waitMs: waitsMs[0] } : { reserved: false, waitMs: retryInMs };
  }

  /**
   * Asks for consecutive slots, one per member, in one call: `waitsMs[i]` is the wait for `members[i]`. Bulk sends
   * (`maxAheadMs`) get only the slots that fit the horizon, maybe fewer than asked; none at all: `retryInMs`.
   */
  async reserveMany(
    phoneNumberId: string,
    limit: number,
    members: string[],
    maxAheadMs = -1,
  ): Promise<{ waitsMs: number[]; retryInMs: number }> {
    const key = this.key(phoneNumberId);
    const args = [String(Math.max(1, limit)), String(this.windowMs), String(maxAheadMs), ...members];
    let result: number[];
    try {
      this.sha ??= (await this.redis.script('LOAD', SCRIPT)) as string;
      result = (await this.redis.evalsha(this.sha, 1, key, ...args)) as number[];
    } catch (error) {
      if (!String((error as Error).message).includes('NOSCRIPT')) throw error;
      this.sha = undefined;
      result = (await this.redis.eval(SCRIPT, 1, key, ...args)) as number[];
    }
    const [reserved, ...waits] = result.map(Number);
    return reserved === 1
      ? { waitsMs: waits.map((w) => Math.max(0, w)), retryInMs: 0 }
      : { waitsMs: [], retryInMs: Math.max(0, waits[0]) };
  }

  /** Gives a reserved slot back (its holder woke up too late to use it). */
  async release(phoneNumberId: string, member: string): Promise<void> {
    await this.redis.zrem(this.key(phoneNumberId), member);
  }

  private key(phoneNumberId: string) {
    return `${this.prefix}:pace:${phoneNumberId}`;
  }

  /**
   * Waits until a slot is ours (sleeping through the wait); returns how long it waited. When the wake-up comes more
   * than `lateToleranceMs` after the slot, the slot is released and a new one reserved.
   */
  async acquire(
    phoneNumberId: string,
    limit: number,
    member: string,
    maxAheadMs = -1,
    lateToleranceMs = 20,
  ): Promise<number> {
    const started = Date.now();
    for (let round = 0; ; round++) {
      const slot = await this.reserve(phoneNumberId, limit, `${member}:${round}`, maxAheadMs);
      if (slot.reserved) {
        const due = Date.now() + slot.waitMs;
        if (slot.waitMs > 0) await sleep(slot.waitMs);
        this.stats.reserved++;
        if (Date.now() - due <= lateToleranceMs || round >= 5) {
          this.stats.waitedMs += Date.now() - started;
          pacerWaitSeconds.observe((Date.now() - started) / 1000);
          return Date.now() - started;
        }
        this.stats.late++;
        await this.release(phoneNumberId, `${member}:${round}`);
        continue;
      }
      this.stats.polled++;
      await sleep(pollDelay(slot.waitMs));
    }
  }

  /**
   * `acquire` for several sends in a row: reserves their slots in one call (as many as fit the horizon) and yields
   * the index of each member when its slot is due, in order. A member woken too late gives its slot back and
   * acquires a fresh one on its own.
   */
  async *acquireEach(
    phoneNumberId: string,
    limit: number,
    members: string[],
    maxAheadMs = -1,
    lateToleranceMs = 20,
  ): AsyncGenerator<number> {
    let next = 0;
    while (next < members.length) {
      const { waitsMs, retryInMs } = await this.reserveMany(phoneNumberId, limit, members.slice(next), maxAheadMs);
      if (!waitsMs.length) {
        this.stats.polled++;
        await sleep(pollDelay(retryInMs));
        continue;
      }
      const reservedAt = Date.now();
      for (const waitMs of waitsMs) {
        const due = reservedAt + waitMs;
        if (due > Date.now()) await sleep(due - Date.now());
        this.stats.reserved++;
        if (Date.now() - due > lateToleranceMs) {
          this.stats.late++;
          await this.release(phoneNumberId, members[next]);
          await this.acquire(phoneNumberId, limit, `${members[next]}:late`, maxAheadMs, lateToleranceMs);
        }
        yield next++;
      }
    }
  }
}

/** Bulk beyond the horizon: come back later, spread out so saturated numbers are not polled in lockstep. */
function pollDelay(waitMs: number): number {
  return waitMs + Math.floor(Math.random() * Math.min(250, Math.max(20, waitMs)));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
