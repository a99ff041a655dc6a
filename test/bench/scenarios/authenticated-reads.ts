import { join } from 'node:path';
import { BenchContext, DIST } from '../bench-context';
import { load } from '../load';

/**
 * ARCHITECTURE.md target: authenticated reads (GET /v2/contacts of an account with 100,000 contacts) reach at least 25% of a bare Fastify hello-world's requests per
 * second, with p99 under 20 ms at 200 concurrent connections.
 */
export async function authenticatedReads(
  ctx: BenchContext,
  path = process.env.BENCH_READ_PATH ?? '/v2/contacts?page=1&pageSize=20',
) {
  const hello = await ctx.startProcess(
    'hello-world',
    join(DIST, 'test/bench/hello-world.js'),
    { PORT: '3999' },
    'http://127.0.0.1:3999/',
  );
  const baseline = await load('http://127.0.0.1:3999/');
  hello.kill('SIGTERM');

  const port = '3998';
  const api = await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { PORT: port },
    `http://127.0.0.1:${port}/health`,
  );
  const account = await ctx.createAccount();
  // The account holds 100,000 contacts, as a busy shop would.
  await ctx.db.query(
    `INSERT INTO contacts (account_id, name, contact_number, email, created_at)
     SELECT $1, 'Customer ' || g, (4915100000000 + g)::text, 'customer' || g || '@example.com', now() - g * interval '1 second'
       FROM generate_series(1, 100000) g`,
    [account.accountId],
  );
  await ctx.db.query('VACUUM ANALYZE contacts');
  const auth = await fetch(`http://127.0.0.1:${port}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };
  const reads = await load(`http://127.0.0.1:${port}${path}`, { headers: { authorization: token } });
  api.kill('SIGTERM');

  const ratio = reads.rps / baseline.rps;
  ctx.record('authenticated reads', {
    'hello-world req/s (200 conns)': baseline.rps,
    [`GET ${path} req/s (200 conns)`]: reads.rps,
    'ratio (target >= 0.25)': `${ratio.toFixed(2)} ${ratio >= 0.25 ? 'OK' : 'BELOW TARGET'}`,
    'p50 latency ms': reads.p50,
    'p99 latency ms (target < 20)': `${reads.p99} ${reads.p99 < 20 ? 'OK' : 'ABOVE TARGET'}`,
    'errors / non-2xx': `${reads.errors} / ${reads.non2xx}`,
  });
}
