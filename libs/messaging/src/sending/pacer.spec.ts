import { RateLimiter } from '../../../../apps/sandbox/src/state';
import { gcraReserve, intervalUs, type GiveBack } from './pacer';

/**
 * The pacer's decision (`gcraReserve`, the Lua script's logic; test/e2e/messaging-delivery checks that the script
 * answers the same) driven over simulated time by many concurrent callers, as the send processor drives it: bulk
 * callers reserve blocks of up to 20 slots at most 1 s ahead, API callers one slot with no horizon, every caller sleeps
 * until each slot, and a wake-up later than the tolerance does not send in that slot but in a new one.
 */
const LIMIT = 1000;
const MARGIN_MS = 20;
const LATE_MS = MARGIN_MS / 2; // SendExecutor: half the margin for our lateness
const HORIZON_US = 1_000_000;
const INTERVAL = intervalUs(LIMIT, MARGIN_MS);

/** A small seeded PRNG (mulberry32): the same run every time. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Caller {
  nextAt: number;
  api: boolean;
  /** a bulk caller's sends still without a slot (a job's next block, plus those that woke up too late) */
  waiting: number;
  giveBack?: GiveBack;
  lateInARow: number;
}

interface SimOptions {
  callers: number;
  seconds: number;
  seed: number;
  /** share of callers that are API sends (one slot, no horizon) */
  apiShare?: number;
  /** how late a caller wakes up after its slot (at `slot`, µs), µs */
  lateness?: (rnd: () => number, slot: number) => number;
  /** chance that a caller pauses for 0.2–1.5 s after a block (demand that comes and goes) */
  pauses?: number;
  /** the caller's late tolerance (SendExecutor: half the margin) */
  lateMs?: number;
  /** from leaving our process (at `left`, µs) to being counted by the platform, µs (the spread is what matters) */
  transit?: (rnd: () => number, left: number) => number;
}

/** Returns the departure and arrival times (µs) of every send made, and how many wake-ups were too late. */
function simulate(o: SimOptions) {
  const rnd = random(o.seed);
  const lateness = o.lateness ?? (() => 0);
  const transit = o.transit ?? (() => 0);
  const state = { tatUs: 0 };
  const start = 1_700_000_000_000_000;
  const end = start + o.seconds * 1_000_000;
  const callers: Caller[] = Array.from({ length: o.callers }, (_, i) => ({
    nextAt: start + Math.floor(rnd() * 5000),
    api: i < Math.round(o.callers * (o.apiShare ?? 0)),
    waiting: 0,
    lateInARow: 0,
  }));
  const departures: number[] = [];
  const arrivals: number[] = [];
  let late = 0;
  for (;;) {
    const c = callers.reduce((a, b) => (b.nextAt < a.nextAt ? b : a));
    if (c.nextAt >= end) break;
    const asked = c.nextAt;
    const now = asked + Math.floor(rnd() * 300); // Redis answers a little later
    if (!c.waiting) c.waiting = c.api ? 1 : 1 + Math.floor(rnd() * 20);
    const r = gcraReserve(state, now, INTERVAL, c.waiting, c.api ? -1 : HORIZON_US, c.giveBack);
    c.giveBack = undefined;
    if (!r.count) {
      c.nextAt = now + r.retryInUs + Math.floor(rnd() * Math.min(250_000, Math.max(20_000, r.retryInUs)));
      continue;
    }
    // as Pacer.acquire (API) and Pacer.acquireEach (bulk): sleep until each slot in turn, send, or if too late
    // give the slot back (acquire) / keep the send for the next reservation (acquireEach)
    let awake = now;
    for (let i = 0; i < r.count; i++) {
      const wait = r.firstWaitUs + i * r.intervalUs;
      const left = Math.max(awake, now + wait) + Math.floor(lateness(rnd, now + wait));
      awake = left;
      // measured as the pacer does: against the slot on Redis's clock
      if (left - (now + wait) > (o.lateMs ?? LATE_MS) * 1000 && c.lateInARow < 5) {
        late++;
        c.lateInARow++;
        if (c.api) c.giveBack = { fromUs: r.tatUs - r.intervalUs, tatUs: r.tatUs };
        continue;
      }
      c.lateInARow = 0;
      c.waiting--;
      departures.push(left);
      arrivals.push(left + Math.floor(transit(rnd, left)));
    }
    c.nextAt = awake + Math.floor(rnd() * 1000);
    if (rnd() < (o.pauses ?? 0)) c.nextAt += 200_000 + Math.floor(rnd() * 1_300_000);
  }
  departures.sort((a, b) => a - b);
  arrivals.sort((a, b) => a - b);
  return { departures, arrivals, late };
}

