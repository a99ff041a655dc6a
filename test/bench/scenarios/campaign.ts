import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { BenchContext } from '../bench-context';
import { cpuMeter, startPlatform } from '../bench-platform';
import { createApprovedTemplate, postJson as post } from '../helpers';

const RECIPIENTS = Number(process.env.BENCH_CAMPAIGN_RECIPIENTS ?? 100_000);
const RATE = Number(process.env.BENCH_CAMPAIGN_RATE ?? 1000);
/** worker processes (they share the per-number pacer through Redis) */
const WORKERS = Number(process.env.BENCH_CAMPAIGN_WORKERS ?? 1);

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

/**
 * Issue 22's target (ARCHITECTURE.md had 110 s): at 1,000 msg/s configured, a 100,000-recipient campaign completes at
 * 0.97 of the rate or better (≤ 103 s) on a 2-core machine against the sandbox, with no 130429 refusal and never more
 * than the rate in any 1-second window. Sandbox, API and worker run as separate
 * processes; the sandbox enforces the same limit (error 130429) and batches its status webhooks.
 */
export async function campaignFanout(ctx: BenchContext) {
  const platform = await startPlatform(ctx, {
    name: 'campaign',
    rate: RATE,
    workers: WORKERS,
    messageLogLimit: RECIPIENTS * 2,
  });
  const { api, sandboxUrl, account, phoneId, authz, workers } = platform;
  const name = await createApprovedTemplate(api, sandboxUrl, authz, phoneId);

  // the audience: RECIPIENTS contacts in one group, seeded in one statement
  const seedStarted = Date.now();
  const [g] = await ctx.db.query(`INSERT INTO contact_groups (account_id, name) VALUES ($1, 'bench') RETURNING id`, [
    account.accountId,
  ]);
  await ctx.db.query(
    `WITH c AS (INSERT INTO contacts (account_id, contact_number, name)
                SELECT $1, '4915' || lpad(i::text, 8, '0') || '1', 'Member ' || i FROM generate_series(1, $2::int) i RETURNING id)
     INSERT INTO contact_group_members (group_id, contact_id) SELECT $3, id FROM c`,
    [account.accountId, RECIPIENTS, g.id],
  );
  await ctx.db.query('ANALYZE contacts; ANALYZE contact_group_members');
  const seedMs = Date.now() - seedStarted;

  const campaign = await post(
    `${api}/v2/campaigns`,
    {
      name: 'bench',
      messagingPhoneId: phoneId,
      templateName: name,
      variables: { name: 'friend' },
      group_ids: [Number(g.id)],
    },
    authz,
  );
  if (campaign.status !== 201) throw new Error(`campaign create failed: ${JSON.stringify(campaign.body)}`);
  const id = campaign.body.data.campaign_id;

  const cpuUsed = cpuMeter([...workers, platform.apiProcess, platform.sandboxProcess]);
  const started = Date.now();
  const start = await post(`${api}/v2/campaigns/${id}/start`, undefined, authz);
  if (start.status !== 200) throw new Error(`start failed: ${JSON.stringify(start.body)}`);
  let progress: any;
  let lastLog = 0;
  for (;;) {
    const res = (await (await fetch(`${api}/v2/campaigns/${id}`, { headers: authz })).json()) as any;
    progress = res.data.progress;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      console.error(`[campaign] ${((Date.now() - started) / 1000).toFixed(0)} s: ${JSON.stringify(progress)}`);
    }
    if (res.data.status === 'completed') break;
    if (Date.now() - started > 600_000)
      throw new Error(`campaign not completed after 600 s: ${JSON.stringify(progress)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const totalMs = Date.now() - started;
  const workerPeak = workers.map((w) => peakRssMb(w.pid) ?? 'n/a').join(' / ');
  // worker(s) / api / sandbox / postgres / redis (no Temporal server here)
  const cpu = cpuUsed()
    .seconds.slice(0, -1)
    .map((s) => s.toFixed(1));
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

  const stats = (await (await fetch(`${sandboxUrl}/_sandbox/stats`)).json()) as any;
  const log = (await (await fetch(`${sandboxUrl}/_sandbox/messages?phone_number_id=${phoneId}`)).json()) as {
    data: Array<{ to: string; acceptedAt: string }>;
  };
  const times = log.data.map((m) => Date.parse(m.acceptedAt));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const window = maxInWindow(times);
  const perRecipient = new Map<string, number>();
  for (const m of log.data) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
  const duplicates = [...perRecipient.values()].filter((n) => n > 1).length;
  const sendSeconds = (last - first) / 1000;
  const spanRate = log.data.length / Math.max(sendSeconds, 0.001);
  const totalRate = (RECIPIENTS / totalMs) * 1000;
  // issue 22: 0.97 of the rate from start to completion
  const targetSeconds = RECIPIENTS / (0.97 * RATE);
  const lowest = minInWindow(times);
  const refused130429 = Number(stats.rejected?.['130429'] ?? 0);
  const cpuPerRecipient = (cpu.reduce((a, b) => a + Number(b), 0) * 1000) / RECIPIENTS;
  const rejected =
    Object.entries(stats.rejected ?? {})
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ') || '0';

  ctx.record('campaign fan-out', {
    recipients: RECIPIENTS,
    'configured rate msg/s': RATE,
    'seed (generate_series) ms': seedMs,
    [`start → completed s (target <= ${targetSeconds.toFixed(0)})`]: `${(totalMs / 1000).toFixed(1)} ${totalMs <= targetSeconds * 1000 ? 'OK' : 'ABOVE TARGET'}`,
    'first → last platform accept s': sendSeconds.toFixed(1),
    'achieved rate msg/s (accepts / span)': `${spanRate.toFixed(0)} (${(spanRate / RATE).toFixed(3)} of the rate)`,
    'achieved rate msg/s (recipients / total)': `${totalRate.toFixed(0)} (${(totalRate / RATE).toFixed(3)} of the rate; target >= 0.97) ${totalRate >= 0.97 * RATE ? 'OK' : 'BELOW TARGET'}`,
    'highest 1-second window (target <= rate)': `${window.count} ${window.count <= RATE ? 'OK' : 'OVER RATE'}`,
    'lowest 1-second window while sending': `${lowest} (${(lowest / RATE).toFixed(3)} of the rate)`,
    'sandbox accepted (all / our number)': `${stats.accepted} / ${log.data.length}`,
    '130429 refusals (target 0)': `${refused130429} ${refused130429 === 0 ? 'OK' : 'ABOVE TARGET'}`,
    'sandbox rejections (code: n)': rejected,
    'recipients with more than one message': duplicates,
    'progress at completion': JSON.stringify(progress),
    'worker processes': WORKERS,
    'worker peak RSS MB': workerPeak,
    [`CPU s during the run: worker${WORKERS > 1 ? 's' : ''} / api / sandbox / postgres / redis`]: `${cpu.join(' / ')} (wall ${(totalMs / 1000).toFixed(1)} s, ${cpus().length} cores)`,
    'CPU ms per recipient, all processes (target <= 0.7)': `${cpuPerRecipient.toFixed(2)} ${cpuPerRecipient <= 0.7 ? 'OK' : 'ABOVE TARGET'}`,
    'load average at the end (1/5/15 min)': load,
  });
}
