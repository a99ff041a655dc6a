import { join } from 'node:path';
import { BenchContext, DIST, freePort } from '../bench-context';
import { load, LoadResult } from '../load';

const ROUNDS = 3;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const verdict = (ok: boolean) => (ok ? 'OK' : 'NOT MET');

/**
 * Issue 22 target: GET /v2/contacts (an account with 100,000 contacts), with auth, grants, rate limit and validation,
 * serves at least as many requests per second as a bare Fastify + `pg` server running the same SQL (test/bench/bare-contacts.ts)
 * at 200 connections, and at a steady 1,000 req/s a p99 at most 1.3× the bare server's. Runs alternate between the two.
 */
export async function authenticatedReads(
  ctx: BenchContext,
  path = process.env.BENCH_READ_PATH ?? '/v2/contacts?page=1&pageSize=20',
) {
  const account = await ctx.createAccount();
  // The account holds 100,000 contacts, as a busy shop would.
  await ctx.db.query(
    `INSERT INTO contacts (account_id, name, contact_number, email, created_at)
     SELECT $1, 'Customer ' || g, (4915100000000 + g)::text, 'customer' || g || '@example.com', now() - g * interval '1 second'
       FROM generate_series(1, 100000) g`,
    [account.accountId],
  );
  await ctx.db.query('VACUUM ANALYZE contacts');

  const [apiPort, barePort] = [String(await freePort()), String(await freePort())];
  const api = await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { PORT: apiPort },
    `http://127.0.0.1:${apiPort}/health`,
  );
  const bare = await ctx.startProcess(
    'bare',
    join(DIST, 'test/bench/bare-contacts.js'),
    { PORT: barePort, BARE_ACCOUNT_ID: account.accountId },
    `http://127.0.0.1:${barePort}/health`,
  );
  const auth = await fetch(`http://127.0.0.1:${apiPort}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };
  const oursUrl = `http://127.0.0.1:${apiPort}${path}`;
  const bareUrl = `http://127.0.0.1:${barePort}${path}`;
  const headers = { authorization: token };
  const [oursBody, bareBody] = await Promise.all([
    fetch(oursUrl, { headers }).then((r) => r.text()),
    fetch(bareUrl).then((r) => r.text()),
  ]);

  const ours = (options: Parameters<typeof load>[1] = {}) => load(oursUrl, { headers, ...options });
  const theirs = (options: Parameters<typeof load>[1] = {}) => load(bareUrl, options);
  await ours({ connections: 50, seconds: 3 }); // warm-up: JIT, pools, prepared statements
  await theirs({ connections: 50, seconds: 3 });

  const oursRuns: LoadResult[] = [];
  const bareRuns: LoadResult[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // alternate which goes first, so neither always meets the machine after the other's load
    if (round % 2 === 0) {
      oursRuns.push(await ours());
      bareRuns.push(await theirs());
    } else {
      bareRuns.push(await theirs());
      oursRuns.push(await ours());
    }
  }
  const steadyBare = await theirs({ rate: 1000 });
  const steadyOurs = await ours({ rate: 1000 });
  api.kill('SIGTERM');
  bare.kill('SIGTERM');

  const oursRps = median(oursRuns.map((r) => r.rps));
  const bareRps = median(bareRuns.map((r) => r.rps));
  const ratio = oursRps / bareRps;
  const p99Ratio = steadyOurs.p99 / steadyBare.p99;
  const errors = [...oursRuns, ...bareRuns, steadyBare, steadyOurs].reduce((n, r) => n + r.errors + r.non2xx, 0);
  ctx.record('authenticated reads', {
    'same response body as bare': oursBody === bareBody ? 'yes' : `NO\n    ours: ${oursBody}\n    bare: ${bareBody}`,
    [`GET ${path} req/s, 200 conns (${ROUNDS} rounds)`]: oursRuns.map((r) => r.rps).join(' / '),
    [`bare Fastify + pg req/s, 200 conns`]: bareRuns.map((r) => r.rps).join(' / '),
    'per-round ratio': oursRuns.map((r, i) => (r.rps / bareRuns[i].rps).toFixed(2)).join(' / '),
    'median ratio (target >= 1.0)': `${ratio.toFixed(2)} ${verdict(ratio >= 1)}`,
    'p50 / p99 ms, 200 conns (ours)': `${median(oursRuns.map((r) => r.p50))} / ${median(oursRuns.map((r) => r.p99))}`,
    'p50 / p99 ms, 200 conns (bare)': `${median(bareRuns.map((r) => r.p50))} / ${median(bareRuns.map((r) => r.p99))}`,
    'at 1,000 req/s: achieved (ours / bare)': `${steadyOurs.rps} / ${steadyBare.rps}`,
    'at 1,000 req/s: p99 ms (ours / bare)': `${steadyOurs.p99} / ${steadyBare.p99}`,
    'p99 ratio (target <= 1.3)': `${p99Ratio.toFixed(2)} ${verdict(p99Ratio <= 1.3)}`,
    'errors + non-2xx (all runs)': errors,
  });
}
