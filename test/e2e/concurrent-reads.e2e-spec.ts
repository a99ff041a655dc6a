import { Client } from 'pg';
import type { DrainingFastifyAdapter } from '../../apps/api/src/http-drain';
import { takePgProblems } from '../helpers/pg-guard';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * Reads under load share the connection pool, never one client: pg (the guard in test/helpers/pg-guard.ts) fails a
 * test that calls client.query() on a client that is already executing one, or whose query is cut off at shutdown.
 */
describe('Concurrent reads', () => {
  let t: TestApp;
  let account: TestAccount;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    account = await t.createAccount();
    await t.db.query(
      `INSERT INTO contacts (account_id, name, contact_number) SELECT $1, 'Contact ' || n, (4915100000000 + n)::text FROM generate_series(1, 300) n`,
      [account.accountId],
    );
  });
  afterAll(() => t.close());

  it('the guard sees one client used by two queries at once', async () => {
    const client = new Client({ connectionString: t.config.DATABASE_URL });
    await client.connect();
    try {
      await Promise.all([client.query('SELECT pg_sleep(0.01)'), client.query('SELECT 1')]);
    } finally {
      await client.end();
    }
    expect(takePgProblems()).toEqual([
      expect.stringContaining('client.query() while the client is already executing a query'),
    ]);
  });

  it('200 concurrent authenticated reads (contacts pages, searches, groups, templates, account) all answer 200', async () => {
    const paths = [
      '/v2/contacts?pageSize=50',
      '/v2/contacts?search=Contact%201',
      '/v2/contacts?phone=4915100000007',
      '/v2/contact-groups',
      '/v2/templates',
      '/templates/get-templates',
      '/account/get',
    ];
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => t.http.get(paths[i % paths.length], { token: account.token })),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    expect(responses[0].body.data.total).toBe(300);
  });

  it('50 concurrent authentications answer 200', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        t.http.post('/v1/authenticate', undefined, {
          headers: { clientid: account.clientId, clientsecret: account.clientSecret },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
  });

  it('closing the API while reads are in flight: every request answers (200, or 503 once closing), no query is cut off', async () => {
    const own = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', DATABASE_POOL_SIZE: '2' });
    const reader = await own.createAccount();
    await own.db.query(
      `INSERT INTO contacts (account_id, name, contact_number) SELECT $1, 'Contact ' || n, (4916100000000 + n)::text FROM generate_series(1, 2000) n`,
      [reader.accountId],
    );
    // contacts locked: every read waits in PostgreSQL (or for a pool connection) when the close begins
    const locker = new Client({ connectionString: own.config.DATABASE_URL });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE contacts IN ACCESS EXCLUSIVE MODE');
    const started = Date.now();
    const inFlight = Array.from({ length: 120 }, (_, i) =>
      own.http
        .get(i % 2 ? '/v2/contacts?pageSize=100&search=Contact' : '/v2/contacts?pageSize=100', { token: reader.token })
        .then((r) => r.status)
        .catch((error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message),
    );
    // a client that gives up: its handler still runs (and queries) after the client left
    const departed = new AbortController();
    const gone = fetch(`${own.url}/v2/contacts?pageSize=100&search=Contact`, {
      headers: { authorization: reader.token },
      signal: departed.signal,
    }).catch(() => 'aborted');
    const drain = (own.app.getHttpAdapter() as unknown as DrainingFastifyAdapter).drain;
    for (const deadline = Date.now() + 30_000; drain.inFlight < 121 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 5));
    expect(drain.inFlight).toBe(121);
    departed.abort();
    const closed = own.app.close(); // drains HTTP first (handlers of departed clients too), then closes the pool
    await new Promise((r) => setTimeout(r, 200));
    expect(drain.inFlight).toBe(121); // still waiting for every handler, the departed client's too
    await locker.query('COMMIT');
    await locker.end();
    await closed;
    const statuses = await Promise.all(inFlight);
    await gone;
    const problems = takePgProblems();
    await own.close();
    expect(problems).toEqual([]);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
