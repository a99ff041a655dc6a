import { SESSION_COOKIE } from '@switchboard/auth';
import { asUser, consoleSession, createConsoleUser, signIn } from '../helpers/console';
import { startTestApp, TestApp } from '../helpers/test-app';

/** Console sign-in (docs/console.md): cookie session kept server-side, CSRF defence, lockout, role → grants. */
describe('Console sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', CONSOLE_SECURE_COOKIE: 'true' });
  });
  afterAll(() => t.close());

  it('a session cookie that is not percent-encoded text is no session (401), not a 500', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await fetch(`${t.url}/v1/webhook-endpoints`, { method, headers: { cookie: 'sb_session=%' } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).message).toBe('jwt must be provided');
    }
  });

  it('signs in with email and password: an httpOnly, SameSite=Lax, Secure session cookie; GET /console/me names the person', async () => {
    const account = await t.createAccount();
    const user = await createConsoleUser(t, account.accountId, 'marketer');
    const session = await signIn(t, user.email.toUpperCase(), user.password);
    expect(session.setCookie).toMatch(
      new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; Path=/; Max-Age=43200; HttpOnly; SameSite=Lax; Secure$`),
    );

    const me = await t.http.get('/console/me', asUser(session));
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      email: user.email,
      role: 'marketer',
      accountId: Number(account.accountId),
      messagingPhoneIds: [account.messagingPhoneId],
    });
    expect(me.body.data.grants).not.toContain('/account');
    expect(me.body.data.grants).toContain('/workflows');
    // the cookie value is not stored: only its hash
    const [row] = await t.db.query('SELECT id FROM console_sessions');
    expect(session.cookie).not.toContain(row.id);
  });

  it('unknown email and wrong password get the same 401', async () => {
    const account = await t.createAccount();
    const user = await createConsoleUser(t, account.accountId);
    const headers = { 'x-switchboard-csrf': '1' };
    const wrong = await t.http.post(
      '/console/session',
      { email: user.email, password: 'not the password' },
      { headers },
    );
    const unknown = await t.http.post(
      '/console/session',
      { email: 'nobody@example.com', password: 'not the password' },
      { headers },
    );
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.message).toBe('Invalid email or password');
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  it('sign-out ends the session server-side: the same cookie is refused afterwards', async () => {
    const account = await t.createAccount();
    const session = await consoleSession(t, account.accountId);
    const out = await t.http.delete('/console/session', asUser(session));
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=; Path=/; Max-Age=0`));
    const after = await t.http.get('/console/me', asUser(session));
    expect(after.status).toBe(401);
    expect(after.body.message).toBe('Not signed in (the session ended or expired)');
  });

  it('a password change ends every session of the person', async () => {
    const account = await t.createAccount();
    const user = await createConsoleUser(t, account.accountId);
    const first = await signIn(t, user.email, user.password);
    const second = await signIn(t, user.email, user.password);
    const changed = await t.http.put(
      '/console/password',
      { currentPassword: user.password, newPassword: 'a brand new passphrase' },
      asUser(first),
    );
    expect(changed.status).toBe(200);
    expect((await t.http.get('/console/me', asUser(first))).status).toBe(401);
    expect((await t.http.get('/console/me', asUser(second))).status).toBe(401);
    expect(
      (
        await t.http.post(
          '/console/session',
          { email: user.email, password: user.password },
          { headers: { 'x-switchboard-csrf': '1' } },
        )
      ).status,
    ).toBe(401);
    await signIn(t, user.email, 'a brand new passphrase');
  });

  it('CSRF: a cross-site form post with the cookie is refused, as is a JSON request without the right token', async () => {
    const account = await t.createAccount();
    const session = await consoleSession(t, account.accountId);
    const form = await t.http.request('POST', '/v1/workflows', {
      body: 'mode=create&name=evil',
      headers: {
        cookie: session.cookie,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
      },
    });
    expect(form.status).toBe(403);
    expect(form.body.message).toBe(
      'CSRF check failed: requests made with the console session must send the X-Switchboard-CSRF header',
    );
    const plain = await t.http.request('DELETE', '/console/session', { headers: { cookie: session.cookie } });
    expect(plain.status).toBe(403);
    const wrongToken = await t.http.post(
      '/v1/workflows',
      { mode: 'create', name: 'x' },
      asUser(session, { 'x-switchboard-csrf': 'guess' }),
    );
    expect(wrongToken.status).toBe(403);
    // nothing was created and the session is still alive
    expect(await t.db.query('SELECT id FROM workflows WHERE account_id = $1', [account.accountId])).toEqual([]);
    expect((await t.http.get('/console/me', asUser(session))).status).toBe(200);
    // sign-in itself needs the header (no login CSRF through a form)
    const formSignIn = await t.http.post('/console/session', { email: session.email, password: session.password });
    expect(formSignIn.status).toBe(403);
  });

  it('a session guessing the current password in a password change is locked out after 5 guesses, as a sign-in is', async () => {
    const account = await t.createAccount();
    const user = await createConsoleUser(t, account.accountId);
    const session = await signIn(t, user.email, user.password);
    const change = (currentPassword: string) =>
      t.http.put('/console/password', { currentPassword, newPassword: 'a brand new passphrase' }, asUser(session));
    for (let i = 0; i < 5; i++) {
      const guess = await change(`guess ${i}`);
      expect(guess.status).toBe(400);
      expect(guess.body.message).toBe('currentPassword is wrong');
    }
    const locked = await change(user.password);
    expect(locked.status).toBe(429);
    expect(locked.body.message).toBe('Too many failed sign-ins for this email. Try again in 15 minute(s).');
    // the lock is the email's: signing in is locked too, and the password did not change
    const signInNow = await t.http.post(
      '/console/session',
      { email: user.email, password: user.password },
      { headers: { 'x-switchboard-csrf': '1' } },
    );
    expect(signInNow.status).toBe(429);
    expect((await t.http.get('/console/me', asUser(session))).status).toBe(200);
  });

  it('locks an email after 5 failed sign-ins (429), known or not, even with the right password', async () => {
    const account = await t.createAccount();
    const user = await createConsoleUser(t, account.accountId);
    const headers = { 'x-switchboard-csrf': '1' };
    for (let i = 0; i < 5; i++) {
      expect(
        (await t.http.post('/console/session', { email: user.email, password: `wrong ${i}` }, { headers })).status,
      ).toBe(401);
      expect(
        (await t.http.post('/console/session', { email: 'ghost@example.com', password: `wrong ${i}` }, { headers }))
          .status,
      ).toBe(401);
    }
    const locked = await t.http.post('/console/session', { email: user.email, password: user.password }, { headers });
    expect(locked.status).toBe(429);
    expect(locked.body.message).toBe('Too many failed sign-ins for this email. Try again in 15 minute(s).');
    const ghost = await t.http.post('/console/session', { email: 'ghost@example.com', password: 'x' }, { headers });
    expect(ghost.status).toBe(429);
    expect(ghost.body.message).toBe(locked.body.message);
  });

  it('a burst of guesses at once gets no more than 5 tries at the password', async () => {
    const account = await t.createAccount();
    const user = await createConsoleUser(t, account.accountId);
    const headers = { 'x-switchboard-csrf': '1' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http.post('/console/session', { email: user.email, password: `guess ${i}` }, { headers }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  it('roles map to grants: an agent may use /conversations but not /workflows; a marketer not /account', async () => {
    const account = await t.createAccount();
    const agent = await consoleSession(t, account.accountId, 'agent');
    expect((await t.http.get('/v2/conversations', asUser(agent))).status).toBe(200);
    const refused = await t.http.get('/workflows/active', asUser(agent));
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      statusCode: 403,
      message: 'Unauthorized to make this request',
      required_grant: '/workflows',
    });
    const marketer = await consoleSession(t, account.accountId, 'marketer');
    expect((await t.http.get('/workflows/active', asUser(marketer))).status).toBe(200);
    expect((await t.http.get('/account/get', asUser(marketer))).status).toBe(403);
    const admin = await consoleSession(t, account.accountId, 'admin');
    expect((await t.http.get('/account/get', asUser(admin))).status).toBe(200);
  });

  it('console sessions are rate-limited per person, apart from the API client of the same account', async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const account = await limited.createAccount();
      const session = await consoleSession(limited, account.accountId);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.http.get('/workflows/active', asUser(session))).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      // the account's API client has its own counter
      expect((await limited.http.get('/workflows/active', { token: account.token })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
