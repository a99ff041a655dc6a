import { createClient } from '@switchboard/auth';
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

  it('is documented in the OpenAPI document', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/clients', '/v1/clients/{clientId}/rotate-secret', '/v1/clients/{clientId}']),
    );
    expect(doc.paths['/v1/clients/{clientId}'].delete).toBeDefined();
  });
});
