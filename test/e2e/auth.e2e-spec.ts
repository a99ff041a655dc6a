import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** SPEC §4 "Authentication endpoints", §5 and the auth rows of §7. */
describe('Authentication', () => {
  let t: TestApp;
  let account: TestAccount;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    account = await t.createAccount();
  });

  const authenticate = (clientid?: string, clientsecret?: string) => {
    const headers: Record<string, string> = {};
    if (clientid !== undefined) headers.clientid = clientid;
    if (clientsecret !== undefined) headers.clientsecret = clientsecret;
    return t.http.post('/v1/authenticate', undefined, { headers });
  };

  describe('POST /v1/authenticate', () => {
    it('returns a token pair for valid credentials', async () => {
      const res = await authenticate(account.clientId, account.clientSecret);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['refreshToken', 'token']);
      const claims = JSON.parse(Buffer.from(res.body.token.split('.')[1], 'base64url').toString());
      expect(claims.exp - claims.iat).toBe(3600);
      const refreshClaims = JSON.parse(Buffer.from(res.body.refreshToken.split('.')[1], 'base64url').toString());
      expect(refreshClaims.exp - refreshClaims.iat).toBe(7 * 24 * 3600);
    });

    it.each([
      ['no headers', undefined, undefined],
      ['no clientsecret', 'sbc_x', undefined],
      ['no clientid', undefined, 'sbs_x'],
    ])('answers 401 Missing credentials with %s', async (_, id, secret) => {
      const res = await authenticate(id, secret);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ statusCode: 401, message: 'Missing credentials', error: 'Missing credentials' });
    });

    it('answers 401 Invalid credentials for a wrong secret or an unknown client', async () => {
      for (const [id, secret] of [
        [account.clientId, `${account.clientSecret}x`],
        ['sbc_unknown', account.clientSecret],
      ]) {
        const res = await authenticate(id, secret);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ statusCode: 401, message: 'Invalid credentials', error: 'Invalid credentials' });
      }
    });

    it('stores only a hash of the client secret', async () => {
      const [row] = await t.db.query('SELECT secret_hash FROM api_clients WHERE client_id = $1', [account.clientId]);
      expect(row.secret_hash).not.toContain(account.clientSecret);
      expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  describe('access tokens', () => {
    it('accepts the token as issued and with a Bearer prefix', async () => {
      expect((await t.http.get('/account/get', { token: account.token })).status).toBe(200);
      expect((await t.http.get('/account/get', { token: `Bearer ${account.token}` })).status).toBe(200);
    });

    it('answers 401 without a token, with a tampered one, and with a refresh token', async () => {
      const missing = await t.http.get('/account/get');
      expect(missing.status).toBe(401);
      expect(missing.body.message).toBe('jwt must be provided');

      const [header, payload, signature] = account.token.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, acc: '999999' })).toString('base64url');
      const tampered = await t.http.get('/account/get', { token: `${header}.${forged}.${signature}` });
      expect(tampered.status).toBe(401);
      expect(tampered.body.message).toBe('invalid signature');

      const refreshAsAccess = await t.http.get('/account/get', { token: account.refreshToken });
      expect(refreshAsAccess.status).toBe(401);
    });

    it('answers 401 jwt expired once the access token has expired', async () => {
      // JWT times are whole seconds: a 1-s token lives 0 to 1 s, so 3 s, and the wait runs until its exp has passed
      const shortLived = await startTestApp({ ACCESS_TOKEN_TTL_SECONDS: '3' });
      try {
        const acct = await shortLived.createAccount();
        expect((await shortLived.http.get('/account/get', { token: acct.token })).status).toBe(200);
        const { exp, iat } = JSON.parse(Buffer.from(acct.token.split('.')[1], 'base64url').toString());
        expect(exp - iat).toBe(3);
        await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 100));
        const res = await shortLived.http.get('/account/get', { token: acct.token });
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ message: 'jwt expired' });
      } finally {
        await shortLived.close();
      }
    });
  });

  describe('POST /v1/refreshToken', () => {
    it('answers 401 Refresh token required without a token', async () => {
      for (const body of [undefined, {}, { refreshToken: '' }]) {
        const res = await t.http.post('/v1/refreshToken', body);
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ message: 'Refresh token required' });
      }
    });

    it('answers 403 Invalid refresh token for a token that is not ours or not a refresh token', async () => {
      for (const refreshToken of ['garbage', account.token]) {
        const res = await t.http.post('/v1/refreshToken', { refreshToken });
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ message: 'Invalid refresh token' });
      }
    });

    it('rotates: the new pair works, the old refresh token is no longer recognized', async () => {
      const first = await t.http.post('/v1/refreshToken', { refreshToken: account.refreshToken });
      expect(first.status).toBe(200);
      expect(first.body.refreshToken).not.toBe(account.refreshToken);
      expect((await t.http.get('/account/get', { token: first.body.token })).status).toBe(200);

      const replay = await t.http.post('/v1/refreshToken', { refreshToken: account.refreshToken });
      expect(replay.status).toBe(403);
      expect(replay.body).toMatchObject({ message: 'Refresh token not recognized' });

      const second = await t.http.post('/v1/refreshToken', { refreshToken: first.body.refreshToken });
      expect(second.status).toBe(200);
    });

    it('only one of two concurrent refreshes with the same token wins', async () => {
      const results = await Promise.all(
        [1, 2, 3].map(() => t.http.post('/v1/refreshToken', { refreshToken: account.refreshToken })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 403, 403]);
    });

    it('a new authentication replaces the previous refresh token', async () => {
      const again = await authenticate(account.clientId, account.clientSecret);
      expect(again.status).toBe(200);
      const old = await t.http.post('/v1/refreshToken', { refreshToken: account.refreshToken });
      expect(old.status).toBe(403);
      expect(old.body).toMatchObject({ message: 'Refresh token not recognized' });
      expect((await t.http.post('/v1/refreshToken', { refreshToken: again.body.refreshToken })).status).toBe(200);
    });
  });

  describe('DELETE /v1/logout/{refreshToken}', () => {
    it('revokes the refresh token but not the access tokens already issued', async () => {
      const res = await t.http.delete(`/v1/logout/${account.refreshToken}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'Logged out successfully' });

      const refresh = await t.http.post('/v1/refreshToken', { refreshToken: account.refreshToken });
      expect(refresh.status).toBe(403);
      expect(refresh.body).toMatchObject({ message: 'Refresh token not recognized' });
      expect((await t.http.get('/account/get', { token: account.token })).status).toBe(200);
    });

    it('answers 403 Invalid refresh token for a token that is not a refresh token', async () => {
      const res = await t.http.delete('/v1/logout/not-a-token');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ message: 'Invalid refresh token' });
    });
  });
});
