import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { BenchContext, DIST } from '../bench-context';
import { freePort } from '../../../scripts/free-ports';
import { cpuSeconds } from '../bench-platform';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
/** ARCHITECTURE/issue target: 100,000 rows imported in under 20 s, worker peak RSS under 300 MB. */
const TARGET_SECONDS = 20;
const TARGET_RSS_MB = 300;

function peakRssMb(pid: number | undefined): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** A CSV of `rows` contacts (name, email, a custom column), with a bad number and a repeated number every 1,000 rows. */
export function importCsv(rows: number): Buffer {
  const lines = ['Phone,Name,Email,City'];
  for (let i = 0; i < rows; i++) {
    if (i % 1000 === 999) lines.push(`bad-${i},Broken ${i},,Nowhere`);
    else if (i % 1000 === 998) lines.push(`+49 151 ${String(30000000 + i - 1)},Again ${i},,Berlin`);
    else lines.push(`+49 151 ${String(30000000 + i)},"Customer, ${i}",c${i}@example.com,Berlin`);
  }
  return Buffer.from(lines.join('\r\n') + '\r\n');
}

/**
 * `npm run bench -- import`: the API and worker as separate processes; one CSV of 100,000 rows (0.2 % rejected) uploaded
 * to POST /v2/contacts/imports into a group, timed from the upload to `completed`; the worker's peak RSS (VmHWM).
 */
export async function contactImport(ctx: BenchContext) {
  const apiPort = String(await freePort());
  const api = `http://127.0.0.1:${apiPort}`;
  const apiProcess = await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { PORT: apiPort },
    `${api}/health`,
  );
  const worker = await ctx.startProcess('worker', join(DIST, 'apps/worker/src/main.js'));
  const account = await ctx.createAccount();
  const auth = await fetch(`${api}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };
  const group = await fetch(`${api}/v2/contact-groups`, {
    method: 'POST',
    headers: { authorization: token, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench import' }),
  }).then((r) => r.json() as Promise<{ data: { group: { group_id: number } } }>);
  const file = importCsv(ROWS);
  // warm-up: a 10-row import, which also waits for the worker to have booted
  const warm = new FormData();
  warm.append('file', new Blob([importCsv(10)]), 'warm.csv');
  const warmed = (await fetch(`${api}/v2/contacts/imports`, {
    method: 'POST',
    headers: { authorization: token },
    body: warm,
  }).then((r) => r.json())) as { data: { import_id: number } };
  for (let i = 0; ; i++) {
    const r = await fetch(`${api}/v2/contacts/imports/${warmed.data.import_id}`, { headers: { authorization: token } });
    if (((await r.json()) as { data: { status: string } }).data.status === 'completed') break;
    if (i > 1200) throw new Error('the warm-up import did not complete within 120 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const baseRss = peakRssMb(worker.pid);
  /** CPU seconds of the worker, the API and the PostgreSQL backends serving this benchmark's database */
  const cpu = async () => {
    const backends: Array<{ pid: number }> = await ctx.db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return {
      worker: cpuSeconds(worker.pid) ?? 0,
      api: cpuSeconds(apiProcess.pid) ?? 0,
      postgres: new Map(backends.map((b) => [b.pid, cpuSeconds(b.pid) ?? 0])),
    };
  };
  const load = loadavg()[0];
  const cpuBefore = await cpu();

  const started = Date.now();
  const form = new FormData();
  form.append('mapping', JSON.stringify({ number: 'Phone', name: 'Name', email: 'Email', custom: { city: 'City' } }));
  form.append('group_ids', JSON.stringify([group.data.group.group_id]));
  form.append('file', new Blob([file]), 'bench.csv');
  const res = await fetch(`${api}/v2/contacts/imports`, {
    method: 'POST',
    headers: { authorization: token },
    body: form,
  });
  const accepted = (await res.json()) as { data: { import_id: number } };
  if (res.status !== 202) throw new Error(`upload refused: ${res.status} ${JSON.stringify(accepted)}`);
  const uploadedMs = Date.now() - started;
  let state: Record<string, unknown> = {};
  for (;;) {
    const r = await fetch(`${api}/v2/contacts/imports/${accepted.data.import_id}`, {
      headers: { authorization: token },
    });
    state = ((await r.json()) as { data: Record<string, unknown> }).data;
    if (state.status === 'completed' || state.status === 'failed') break;
    if (Date.now() - started > 300_000) throw new Error(`import still ${String(state.status)} after 300 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (Date.now() - started) / 1000;
  const rss = peakRssMb(worker.pid);
  const cpuAfter = await cpu();
  let postgresCpu = 0;
  for (const [pid, seconds] of cpuAfter.postgres) postgresCpu += seconds - (cpuBefore.postgres.get(pid) ?? 0);
  ctx.record('import', {
    rows: ROWS,
    'file size': `${(file.length / 1e6).toFixed(1)} MB`,
    status: String(state.status),
    'created / failed': `${String(state.created)} / ${String(state.failed)}`,
    'upload (202)': `${uploadedMs} ms`,
    'upload to completed': `${seconds.toFixed(1)} s (target < ${TARGET_SECONDS} s: ${seconds < TARGET_SECONDS ? 'met' : 'MISSED'})`,
    'rows/s': Math.round(ROWS / seconds),
    'worker peak RSS': `${rss} MB (after boot and warm-up ${baseRss} MB; target < ${TARGET_RSS_MB} MB: ${rss !== null && rss < TARGET_RSS_MB ? 'met' : 'MISSED'})`,
    'CPU s: worker / api / postgres': `${(cpuAfter.worker - cpuBefore.worker).toFixed(1)} / ${(cpuAfter.api - cpuBefore.api).toFixed(1)} / ${postgresCpu.toFixed(1)} (this database's backends)`,
    'load average before': load.toFixed(1),
  });
}
