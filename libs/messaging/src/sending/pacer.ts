import { pacerWaitSeconds } from '@switchboard/core';
import type Redis from 'ioredis';

/**
 * Per-number send pacing over Redis, shared by every worker process and both send queues: GCRA (the generic cell
 * rate algorithm) as a reservation scheduler. Each number has one key, its "theoretical arrival time" (TAT): the time
 * of the next free slot. A reservation takes the slot at max(now, TAT) and moves TAT one emission interval on, so
 * slots are spaced exactly `interval` apart when the number is busy and start at once when it is idle: a continuous
 * rate, no windows, no bursts (no burst tolerance: see below). Times are Redis's (`TIME`, microseconds), so workers
 * on several machines share one clock; the reading comes back with the slots, and a caller on the same clock times
 * its sleep by it. The caller sleeps until its slot (one Redis call per send, or per block of sends with
 * `reserveMany`; no polling herd when the number is saturated).
 *
 * The interval is (1 s + `marginMs`) / limit: any `limit` consecutive slots span at least 1 s + margin. The platform
 * counts arrivals, each a little after its slot (timer and event-loop lag, the network, the platform's own queueing):
 * as long as those delays differ by no more than the margin, the arrivals of any `limit` consecutive sends still span
 * at least 1 s, so no 1-s window at the platform ever holds more than `limit`. The caller enforces its share of that
 * budget: a send that wakes up more than `lateToleranceMs` after its slot does not use it and takes a new one
 * (isolated late sends would be harmless, but a stall that sends everything due at once is a burst). A burst
 * tolerance (letting an idle number send a few slots at once) would come out of the same margin, so there is none.
 *
 * Bulk sends (`maxAheadMs`) may only reserve slots up to that far ahead; further out they are told to come back later
 * without reserving, so an API send never queues behind more than about `maxAheadMs` of bulk traffic.
 *
 * Giving slots back: a reservation can be rolled back (TAT set back to its first unused slot) only while nobody has
 * reserved after it, which is exactly when that is safe; otherwise the unused slots are simply lost (a gap never
 * breaks the limit). `gcraReserve` below is the same logic in TypeScript, for the unit tests.
 *
 * KEYS[1]: the number's TAT (µs). ARGV: interval µs, slots wanted, max ahead µs (-1: none), now µs ('' = Redis TIME;
 * tests inject a clock), give-back first slot µs and expected TAT µs ('' = nothing to give back).
 * Returns {slots reserved, wait until the first µs, TAT after µs, now µs} or {0, retry in µs, 0, now µs}.
 */
const SCRIPT = `
local now
if ARGV[4] ~= '' then now = tonumber(ARGV[4]) else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local interval = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local maxAhead = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = ARGV[5] ~= '' and tat == tonumber(ARGV[6])
if back then tat = tonumber(ARGV[5]) end
if tat < now then tat = now end
local n = wanted
if maxAhead >= 0 then n = math.min(wanted, math.floor((now + maxAhead - tat) / interval) + 1) end
if n <= 0 then
  if back then redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000) end
  return {0, tat - now - maxAhead, 0, now}
end
local first = tat
tat = tat + n * interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
return {n, first - now, tat, now}
`;

/** Slots reserved in one call: `count` slots, the first `firstWaitUs` from now, then one every `intervalUs`. */
export interface Reservation {
  count: number;
  firstWaitUs: number;
  intervalUs: number;
  /** TAT after this reservation (µs, Redis clock; 0 if none): a give-back succeeds only while it is still the number's TAT */
  tatUs: number;
  /** nothing reserved (bulk beyond the horizon): ask again after this long */
  retryInUs: number;
  /** the clock the decision was made on (µs, Redis's): waits count from it */
  nowUs: number;
}

/** A give-back: slots from `fromUs` on are returned if the number's TAT is still `tatUs` (nobody reserved after). */
export interface GiveBack {
  fromUs: number;
  tatUs: number;
}

/** The emission interval (µs) for `limit` sends per second with `marginMs` of jitter budget per `limit` sends. */
export const intervalUs = (limit: number, marginMs: number) =>
  Math.ceil(((1000 + marginMs) * 1000) / Math.max(1, limit));

/**
 * The script's decision as a pure function (same arithmetic, same order), for tests with simulated time: reserves up
 * to `wanted` slots on a number whose TAT is `state.tatUs`, updating it.
 */
export function gcraReserve(
  state: { tatUs: number },
  nowUs: number,
  interval: number,
  wanted: number,
  maxAheadUs = -1,
  giveBack?: GiveBack,
): Reservation {
  let tat = state.tatUs;
  const back = giveBack !== undefined && tat === giveBack.tatUs;
  if (back) tat = giveBack.fromUs;
  if (tat < nowUs) tat = nowUs;
  let n = wanted;
  if (maxAheadUs >= 0) n = Math.min(wanted, Math.floor((nowUs + maxAheadUs - tat) / interval) + 1);
  if (n <= 0) {
    if (back) state.tatUs = tat;
    return { count: 0, firstWaitUs: 0, intervalUs: interval, tatUs: 0, retryInUs: tat - nowUs - maxAheadUs, nowUs };
  }
  state.tatUs = tat + n * interval;
  return { count: n, firstWaitUs: tat - nowUs, intervalUs: interval, tatUs: state.tatUs, retryInUs: 0, nowUs };
}

