import { getRepositoryToken } from '@nestjs/typeorm';
import { ApiClient, createClient } from '@switchboard/auth';
import { startTestApp, TestApp } from '../helpers/test-app';

/** Issue 14 §3: an account's own /account grant holders list, rotate and delete its Client IDs (docs/security.md). */
describe('Client lifecycle through the API (/v1/clients)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(() => t.close());

  const authenticate = (clientId: string, clientSecret: string) =>
    t.http.post('/v1/authenticate', undefined, { headers: { clientid: clientId, clientsecret: clientSecret } });

  /** An account with a second client (with its own tokens) besides the one of createAccount. */
  async function accountWithTwoClients() {
    const a = await t.createAccount();
    const second = await createClient(t.db, a.accountId);
    const tokens = (await authenticate(second.clientId, second.clientSecret)).body as {
      token: string;
      refreshToken: string;
    };
    return { a, second: { ...second, ...tokens } };
  }

  it('an authentication that read the client just before a rotation committed is refused, not given a lasting refresh token', async () => {
    const { a, second } = await accountWithTwoClients();
    const repository = t.app.get(getRepositoryToken(ApiClient));
    const findOneBy = repository.findOneBy.bind(repository);
    let rotated: { status: number } | undefined;
    const raced = jest.spyOn(repository, 'findOneBy').mockImplementationOnce(async (where) => {
      const stale = await findOneBy(where);
      // the owner rotates the (leaked) secret between the check of the old secret and the write of the new token
      rotated = await t.http.post(`/v1/clients/${second.clientId}/rotate-secret`, undefined, { token: a.token });
      return stale;
    });
    try {
      const leaked = await authenticate(second.clientId, second.clientSecret);
      expect(rotated?.status).toBe(200);
      expect({ status: leaked.status, body: leaked.body }).toEqual({
        status: 401,
        body: { statusCode: 401, message: 'Invalid credentials', error: 'Invalid credentials' },
      });
    } finally {
      raced.mockRestore();
    }
    const [{ refresh_token_id }] = await t.db.query(`SELECT refresh_token_id FROM api_clients WHERE client_id = $1`, [
      second.clientId,
    ]);
    expect(refresh_token_id).toBeNull();
  });

  it("GET /v1/clients lists the account's clients with grants, never a secret", async () => {
    const { a, second } = await accountWithTwoClients();
    const res = await t.http.get('/v1/clients', { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        clients: [
          {
            clientId: a.clientId,
            grants: expect.arrayContaining(['/account', '/contacts']),
            created_at: expect.stringMatching(/Z$/),
          },
          { clientId: second.clientId, grants: expect.any(Array), created_at: expect.stringMatching(/Z$/) },
        ],
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(a.clientSecret);
    expect(JSON.stringify(res.body)).not.toContain(second.clientSecret);
  });

  it('POST /v1/clients/{clientId}/rotate-secret: new secret once; the old secret, access and refresh tokens refused at once', async () => {
    const { a, second } = await accountWithTwoClients();
    const res = await t.http.post(`/v1/clients/${second.clientId}/rotate-secret`, undefined, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { clientId: second.clientId, clientSecret: expect.stringMatching(/^sbs_/) },
    });

    expect(await authenticate(second.clientId, second.clientSecret)).toMatchObject({
      status: 401,
      body: { error: 'Invalid credentials' },
    });
    expect(await t.http.get('/v2/contacts', { token: second.token })).toMatchObject({
      status: 401,
      body: { message: 'Token revoked: the client secret was rotated' },
    });
    expect(await t.http.post('/v1/refreshToken', { refreshToken: second.refreshToken })).toMatchObject({
      status: 403,
      body: { message: 'Refresh token not recognized' },
    });

    const fresh = await authenticate(second.clientId, res.body.data.clientSecret);
    expect(fresh.status).toBe(200);
    expect((await t.http.get('/v2/contacts', { token: fresh.body.token })).status).toBe(200);
    // the caller's own client is untouched
    expect((await t.http.get('/v1/clients', { token: a.token })).status).toBe(200);
  });

  it('a client can rotate its own secret: its current token stops working with the rotation', async () => {
    const a = await t.createAccount();
    const res = await t.http.post(`/v1/clients/${a.clientId}/rotate-secret`, undefined, { token: a.token });
    expect(res.status).toBe(200);
    expect((await t.http.get('/v1/clients', { token: a.token })).status).toBe(401);
    expect((await authenticate(a.clientId, res.body.data.clientSecret)).status).toBe(200);
  });

  it('DELETE /v1/clients/{clientId}: its secret, access and refresh tokens are refused at once', async () => {
    const { a, second } = await accountWithTwoClients();
    expect((await t.http.get('/v2/contacts', { token: second.token })).status).toBe(200);

    const res = await t.http.delete(`/v1/clients/${second.clientId}`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Client deleted' });

    expect(await t.http.get('/v2/contacts', { token: second.token })).toMatchObject({
      status: 401,
      body: { statusCode: 401, message: 'Client not found: it was deleted' },
    });
    expect(await t.http.post('/v1/refreshToken', { refreshToken: second.refreshToken })).toMatchObject({
      status: 403,
      body: { message: 'Refresh token not recognized' },
    });
    expect(await authenticate(second.clientId, second.clientSecret)).toMatchObject({
      status: 401,
      body: { error: 'Invalid credentials' },
    });
    expect(
      (await t.db.query('SELECT count(*)::int AS n FROM api_clients WHERE client_id = $1', [second.clientId]))[0].n,
    ).toBe(0);
    expect(
      (await t.http.get('/v1/clients', { token: a.token })).body.data.clients.map(
        (c: { clientId: string }) => c.clientId,
      ),
    ).toEqual([a.clientId]);
  });

  it('the guard keeps a client row in memory until PostgreSQL notifies a change, whoever makes it', async () => {
    const { second } = await accountWithTwoClients();
    const contacts = () => t.http.get('/v2/contacts', { token: second.token });
    expect((await contacts()).status).toBe(200);

    // A grant change by plain SQL (not through the API): the trigger notifies the API at commit.
    await t.db.query(`UPDATE api_clients SET grants = '{/templates}' WHERE client_id = $1`, [second.clientId]);
    const refused = await firstWithin(1_000, contacts, (res) => res.status === 403);
    expect(refused.body).toEqual({
      statusCode: 403,
      message: 'Unauthorized to make this request',
      required_grant: '/contacts',
    });

    // The row is gone without a notice (triggers off for this transaction): the guard still answers from memory…
    await t.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`DELETE FROM api_clients WHERE client_id = $1`, [second.clientId]);
    });
    expect((await t.http.get('/v2/templates', { token: second.token })).status).toBe(200);
    // …until the notice comes.
    await t.db.query(`SELECT pg_notify('api_client_changed', $1)`, [second.clientId]);
    const deleted = await firstWithin(1_000, contacts, (res) => res.status === 401);
    expect(deleted.body).toEqual({ statusCode: 401, message: 'Client not found: it was deleted' });
  });

  it('without its listening connection the guard reads the row on every request, then listens again', async () => {
    const { a, second } = await accountWithTwoClients();
    expect((await t.http.get('/v2/contacts', { token: second.token })).status).toBe(200);
    // the connections of ChangeNotices (libs/core): the API's, and the worker's once it has used one
    const listeners = async () =>
      (
        await t.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
        )
      )[0].n as number;
    const before = await listeners();
    expect(before).toBeGreaterThanOrEqual(1);
    await t.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
    );
    await firstWithin(1_000, listeners, (n) => n === 0);

    // Nobody is told of this deletion (triggers off), and nothing is kept while not listening: refused at once.
    await t.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`DELETE FROM api_clients WHERE client_id = $1`, [second.clientId]);
    });
    expect(
      await firstWithin(
        1_000,
        () => t.http.get('/v2/contacts', { token: second.token }),
        (r) => r.status === 401,
      ),
    ).toMatchObject({ status: 401, body: { message: 'Client not found: it was deleted' } });

    // It listens again (after a second) and a change made then is heard as before.
    expect(await firstWithin(5_000, listeners, (n) => n >= before)).toBeGreaterThanOrEqual(before);
    expect((await t.http.get('/v2/contacts', { token: a.token })).status).toBe(200);
    await t.db.query(`UPDATE api_clients SET grants = '{/templates}' WHERE client_id = $1`, [a.clientId]);
    expect(
      (
        await firstWithin(
          1_000,
          () => t.http.get('/v2/contacts', { token: a.token }),
          (r) => r.status === 403,
        )
      ).status,
    ).toBe(403);
  });

  it('the last client of an account cannot be deleted through the API (409)', async () => {
    const a = await t.createAccount();
    const res = await t.http.delete(`/v1/clients/${a.clientId}`, { token: a.token });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      statusCode: 409,
      message: expect.stringMatching(/^The last client of an account cannot be deleted/),
    });
    expect((await t.http.get('/v1/clients', { token: a.token })).status).toBe(200);
  });

  it("another account's client is a 404 for every verb, and nothing changes", async () => {
    const { a, second } = await accountWithTwoClients();
    const b = await t.createAccount();
    const [before] = await t.db.query('SELECT secret_hash FROM api_clients WHERE client_id = $1', [second.clientId]);
    for (const res of [
      await t.http.post(`/v1/clients/${second.clientId}/rotate-secret`, undefined, { token: b.token }),
      await t.http.delete(`/v1/clients/${second.clientId}`, { token: b.token }),
      await t.http.delete(`/v1/clients/${a.clientId}`, { token: b.token }),
      await t.http.post('/v1/clients/sbc_unknown/rotate-secret', undefined, { token: b.token }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Client not found' });
    }
    expect(await t.db.query('SELECT secret_hash FROM api_clients WHERE client_id = $1', [second.clientId])).toEqual([
      before,
    ]);
    expect(
      (await t.http.get('/v1/clients', { token: b.token })).body.data.clients.map(
        (c: { clientId: string }) => c.clientId,
      ),
    ).toEqual([b.clientId]);
    expect((await t.http.get('/v2/contacts', { token: second.token })).status).toBe(200);
  });

  it('needs the /account grant', async () => {
    const a = await t.createAccount();
    const limited = await createClient(t.db, a.accountId, ['/contacts']);
    const token = (await authenticate(limited.clientId, limited.clientSecret)).body.token;
    for (const res of [
      await t.http.get('/v1/clients', { token }),
      await t.http.post(`/v1/clients/${a.clientId}/rotate-secret`, undefined, { token }),
      await t.http.delete(`/v1/clients/${a.clientId}`, { token }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        statusCode: 403,
        message: 'Unauthorized to make this request',
        required_grant: '/account',
      });
    }
  });

  it('a client granted /account alone cannot rotate or delete a client holding grants it lacks (no taking over the full client)', async () => {
    const a = await t.createAccount(); // its client holds every grant
    const partner = await createClient(t.db, a.accountId, ['/account']);
    const peer = await createClient(t.db, a.accountId, ['/account']);
    const token = (await authenticate(partner.clientId, partner.clientSecret)).body.token;
    for (const [res, action] of [
      [await t.http.post(`/v1/clients/${a.clientId}/rotate-secret`, undefined, { token }), 'rotate the secret of'],
      [await t.http.delete(`/v1/clients/${a.clientId}`, { token }), 'delete'],
    ] as const) {
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(
        `This client cannot ${action} ${a.clientId}: it holds grants this client lacks (${res.body.missing_grants.join(', ')})`,
      );
      expect(res.body.missing_grants).toEqual(expect.arrayContaining(['/send-message', '/contacts', '/workflows']));
      expect(res.body.missing_grants).not.toContain('/account');
    }
    // the full client is untouched: its token still works
    expect((await t.http.get('/v2/contacts', { token: a.token })).status).toBe(200);
    // a client with no more grants than the caller's: allowed
    expect((await t.http.post(`/v1/clients/${peer.clientId}/rotate-secret`, undefined, { token })).status).toBe(200);
    expect((await t.http.delete(`/v1/clients/${peer.clientId}`, { token })).status).toBe(200);
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/clients', '/v1/clients/{clientId}/rotate-secret', '/v1/clients/{clientId}']),
    );
    expect(doc.paths['/v1/clients/{clientId}'].delete).toBeDefined();
  });
});

/** Calls `request` until `done` holds for its answer (a notice from PostgreSQL arrives within milliseconds). */
async function firstWithin<T>(ms: number, request: () => Promise<T>, done: (res: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await request();
    if (done(res) || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
