import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { asUser, signIn } from '../helpers/console';
import { startTestApp, TestApp } from '../helpers/test-app';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'apps', 'admin', 'src', 'main.js');

/** The operator CLI (`npm run admin -- ...`), run as a real process against the test database. */
describe('Operator CLI', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = {
      ...process.env,
      DATABASE_URL: t.config.DATABASE_URL,
      JWT_SECRET: t.config.JWT_SECRET,
      ENCRYPTION_KEY: t.config.ENCRYPTION_KEY,
      NODE_ENV: 'test',
    };
  });
  afterAll(() => t.close());

  const admin = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [CLI, ...args], { env });
    return stdout;
  };

  it('create-account prints credentials that authenticate, with every grant and a connected number', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Acme', '--json'));
    expect(created).toEqual({
      accountId: expect.stringMatching(/^\d+$/),
      clientId: expect.any(String),
      clientSecret: expect.any(String),
      messagingPhoneIds: [expect.any(String)],
    });

    const auth = await t.http.post('/v1/authenticate', undefined, {
      headers: { clientid: created.clientId, clientsecret: created.clientSecret },
    });
    expect(auth.status).toBe(200);
    const account = await t.http.get('/account/get', { token: auth.body.token });
    expect(account.body.data.name).toBe('Acme');
    expect(account.body.data.phone_numbers[0].messagingPhoneId).toBe(created.messagingPhoneIds[0]);
  });

  it('create-user prints a one-time password that signs in to the console; --password-stdin takes one; mistakes exit 2', async () => {
    const account = JSON.parse(await admin('create-account', '--name', 'People', '--json'));
    const user = JSON.parse(
      await admin(
        'create-user',
        '--account',
        account.accountId,
        '--email',
        'Ann@Example.com',
        '--role',
        'marketer',
        '--json',
      ),
    );
    expect(user).toEqual({
      userId: expect.stringMatching(/^\d+$/),
      accountId: account.accountId,
      email: 'ann@example.com',
      role: 'marketer',
      password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
    });
    const signIn = await t.http.post(
      '/console/session',
      { email: 'ann@example.com', password: user.password },
      { headers: { 'x-switchboard-csrf': '1' } },
    );
    expect(signIn.status).toBe(200);
    expect(signIn.body.data).toMatchObject({
      email: 'ann@example.com',
      role: 'marketer',
      accountId: Number(account.accountId),
    });

    const child = execFile(
      process.execPath,
      [
        CLI,
        'create-user',
        '--account',
        account.accountId,
        '--email',
        'bo@example.com',
        '--role',
        'agent',
        '--password-stdin',
        '--json',
      ],
      { env },
    );
    child.stdin!.end('a chosen passphrase\n');
    const out = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (d) => (text += d));
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
    });
    expect(JSON.parse(out).password).toBe('(as given)');
    expect(
      (
        await t.http.post(
          '/console/session',
          { email: 'bo@example.com', password: 'a chosen passphrase' },
          { headers: { 'x-switchboard-csrf': '1' } },
        )
      ).status,
    ).toBe(200);

    for (const [args, message] of [
      [['--email', 'ann@example.com', '--role', 'admin'], 'A user with email ann@example.com already exists'],
      [['--email', 'cy@example.com', '--role', 'boss'], 'create-user needs --role, one of: admin, marketer, agent'],
      [['--email', 'not-an-email', '--role', 'admin'], 'email must be an email address'],
    ] as Array<[string[], string]>) {
      const failed = await run(process.execPath, [CLI, 'create-user', '--account', account.accountId, ...args], {
        env,
      }).then(
        () => null,
        (e) => e,
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toContain(message);
    }
  }, 120_000); // six CLI processes

  it('reset-password gives a new one-time password and ends the sessions; delete-user removes the person; unknown emails exit 2', async () => {
    const account = JSON.parse(await admin('create-account', '--name', 'Resets', '--json'));
    const user = JSON.parse(
      await admin(
        'create-user',
        '--account',
        account.accountId,
        '--email',
        'dee@example.com',
        '--role',
        'agent',
        '--json',
      ),
    );
    const session = await signIn(t, 'dee@example.com', user.password);
    expect((await t.http.get('/console/me', asUser(session))).status).toBe(200);

    const reset = JSON.parse(await admin('reset-password', '--email', 'Dee@Example.com', '--json'));
    expect(reset).toEqual({
      userId: user.userId,
      email: 'dee@example.com',
      password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/),
      sessionsEnded: true,
    });
    expect((await t.http.get('/console/me', asUser(session))).status).toBe(401);
    const old = await t.http.post(
      '/console/session',
      { email: 'dee@example.com', password: user.password },
      { headers: { 'x-switchboard-csrf': '1' } },
    );
    expect(old.status).toBe(401);
    const renewed = await signIn(t, 'dee@example.com', reset.password);

    expect(JSON.parse(await admin('delete-user', '--email', 'dee@example.com', '--json'))).toEqual({
      userId: user.userId,
      accountId: account.accountId,
      email: 'dee@example.com',
      deleted: true,
    });
    expect((await t.http.get('/console/me', asUser(renewed))).status).toBe(401);
    const gone = await t.http.post(
      '/console/session',
      { email: 'dee@example.com', password: reset.password },
      { headers: { 'x-switchboard-csrf': '1' } },
    );
    expect(gone.status).toBe(401);

    for (const command of ['reset-password', 'delete-user']) {
      const failed = await run(process.execPath, [CLI, command, '--email', 'nobody@example.com'], { env }).then(
        () => null,
        (e) => e,
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toContain('No user with email nobody@example.com');
    }
  }, 120_000);

  it('set-grants changes what a client may do from its next authentication', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Limited', '--json'));
    expect(JSON.parse(await admin('set-grants', created.clientId, '/contacts,/templates', '--json'))).toEqual({
      clientId: created.clientId,
      grants: ['/contacts', '/templates'],
    });
    const auth = await t.http.post('/v1/authenticate', undefined, {
      headers: { clientid: created.clientId, clientsecret: created.clientSecret },
    });
    const denied = await t.http.get('/account/get', { token: auth.body.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      statusCode: 403,
      message: 'Unauthorized to make this request',
      required_grant: '/account',
    });
  });

  it('create-client adds a second client to an account; list-accounts shows both', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Two clients', '--json'));
    const second = JSON.parse(await admin('create-client', '--account', created.accountId, '--json'));
    expect(second.clientId).not.toBe(created.clientId);
    const auth = await t.http.post('/v1/authenticate', undefined, {
      headers: { clientid: second.clientId, clientsecret: second.clientSecret },
    });
    expect(auth.status).toBe(200);

    const accounts = JSON.parse(await admin('list-accounts', '--json'));
    const listed = accounts.find((a: { accountId: string }) => a.accountId === created.accountId);
    expect(listed.clientIds).toEqual([created.clientId, second.clientId]);
    expect(JSON.stringify(accounts)).not.toContain(created.clientSecret);
  });

  it('set-grants applies at once to tokens already issued', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Regranted', '--json'));
    const auth = await t.http.post('/v1/authenticate', undefined, {
      headers: { clientid: created.clientId, clientsecret: created.clientSecret },
    });
    expect((await t.http.get('/account/get', { token: auth.body.token })).status).toBe(200);
    await admin('set-grants', created.clientId, '/contacts', '--json');
    expect((await t.http.get('/account/get', { token: auth.body.token })).status).toBe(403);
    expect((await t.http.get('/v2/contacts', { token: auth.body.token })).status).toBe(200);
  });

  describe('client lifecycle', () => {
    jest.setTimeout(90_000); // each CLI call is a new Node process (about 2 s, more on a loaded machine)
    const authenticate = (clientId: string, clientSecret: string) =>
      t.http.post('/v1/authenticate', undefined, { headers: { clientid: clientId, clientsecret: clientSecret } });

    it('list-clients shows the clients of one account, never a secret', async () => {
      const created = JSON.parse(await admin('create-account', '--name', 'Listed', '--json'));
      const second = JSON.parse(await admin('create-client', '--account', created.accountId, '--json'));
      const listed = JSON.parse(await admin('list-clients', '--account', created.accountId, '--json'));
      expect(listed).toEqual([
        {
          clientId: created.clientId,
          accountId: created.accountId,
          grants: expect.arrayContaining(['/account', '/contacts']),
          createdAt: expect.any(String),
        },
        {
          clientId: second.clientId,
          accountId: created.accountId,
          grants: expect.any(Array),
          createdAt: expect.any(String),
        },
      ]);
      expect(JSON.stringify(listed)).not.toContain(created.clientSecret);
    });

    it('rotate-secret: the old secret and every token issued with it are refused at once; the new secret works', async () => {
      const created = JSON.parse(await admin('create-account', '--name', 'Rotated', '--json'));
      const before = await authenticate(created.clientId, created.clientSecret);
      expect(before.status).toBe(200);

      const rotated = JSON.parse(await admin('rotate-secret', created.clientId, '--json'));
      expect(rotated).toEqual({ clientId: created.clientId, clientSecret: expect.stringMatching(/^sbs_/) });
      expect(rotated.clientSecret).not.toBe(created.clientSecret);

      expect(await authenticate(created.clientId, created.clientSecret)).toMatchObject({
        status: 401,
        body: { error: 'Invalid credentials' },
      });
      expect(await t.http.get('/account/get', { token: before.body.token })).toMatchObject({
        status: 401,
        body: { statusCode: 401, message: 'Token revoked: the client secret was rotated' },
      });
      expect(await t.http.post('/v1/refreshToken', { refreshToken: before.body.refreshToken })).toMatchObject({
        status: 403,
        body: { message: 'Refresh token not recognized' },
      });

      const after = await authenticate(created.clientId, rotated.clientSecret);
      expect(after.status).toBe(200);
      expect((await t.http.get('/account/get', { token: after.body.token })).status).toBe(200);
    });

    it("delete-client: its secret, access token and refresh token are refused at once; the account's other client is untouched", async () => {
      const created = JSON.parse(await admin('create-account', '--name', 'Deleted', '--json'));
      const other = JSON.parse(await admin('create-client', '--account', created.accountId, '--json'));
      const tokens = await authenticate(created.clientId, created.clientSecret);
      const otherTokens = await authenticate(other.clientId, other.clientSecret);

      expect(JSON.parse(await admin('delete-client', created.clientId, '--json'))).toEqual({
        clientId: created.clientId,
        deleted: true,
      });
      expect(await t.http.get('/account/get', { token: tokens.body.token })).toMatchObject({
        status: 401,
        body: { statusCode: 401, message: 'Client not found: it was deleted' },
      });
      expect(await t.http.post('/v1/refreshToken', { refreshToken: tokens.body.refreshToken })).toMatchObject({
        status: 403,
        body: { message: 'Refresh token not recognized' },
      });
      expect(await authenticate(created.clientId, created.clientSecret)).toMatchObject({
        status: 401,
        body: { error: 'Invalid credentials' },
      });
      expect((await t.http.get('/account/get', { token: otherTokens.body.token })).status).toBe(200);

      await expect(admin('delete-client', created.clientId)).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining(`No client with id ${created.clientId}`),
      });
      await expect(admin('rotate-secret', 'sbc_nope')).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringContaining('No client with id sbc_nope'),
      });
    });
  });

  it('rejects unknown grants and commands with a message and exit code 2', async () => {
    await expect(admin('set-grants', 'sbc_x', '/nope')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Unknown grant(s): /nope'),
    });
    await expect(admin('frobnicate')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Unknown command "frobnicate"'),
    });
    await expect(admin('create-client', '--account', '999999')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('No account with id 999999'),
    });
  });
});
