import Redis from 'ioredis';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { BenchContext } from '../bench-context';
import { cpuMeter, startPlatform, type Platform } from '../bench-platform';
import { createApprovedTemplate, postJson as post } from '../helpers';

const RECIPIENTS = Number(process.env.BENCH_CAMPAIGN_RECIPIENTS ?? 100_000);
const RATE = Number(process.env.BENCH_CAMPAIGN_RATE ?? 1000);
/** worker processes (they share the per-number pacer through Redis) */
const WORKERS = Number(process.env.BENCH_CAMPAIGN_WORKERS ?? 1);
/** the second part: two numbers of one account at RATE each, at the same time; `BENCH_CAMPAIGN_TWO_NUMBERS=0` skips it */
const TWO_NUMBERS = process.env.BENCH_CAMPAIGN_TWO_NUMBERS !== '0';
/**
 * recipients per number in the second part (30,000 at 1,000/s: ~32 s). With 10,000 the start (processes still warming
 * up, the first fan-out batches) weighed a tenth of the run: 0.88 of the rate at 0.80 ms per recipient, against 0.95 at
 * 0.63 ms with 30,000 on the same code.
 */
const TWO_NUMBERS_RECIPIENTS = Number(process.env.BENCH_CAMPAIGN_TWO_NUMBERS_RECIPIENTS ?? 30_000);
/**
 * Recipients per number of a first campaign on each fresh platform, not measured: the measured campaign then runs on
 * processes that have sent before (compiled code, pools and PostgreSQL's caches filled), as a campaign started on a
 * running server does. Cold, the first seconds of a 30,000-recipient run went out at 0.3–0.8 of the rate and the run
 * cost 1.63 ms per recipient; after 5,000 first, 0.98 of the rate from its first full second and 1.36 ms (2026-11-28).
 * 0 measures a cold start; the warm-up's own duration is printed.
 */
const WARMUP_RECIPIENTS = Number(process.env.BENCH_CAMPAIGN_WARMUP ?? 5000);

/** Peak resident set size of a process (VmHWM), in MB; null once it has exited. */
function peakRssMb(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** The largest number of timestamps inside any window of `windowMs` (sliding, two pointers over sorted times). */
export function maxInWindow(times: number[], windowMs = 1000): { count: number; startsAt: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let best = { count: 0, startsAt: 0 };
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi] - sorted[lo] >= windowMs) lo++;
    if (hi - lo + 1 > best.count) best = { count: hi - lo + 1, startsAt: sorted[lo] };
  }
  return best;
}

/** The fewest timestamps in any window of `windowMs` lying between the first and the last (how steady the rate was). */
export function minInWindow(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let fewest = Infinity;
  for (let lo = 0, hi = 0; lo < sorted.length && sorted[lo] + windowMs <= sorted[sorted.length - 1]; lo++) {
    // the window starting just after sorted[lo]
    while (hi < sorted.length && sorted[hi] <= sorted[lo] + windowMs) hi++;
    fewest = Math.min(fewest, hi - lo - 1);
  }
  return fewest === Infinity ? sorted.length : fewest;
}

/** A group of `count` new contacts of the account (numbers 49 + prefix + i in 8 digits + 1), seeded in one statement. */
async function seedGroup(ctx: BenchContext, accountId: string, name: string, prefix: string, count: number) {
  const [g] = await ctx.db.query(`INSERT INTO contact_groups (account_id, name) VALUES ($1, $2) RETURNING id`, [
    accountId,
    name,
  ]);
  await ctx.db.query(
    `WITH c AS (INSERT INTO contacts (account_id, contact_number, name)
                SELECT $1, '49' || $4 || lpad(i::text, 8, '0') || '1', 'Member ' || i FROM generate_series(1, $2::int) i RETURNING id)
     INSERT INTO contact_group_members (group_id, contact_id) SELECT $3, id FROM c`,
    [accountId, count, g.id, prefix],
  );
  await ctx.db.query('ANALYZE contacts; ANALYZE contact_group_members');
  return Number(g.id);
}

/**
 * Writes out what the seeding (and the scenarios before this one) left dirty, so that a checkpoint those writes would
 * start is not counted in the measured run's PostgreSQL CPU. The campaign's own writes are still counted.
 */