/** The fewest and the most times in any 1-s window [x, x + 1 s) that lies inside the run. */
function windowCounts(times: number[]) {
  let most = 0;
  let fewest = Infinity;
  const last = times[times.length - 1];
  for (let lo = 0, hi = 0; lo < times.length && times[lo] + 1_000_000 <= last; lo++) {
    while (hi < times.length && times[hi] < times[lo] + 1_000_000) hi++;
    most = Math.max(most, hi - lo);
    // the window starting just after times[lo]: one fewer at the start, maybe more at the end
    let h = hi;
    while (h < times.length && times[h] <= times[lo] + 1_000_000) h++;
    fewest = Math.min(fewest, h - lo - 1);
  }
  return { most, fewest };
}

/**
 * The platform stalls for `stallUs` every `everyUs` (GC, CPU taken by others): whatever arrives meanwhile is counted
 * when it ends, all at once; otherwise up to `spreadUs` of random delay.
 */
const stalls =
  (stallUs: number, everyUs: number, spreadUs: number) =>
  (rnd: () => number, left: number): number => {
    const into = left % everyUs;
    return (into < stallUs ? stallUs - into : 0) + rnd() * spreadUs;
  };

/** How many arrivals the sandbox would refuse with 130429: its own sliding-window limiter on Date.now()-like ms. */
function refusedBySandbox(arrivals: number[]) {
  const limiter = new RateLimiter();
  let refused = 0;
  for (const a of arrivals) if (!limiter.tryTake('n', LIMIT, Math.floor(a / 1000))) refused++;
  return refused;
}

