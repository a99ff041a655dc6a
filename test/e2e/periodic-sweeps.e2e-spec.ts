import { createRedis, loadConfig, PeriodicSweeps } from '@switchboard/core';
import { randomBytes } from 'node:crypto';

/**
 * Sweeps are BullMQ job schedulers: however many worker processes register a sweep, it runs once per period in
 * total (not once per process). Three PeriodicSweeps on one Redis prefix stand for three worker processes.
 */
describe('PeriodicSweeps (sweeps as BullMQ job schedulers)', () => {
  const prefix = `sbt:sweeps:${randomBytes(4).toString('hex')}`;
  const config = loadConfig({ ...process.env, NODE_ENV: 'test', REDIS_PREFIX: prefix });
  const instances: PeriodicSweeps[] = [];

  afterAll(async () => {
    await Promise.all(instances.map((i) => i.beforeApplicationShutdown()));
    const redis = createRedis(config.REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('three processes registering the same sweep run it once per period between them, and each can be the one', async () => {
    const PERIOD_MS = 300;
    const runsBy = [0, 0, 0];
    const at: number[] = [];
    for (let i = 0; i < 3; i++) {
      const sweeps = new PeriodicSweeps(config);
      instances.push(sweeps);
      await sweeps.register('test-sweep', PERIOD_MS, async () => {
        runsBy[i]++;
        at.push(Date.now());
        await new Promise((r) => setTimeout(r, 50));
      });
    }
    const startedAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    // Which worker takes each job is up to BullMQ: on a quiet, fast machine one took all ten of 3 s (CI, 2026-11-29).
    // Watched longer, up to 12 s in all, until a second one has: the counts below are per elapsed time.
    while (runsBy.filter((n) => n > 0).length < 2 && Date.now() - startedAt < 12_000)
      await new Promise((r) => setTimeout(r, PERIOD_MS));
    const elapsed = Date.now() - startedAt;
    const total = runsBy.reduce((a, b) => a + b, 0);
    // One per period (+1: the scheduler's first job is due at once), where three setIntervals would give ~30.
    expect(total).toBeGreaterThanOrEqual(Math.floor(elapsed / PERIOD_MS) - 2);
    expect(total).toBeLessThanOrEqual(Math.ceil(elapsed / PERIOD_MS) + 1);
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    // never two runs of one period (those would start together); a run picked up late may sit closer to the next one
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(PERIOD_MS * 0.2);
    expect(instances.map((i) => i.registered)).toEqual([['test-sweep'], ['test-sweep'], ['test-sweep']]);
    expect(runsBy.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2); // not pinned to one process
    // These "processes" stop (their workers would take the next test's jobs without having its handler).
    await Promise.all(instances.splice(0).map((i) => i.beforeApplicationShutdown()));
  }, 20_000);

  it('the sweep keeps running when the process that ran it goes away', async () => {
    let count = 0;
    const own = loadConfig({ ...process.env, NODE_ENV: 'test', REDIS_PREFIX: `${prefix}:2` }); // without the first test's scheduler
    const survivor = new PeriodicSweeps(own);
    instances.push(survivor);
    await survivor.register('survivor-sweep', 200, async () => void count++);
    const other = new PeriodicSweeps(own);
    await other.register('survivor-sweep', 200, async () => undefined);
    await other.beforeApplicationShutdown();
    await new Promise((r) => setTimeout(r, 1500));
    expect(count).toBeGreaterThanOrEqual(4);
  }, 20_000);
});
