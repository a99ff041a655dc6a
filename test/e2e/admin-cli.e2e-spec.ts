import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, TestApp } from '../helpers/test-app';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'apps', 'admin', 'src', 'main.js');

/** The operator CLI (`npm run admin -- ...`), run as a real process against the test database. */
describe('Operator CLI', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = { ...process.env, DATABASE_URL: t.config.DATABASE_URL, JWT_SECRET: t.config.JWT_SECRET, ENCRYPTION_KEY: t.config.ENCRYPTION_KEY, NODE_ENV: 'test' };
  });
  afterAll(() => t.close());

  const admin = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [CLI, ...args], { env });
    return stdout;
  };

  it('create-account prints credentials that authenticate, with every grant and a connected number', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Acme', '--json'));
    expect(created).toEqual({ accountId: expect.stringMatching(/^\d+$/), clientId: expect.any(String), clientSecret: expect.any(String), messagingPhoneIds: [expect.any(String)] });

    const auth = await t.http.post('/v1/authenticate', undefined, { headers: { clientid: created.clientId, clientsecret: created.clientSecret } });
    expect(auth.status).toBe(200);
    const account = await t.http.get('/account/get', { token: auth.body.token });
    expect(account.body.data.name).toBe('Acme');
    expect(account.body.data.phone_numbers[0].messagingPhoneId).toBe(created.messagingPhoneIds[0]);
  });

  it('set-grants changes what a client may do from its next authentication', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Limited', '--json'));
    expect(JSON.parse(await admin('set-grants', created.clientId, '/contacts,/templates', '--json'))).toEqual({ clientId: created.clientId, grants: ['/contacts', '/templates'] });
    const auth = await t.http.post('/v1/authenticate', undefined, { headers: { clientid: created.clientId, clientsecret: created.clientSecret } });
    const denied = await t.http.get('/account/get', { token: auth.body.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/account' });
  });

  it('create-client adds a second client to an account; list-accounts shows both', async () => {
    const created = JSON.parse(await admin('create-account', '--name', 'Two clients', '--json'));
    const second = JSON.parse(await admin('create-client', '--account', created.accountId, '--json'));
    expect(second.clientId).not.toBe(created.clientId);
    const auth = await t.http.post('/v1/authenticate', undefined, { headers: { clientid: second.clientId, clientsecret: second.clientSecret } });
    expect(auth.status).toBe(200);

    const accounts = JSON.parse(await admin('list-accounts', '--json'));
    const listed = accounts.find((a: { accountId: string }) => a.accountId === created.accountId);
    expect(listed.clientIds).toEqual([created.clientId, second.clientId]);
    expect(JSON.stringify(accounts)).not.toContain(created.clientSecret);
  });

  it('rejects unknown grants and commands with a message and exit code 2', async () => {
    await expect(admin('set-grants', 'sbc_x', '/nope')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('Unknown grant(s): /nope') });
    await expect(admin('frobnicate')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('Unknown command "frobnicate"') });
    await expect(admin('create-client', '--account', '999999')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('No account with id 999999') });
  });
});