describe('Pacer (GCRA) over simulated time, 1,000/s', () => {
  it.each([1, 2, 7, 50, 200])(
    '%i concurrent callers: every 1-s window gets between 0.97 and 1.0 of the rate',
    (callers) => {
      const { departures, late } = simulate({ callers, seconds: 20, seed: callers, apiShare: 0.2 });
      expect(late).toBe(0);
      const { most, fewest } = windowCounts(departures);
      expect(most).toBeLessThanOrEqual(LIMIT);
      expect(fewest).toBeGreaterThanOrEqual(0.97 * LIMIT);
      expect(departures.length).toBeGreaterThanOrEqual(0.97 * LIMIT * 19.9);
    },
  );

  it.each([2, 50, 200])(
    '%i callers waking up late and arrivals jittered within the margin: the sandbox never refuses one',
    (callers) => {
      const { arrivals, late } = simulate({
        callers,
        seconds: 20,
        seed: 100 + callers,
        apiShare: 0.1,
        // event-loop stalls of 50 ms every 1.7 s, and 1% of wake-ups up to 30 ms late on their own (the sends
        // later than the tolerance give their slots back)
        lateness: (rnd, slot) => stalls(50_000, 1_700_000, 2000)(rnd, slot) + (rnd() < 0.01 ? rnd() * 30_000 : 0),
        // the rest of the margin: the platform stalls for 8 ms every 1.3 s, plus up to 2 ms of network spread
        transit: stalls(8000, 1_300_000, 2000),
      });
      expect(late).toBeGreaterThan(0);
      expect(refusedBySandbox(arrivals)).toBe(0);
      expect(windowCounts(arrivals).most).toBeLessThanOrEqual(LIMIT);
    },
  );

  it('demand that comes and goes (the number idles now and then): never more than the rate in a 1-s window', () => {
    const { departures } = simulate({ callers: 3, seconds: 30, seed: 3, apiShare: 0.3, pauses: 0.05 });
    const { most, fewest } = windowCounts(departures);
    expect(fewest).toBeLessThan(0.9 * LIMIT); // it did idle
    expect(most).toBeLessThanOrEqual(Math.ceil(LIMIT / (1 + MARGIN_MS / 1000)));
  });

  it('jitter beyond the margin is what the platform would refuse (the check above can fail)', () => {
    const stalled = simulate({ callers: 20, seconds: 10, seed: 7, transit: stalls(30_000, 1_300_000, 0) });
    expect(refusedBySandbox(stalled.arrivals)).toBeGreaterThan(0);
    // callers that send however late they wake up: their stalls bunch the sends just as a platform stall does
    const sloppy = simulate({ callers: 20, seconds: 10, seed: 8, lateness: stalls(30_000, 1_300_000, 0), lateMs: 1e9 });
    expect(sloppy.late).toBe(0);
    expect(refusedBySandbox(sloppy.arrivals)).toBeGreaterThan(0);
  });

  it('an idle number sends at once; a busy one spaces slots (1 s + margin) / limit apart', () => {
    const state = { tatUs: 0 };
    const a = gcraReserve(state, 5_000_000, INTERVAL, 3);
    expect(a).toMatchObject({ count: 3, firstWaitUs: 0, tatUs: 5_000_000 + 3 * 1020 });
    const b = gcraReserve(state, 5_000_500, INTERVAL, 1);
    expect(b).toMatchObject({ count: 1, firstWaitUs: 3 * 1020 - 500 });
    // idle again long after: no credit saved up (no burst)
    const c = gcraReserve(state, 9_000_000, INTERVAL, 2);
    expect(c).toMatchObject({ count: 2, firstWaitUs: 0, tatUs: 9_000_000 + 2 * 1020 });
  });

  it('bulk reserves at most the horizon ahead and is told when to come back; API sends have no horizon', () => {
    const state = { tatUs: 0 };
    const now = 1_000_000_000;
    let got = 0;
    for (let i = 0; i < 100; i++) got += gcraReserve(state, now, INTERVAL, 20, HORIZON_US).count;
    expect(got).toBe(Math.floor(HORIZON_US / INTERVAL) + 1);
    const refused = gcraReserve(state, now, INTERVAL, 20, HORIZON_US);
    expect(refused.count).toBe(0);
    expect(refused.retryInUs).toBe(state.tatUs - now - HORIZON_US);
    const api = gcraReserve(state, now, INTERVAL, 1);
    expect(api.count).toBe(1);
    expect(api.firstWaitUs).toBeLessThanOrEqual(HORIZON_US + INTERVAL);
  });

  it('a late caller gets its slots back while nobody reserved after it, never otherwise', () => {
    const state = { tatUs: 0 };
    const mine = gcraReserve(state, 1_000_000, INTERVAL, 10);
    const back = { fromUs: 1_000_000 + 4 * INTERVAL, tatUs: mine.tatUs };
    // slots 4..9 returned: the next reservation starts at slot 4
    expect(gcraReserve(state, 1_000_100, INTERVAL, 1, -1, back).firstWaitUs).toBe(4 * INTERVAL - 100);
    const other = gcraReserve(state, 1_000_200, INTERVAL, 1);
    // someone reserved after: the give-back is refused and the new slot comes after everything granted
    const again = gcraReserve(state, 1_000_300, INTERVAL, 1, -1, { fromUs: 1_000_000, tatUs: mine.tatUs });
    expect(again.firstWaitUs).toBe(other.tatUs - 1_000_300);
  });
});