export class Pacer {
  private sha?: string;
  /** counters since start: slots taken, polls without a slot (bulk beyond the horizon), slots not used for lateness */
  readonly stats = { reserved: 0, polled: 0, late: 0, waitedMs: 0 };

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** jitter budget per `limit` sends: slots are (1 s + marginMs) / limit apart */
    readonly marginMs: number,
  ) {}

  /**
   * Reserves up to `wanted` consecutive slots on `phoneNumberId` at `limit` messages per second, in one call, giving
   * back `giveBack` first if still possible. Bulk sends (`maxAheadMs`) get only the slots that fit the horizon, maybe
   * fewer than asked; none at all: `retryInUs`. `nowUs` injects the clock (tests only).
   */
  async reserveMany(
    phoneNumberId: string,
    limit: number,
    wanted: number,
    maxAheadMs = -1,
    giveBack?: GiveBack,
    nowUs?: number,
  ): Promise<Reservation> {
    const interval = intervalUs(limit, this.marginMs);
    const args = [
      String(interval),
      String(Math.max(1, wanted)),
      String(maxAheadMs < 0 ? -1 : Math.round(maxAheadMs * 1000)),
      nowUs === undefined ? '' : String(nowUs),
      giveBack ? String(giveBack.fromUs) : '',
      giveBack ? String(giveBack.tatUs) : '',
    ];
    const key = `${this.prefix}:pace:${phoneNumberId}`;
    let result: number[];
    try {
      this.sha ??= (await this.redis.script('LOAD', SCRIPT)) as string;
      result = (await this.redis.evalsha(this.sha, 1, key, ...args)) as number[];
    } catch (error) {
      if (!String((error as Error).message).includes('NOSCRIPT')) throw error;
      this.sha = undefined;
      result = (await this.redis.eval(SCRIPT, 1, key, ...args)) as number[];
    }
    const [count, wait, tat, now] = result.map(Number);
    return count > 0
      ? { count, firstWaitUs: wait, intervalUs: interval, tatUs: tat, retryInUs: 0, nowUs: now }
      : { count: 0, firstWaitUs: 0, intervalUs: interval, tatUs: 0, retryInUs: wait, nowUs: now };
  }

  /**
   * Waits until a slot is ours (sleeping through the wait); returns how long it waited. When the wake-up comes more
   * than `lateToleranceMs` after the slot, the slot is given back and a new one reserved (in the same call).
   */
  async acquire(phoneNumberId: string, limit: number, maxAheadMs = -1, lateToleranceMs = 10): Promise<number> {
    const started = Date.now();
    let giveBack: GiveBack | undefined;
    for (let round = 0; ; round++) {
      const asked = Date.now();
      const slot = await this.reserveMany(phoneNumberId, limit, 1, maxAheadMs, giveBack);
      if (!slot.count) {
        this.stats.polled++;
        giveBack = undefined;
        await sleep(pollDelay(slot.retryInUs / 1000));
        continue;
      }
      const late = await sleepUntil(decidedAt(slot.nowUs, asked, Date.now()) + slot.firstWaitUs / 1000);
      this.stats.reserved++;
      if (late <= lateToleranceMs || round >= 5) {
        const waited = Date.now() - started;
        this.stats.waitedMs += waited;
        pacerWaitSeconds.observe(waited / 1000);
        return waited;
      }
      this.stats.late++;
      giveBack = { fromUs: slot.tatUs - slot.intervalUs, tatUs: slot.tatUs };
    }
  }

  /**
   * `acquire` for `count` sends: reserves slots for those still waiting in one call (as many as fit the horizon) and
   * yields the index of each send when its slot is due. A send that wakes up too late loses that slot (it is past:
   * nothing could use it) and goes into the next reservation, while the others keep theirs; so indexes may come out
   * of order. After 5 late wake-ups in a row a send goes anyway.
   */
  async *acquireEach(
    phoneNumberId: string,
    limit: number,
    count: number,
    maxAheadMs = -1,
    lateToleranceMs = 10,
  ): AsyncGenerator<number> {
    let waiting = Array.from({ length: count }, (_, i) => i);
    let lateInARow = 0;
    while (waiting.length) {
      const asked = Date.now();
      const block = await this.reserveMany(phoneNumberId, limit, waiting.length, maxAheadMs);
      if (!block.count) {
        this.stats.polled++;
        await sleep(pollDelay(block.retryInUs / 1000));
        continue;
      }
      const decided = decidedAt(block.nowUs, asked, Date.now());
      const late: number[] = [];
      for (let i = 0; i < block.count; i++) {
        const wokeLate = await sleepUntil(decided + (block.firstWaitUs + i * block.intervalUs) / 1000);
        this.stats.reserved++;
        if (wokeLate > lateToleranceMs && lateInARow < 5) {
          this.stats.late++;
          lateInARow++;
          late.push(waiting[i]);
          continue;
        }
        lateInARow = 0;
        yield waiting[i];
      }
      waiting = [...late, ...waiting.slice(block.count)];
    }
  }
}

/**
 * When (local ms) the script read its clock: Redis's own reading when the clocks agree (on one machine it lies between
 * asking and answering), else the answer's arrival (slots then come late by up to the round trip, never early). Waits
 * count from it, so a reply that sat in a busy event loop does not shift the slots.
 */
function decidedAt(redisNowUs: number, askedAt: number, answeredAt: number): number {
  const redisNow = redisNowUs / 1000;
  return redisNow >= askedAt - 1 && redisNow <= answeredAt + 1 ? redisNow : answeredAt;
}

/** Sleeps until `at` (local ms, never before); returns how late it woke up. */
async function sleepUntil(at: number): Promise<number> {
  while (Date.now() < at) await sleep(Math.ceil(at - Date.now()));
  return Date.now() - at;
}

/** Bulk beyond the horizon: come back later, spread out so saturated numbers are not polled in lockstep. */
function pollDelay(waitMs: number): number {
  return Math.ceil(waitMs) + Math.floor(Math.random() * Math.min(250, Math.max(20, waitMs)));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