async function checkpoint(ctx: BenchContext) {
  await ctx.db.query('CHECKPOINT');
}

/**
 * WAL written from now on (the whole cluster: the bench runs alone), read from the WAL position, which is exact (the
 * statistics views lag until each backend flushes them). Bytes of WAL per recipient measure the database's work
 * without the noise of this VM's CPU times.
 */
async function walMeter(ctx: BenchContext) {
  const [{ lsn }] = await ctx.db.query(`SELECT pg_current_wal_lsn()::text AS lsn`);
  return async () =>
    Number((await ctx.db.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes`, [lsn]))[0].bytes);
}

/**
 * Redis commands run from now on (the whole server, those inside scripts included: `INFO commandstats`), exact where
 * CPU times are not: what the campaign asks of Redis per recipient.
 */
async function redisCommandMeter(ctx: BenchContext) {
  const redis = new Redis(ctx.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const calls = async () =>
    [...(await redis.info('commandstats')).matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  const before = await calls();
  return async () => {
    const after = await calls();
    redis.disconnect();
    return after - before - 1; // less the INFO of the first reading
  };
}

/** A campaign of the template to one group from one number; its id. */
async function createCampaign(platform: Platform, phoneId: string, templateName: string, groupId: number) {
  const campaign = await post(
    `${platform.api}/v2/campaigns`,
    {
      name: `bench ${phoneId}`,
      messagingPhoneId: phoneId,
      templateName,
      variables: { name: 'friend' },
      group_ids: [groupId],
    },
    platform.authz,
  );
  if (campaign.status !== 201) throw new Error(`campaign create failed: ${JSON.stringify(campaign.body)}`);
  return campaign.body.data.campaign_id as number;
}

/** From the first campaign's start to the last one's completion, ms. */
const spanMs = (runs: Array<{ startedAt: number; completedAt: number }>) =>
  Math.max(...runs.map((r) => r.completedAt)) - Math.min(...runs.map((r) => r.startedAt));

/** Starts the campaign and polls it until `completed`: when it was started and seen completed, its last progress. */
async function runCampaign(platform: Platform, id: number, label: string) {
  const { api, authz } = platform;
  const startedAt = Date.now();
  const start = await post(`${api}/v2/campaigns/${id}/start`, undefined, authz);
  if (start.status !== 200) throw new Error(`start failed: ${JSON.stringify(start.body)}`);
  let lastLog = 0;
  for (;;) {
    const res = (await (await fetch(`${api}/v2/campaigns/${id}`, { headers: authz })).json()) as any;
    const progress = res.data.progress;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      console.error(`[${label}] ${((Date.now() - startedAt) / 1000).toFixed(0)} s: ${JSON.stringify(progress)}`);
    }
    if (res.data.status === 'completed') return { startedAt, completedAt: Date.now(), progress };
    if (Date.now() - startedAt > 600_000)
      throw new Error(`campaign not completed after 600 s: ${JSON.stringify(progress)}`);
    await new Promise((r) => setTimeout(r, 100)); // "seen completed" is at most this late
  }
}

/**
 * One number's accepts in the sandbox's message log from `since` on (the measured campaign's start: the warm-up's are
 * before it): times, first → last, the highest 1-s window, duplicates.
 */
async function acceptsOf(sandboxUrl: string, phoneId: string, since: number) {
  const log = (await (await fetch(`${sandboxUrl}/_sandbox/messages?phone_number_id=${phoneId}`)).json()) as {
    data: Array<{ to: string; acceptedAt: string }>;
  };
  const accepted = log.data.filter((m) => Date.parse(m.acceptedAt) >= since);
  const times = accepted.map((m) => Date.parse(m.acceptedAt));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const perRecipient = new Map<string, number>();
  for (const m of accepted) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
  return {
    times,
    first,
    last,
    /** accepts / (first → last accept), msg/s */
    spanRate: times.length / Math.max((last - first) / 1000, 0.001),
    window: maxInWindow(times),
    duplicates: [...perRecipient.values()].filter((n) => n > 1).length,
  };
}

interface SandboxStats {
  accepted: number;
  rejected?: Record<string, number>;
}
const sandboxStats = async (sandboxUrl: string) =>
  (await (await fetch(`${sandboxUrl}/_sandbox/stats`)).json()) as SandboxStats;
/** The sandbox's counters since `before` (taken at the measured campaign's start). */
const statsSince = (before: SandboxStats, after: SandboxStats): SandboxStats => ({
  accepted: after.accepted - before.accepted,
  rejected: Object.fromEntries(
    Object.entries(after.rejected ?? {})
      .map(([code, n]) => [code, n - (before.rejected?.[code] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  ),
});
const rejections = (stats: SandboxStats) =>
  Object.entries(stats.rejected ?? {})
    .map(([code, n]) => `${code}: ${n}`)
    .join(', ') || '0';

/** WARMUP_RECIPIENTS to each number first, all at once, unmeasured (a group of new contacts per number): what it took. */
async function warmUp(ctx: BenchContext, platform: Platform, phoneIds: string[], templateName: string, label: string) {
  if (WARMUP_RECIPIENTS <= 0) return 'none: a cold start (BENCH_CAMPAIGN_WARMUP=0)';
  const ids: number[] = [];
  for (const [i, phoneId] of phoneIds.entries()) {
    const groupId = await seedGroup(
      ctx,
      platform.account.accountId,
      `warm-up ${i + 1}`,
      String(30 + i),
      WARMUP_RECIPIENTS,
    );
    ids.push(await createCampaign(platform, phoneId, templateName, groupId));
  }
  const runs = await Promise.all(ids.map((id) => runCampaign(platform, id, `${label}, warm-up`)));
  const seconds = spanMs(runs) / 1000;
  return `${WARMUP_RECIPIENTS} recipients per number in ${seconds.toFixed(1)} s (${(WARMUP_RECIPIENTS / seconds / RATE).toFixed(3)} of the rate), not measured`;
}
const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * Issue 22's target (ARCHITECTURE.md had 110 s): at 1,000 msg/s configured, a 100,000-recipient campaign completes at
 * 0.97 of the rate or better (≤ 103 s) on a 2-core machine against the sandbox, with no 130429 refusal and never more
 * than the rate in any 1-second window. Sandbox, API and worker run as separate
 * processes; the sandbox enforces the same limit (error 130429) and batches its status webhooks.
 * Then (unless BENCH_CAMPAIGN_TWO_NUMBERS=0) `campaignTwoNumbers` on a platform of its own.
 */
export async function campaignFanout(ctx: BenchContext) {
  const platform = await startPlatform(ctx, {
    name: 'campaign',
    rate: RATE,
    workers: WORKERS,
    messageLogLimit: (RECIPIENTS + WARMUP_RECIPIENTS) * 2,
  });
  const { api, sandboxUrl, account, phoneId, authz, workers } = platform;
  const name = await createApprovedTemplate(api, sandboxUrl, authz, phoneId);
  const warmedUp = await warmUp(ctx, platform, [phoneId], name, 'campaign');

  // the audience: RECIPIENTS contacts in one group, seeded in one statement
  const seedStarted = Date.now();
  const groupId = await seedGroup(ctx, account.accountId, 'bench', '15', RECIPIENTS);
  const seedMs = Date.now() - seedStarted;
  const id = await createCampaign(platform, phoneId, name, groupId);
  await checkpoint(ctx);

  const cpuUsed = cpuMeter([...workers, platform.apiProcess, platform.sandboxProcess]);
  const walWritten = await walMeter(ctx);
  const redisCommands = await redisCommandMeter(ctx);
  const statsBefore = await sandboxStats(sandboxUrl);
  const { startedAt, completedAt, progress } = await runCampaign(platform, id, 'campaign');
  const walBytes = await walWritten();
  const commands = await redisCommands();
  const totalMs = completedAt - startedAt;
  const workerPeak = workers.map((w) => peakRssMb(w.pid) ?? 'n/a').join(' / ');
  // worker(s) / api / sandbox / postgres / redis (no Temporal server here)
  const cpu = cpuUsed()
    .seconds.slice(0, -1)
    .map((s) => s.toFixed(1));
  const load = loadAverage();

  const stats = statsSince(statsBefore, await sandboxStats(sandboxUrl));
  const { times, first, last, spanRate, window, duplicates } = await acceptsOf(sandboxUrl, phoneId, startedAt);
  const sendSeconds = (last - first) / 1000;
  const totalRate = (RECIPIENTS / totalMs) * 1000;
  // issue 22: 0.97 of the rate from start to completion
  const targetSeconds = RECIPIENTS / (0.97 * RATE);
  const lowest = minInWindow(times);
  const refused130429 = Number(stats.rejected?.['130429'] ?? 0);
  const cpuPerRecipient = (cpu.reduce((a, b) => a + Number(b), 0) * 1000) / RECIPIENTS;

  ctx.record('campaign fan-out', {
    'warm-up campaign first': warmedUp,
    recipients: RECIPIENTS,
    'configured rate msg/s': RATE,
    'seed (generate_series) ms': seedMs,
    [`start → completed s (target <= ${targetSeconds.toFixed(0)})`]: `${(totalMs / 1000).toFixed(1)} ${totalMs <= targetSeconds * 1000 ? 'OK' : 'ABOVE TARGET'}`,
    'first → last platform accept s': sendSeconds.toFixed(1),
    'start → first accept / last accept → seen completed s': `${((first - startedAt) / 1000).toFixed(2)} / ${((completedAt - last) / 1000).toFixed(2)}`,
    'achieved rate msg/s (accepts / span)': `${spanRate.toFixed(0)} (${(spanRate / RATE).toFixed(3)} of the rate)`,
    'achieved rate msg/s (recipients / total)': `${totalRate.toFixed(0)} (${(totalRate / RATE).toFixed(3)} of the rate; target >= 0.97) ${totalRate >= 0.97 * RATE ? 'OK' : 'BELOW TARGET'}`,
    'highest 1-second window (target <= rate)': `${window.count} ${window.count <= RATE ? 'OK' : 'OVER RATE'}`,
    'lowest 1-second window while sending': `${lowest} (${(lowest / RATE).toFixed(3)} of the rate)`,
    'sandbox accepted (all / our number)': `${stats.accepted} / ${times.length}`,
    '130429 refusals (target 0)': `${refused130429} ${refused130429 === 0 ? 'OK' : 'ABOVE TARGET'}`,
    'sandbox rejections (code: n)': rejections(stats),
    'recipients with more than one message': duplicates,
    'progress at completion': JSON.stringify(progress),
    'worker processes': WORKERS,
    'worker peak RSS MB': workerPeak,
    [`CPU s during the run: worker${WORKERS > 1 ? 's' : ''} / api / sandbox / postgres / redis`]: `${cpu.join(' / ')} (wall ${(totalMs / 1000).toFixed(1)} s, ${cpus().length} cores)`,
    'CPU ms per recipient, all processes (target <= 0.7)': `${cpuPerRecipient.toFixed(2)} ${cpuPerRecipient <= 0.7 ? 'OK' : 'ABOVE TARGET'}`,
    'PostgreSQL WAL per recipient (kB)': (walBytes / 1024 / RECIPIENTS).toFixed(2),
    'Redis commands per recipient': (commands / RECIPIENTS).toFixed(2),
    'load average at the end (1/5/15 min)': load,
  });

  if (!TWO_NUMBERS) return;
  // the second part gets fresh processes: nothing of the first (its status webhooks, its sandbox counters) competes
  await platform.stop();
  await campaignTwoNumbers(ctx);
}

/**
 * Issue 22, item 2: two numbers of one account at RATE each at the same time, each at >= 0.9 of its rate (recipients /
 * start → completed), never over its rate in any 1-second window, no 130429 refusal, each recipient once. A platform
 * of its own (the same kinds of processes as the first part) whose account has two connected numbers; one group and one campaign
 * per number, both started at once; each number's figures from the sandbox's message log filtered by its id.
 */
export async function campaignTwoNumbers(ctx: BenchContext) {
  const n = TWO_NUMBERS_RECIPIENTS;
  const platform = await startPlatform(ctx, {
    name: 'campaign, two numbers',
    rate: RATE,
    workers: WORKERS,
    numbers: 2,
    messageLogLimit: (n + WARMUP_RECIPIENTS) * 4,
  });
  const { api, sandboxUrl, account, phoneIds, authz, workers } = platform;
  const name = await createApprovedTemplate(api, sandboxUrl, authz, phoneIds[0]);
  const warmedUp = await warmUp(ctx, platform, phoneIds, name, 'campaign, two numbers');
  const ids: number[] = [];
  for (const [i, phoneId] of phoneIds.entries()) {
    const groupId = await seedGroup(ctx, account.accountId, `bench number ${i + 1}`, String(16 + i), n);
    ids.push(await createCampaign(platform, phoneId, name, groupId));
  }
  await checkpoint(ctx);

  const cpuUsed = cpuMeter([...workers, platform.apiProcess, platform.sandboxProcess]);
  const statsBefore = await sandboxStats(sandboxUrl);
  const runs = await Promise.all(ids.map((id, i) => runCampaign(platform, id, `campaign, number ${i + 1}`)));
  const wallMs = spanMs(runs);
  const cpu = cpuUsed();
  const load = loadAverage();
  const stats = statsSince(statsBefore, await sandboxStats(sandboxUrl));
  const since = Math.min(...runs.map((r) => r.startedAt));
  const accepts = await Promise.all(phoneIds.map((phoneId) => acceptsOf(sandboxUrl, phoneId, since)));
  const refused130429 = Number(stats.rejected?.['130429'] ?? 0);
  const cpuPerRecipient = (cpu.total * 1000) / (n * phoneIds.length);
  const together = (Math.min(...accepts.map((a) => a.last)) - Math.max(...accepts.map((a) => a.first))) / 1000;

  const perNumber: Record<string, string | number> = {};
  for (const [i, a] of accepts.entries()) {
    const { startedAt, completedAt, progress } = runs[i];
    const rate = (n / (completedAt - startedAt)) * 1000;
    const label = `number ${i + 1}:`;
    Object.assign(perNumber, {
      [`${label} start → completed s`]: ((completedAt - startedAt) / 1000).toFixed(1),
      [`${label} start → first accept / last accept → seen completed s`]: `${((a.first - startedAt) / 1000).toFixed(2)} / ${((completedAt - a.last) / 1000).toFixed(2)}`,
      [`${label} achieved rate msg/s (recipients / total; target >= 0.9)`]: `${rate.toFixed(0)} (${(rate / RATE).toFixed(3)} of the rate) ${rate >= 0.9 * RATE ? 'OK' : 'BELOW TARGET'}`,
      [`${label} achieved rate msg/s (accepts / span)`]: `${a.spanRate.toFixed(0)} (${(a.spanRate / RATE).toFixed(3)} of the rate; ${a.times.length} accepts in ${((a.last - a.first) / 1000).toFixed(1)} s)`,
      [`${label} highest 1-second window (target <= rate)`]: `${a.window.count} ${a.window.count <= RATE ? 'OK' : 'OVER RATE'}`,
      [`${label} recipients with more than one message (target 0)`]: `${a.duplicates} ${a.duplicates === 0 ? 'OK' : 'ABOVE TARGET'}`,
      [`${label} progress at completion`]: JSON.stringify(progress),
    });
  }

  ctx.record('campaign fan-out, two numbers at once', {
    'warm-up campaigns first': warmedUp,
    'recipients per number': n,
    'configured rate per number msg/s': RATE,
    ...perNumber,
    'both numbers sending at once s (last first accept → first last accept)': together.toFixed(1),
    '130429 refusals, both numbers (target 0)': `${refused130429} ${refused130429 === 0 ? 'OK' : 'ABOVE TARGET'}`,
    'sandbox rejections (code: n)': rejections(stats),
    'worker processes': WORKERS,
    [`CPU s during the run: worker${WORKERS > 1 ? 's' : ''} / api / sandbox / postgres / redis`]: `${cpu.seconds
      .slice(0, -1)
      .map((s) => s.toFixed(1))
      .join(' / ')} (wall ${(wallMs / 1000).toFixed(1)} s, ${cpus().length} cores)`,
    'CPU ms per recipient, all processes (target <= 0.7)': `${cpuPerRecipient.toFixed(2)} ${cpuPerRecipient <= 0.7 ? 'OK' : 'ABOVE TARGET'}`,
    'load average at the end (1/5/15 min)': load,
  });
  await platform.stop();
}
