import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '@switchboard/core';
import { startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestApp } from '../helpers/test-app';
import { processEnv } from '../helpers/worker-process';

const DIST = join(__dirname, '..', '..', 'dist');
const CLI = join(DIST, 'apps', 'admin', 'src', 'main.js');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a compiled entry point to its end (or kills it after `timeoutMs`), with `stdin` written to it. */
function runToEnd(entry: string, args: string[], env: NodeJS.ProcessEnv, stdin = '', timeoutMs = 60_000) {
  return new Promise<Finished>((resolve) => {
    const child = execFile(process.execPath, [entry, ...args], { env, timeout: timeoutMs }, (error, stdout, stderr) =>
      resolve({ code: child.exitCode ?? (error as { code?: number } | null)?.code ?? null, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

/**
 * Going to production with the operator CLI and the process settings: connecting a real number (the sandbox acting as
 * the platform), one encryption key per deployment checked at start, and key rotation.
 */
describe('Production setup', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let env: NodeJS.ProcessEnv;
  let accountId: string;
  const admin = (args: string[], stdin = '', extra: NodeJS.ProcessEnv = {}) =>
    runToEnd(CLI, args, { ...env, ...extra }, stdin);

  beforeAll(async () => {
    t = await startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: 'true' });
    sandbox = await startTestSandbox(t);
    env = processEnv(t, 2);
    accountId = (await t.createAccount()).accountId;
  }, 120_000);
  afterAll(async () => {
    await sandbox?.close();
    await t?.close();
  });

  it('connect-number checks the number with the platform and stores the token encrypted; a refused token stores nothing', async () => {
    await sandbox.control.post('/_sandbox/config', {
      phoneNumbers: { '106540352242922': { displayPhoneNumber: '15550783881', verifiedName: 'Acme Support' } },
      invalidTokens: ['EAAG-expired-token'],
    });
    const connect = (token: string) =>
      admin(
        [
          'connect-number',
          '--account',
          accountId,
          '--phone-number-id',
          '106540352242922',
          '--waba-id',
          '102290129340398',
          '--access-token-stdin',
          '--api-base-url',
          sandbox.url,
          '--json',
        ],
        `${token}\n`,
      );

    const refused = await connect('EAAG-expired-token');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('The platform refused the number or the token (HTTP 401, code 190, subcode 463)');
    expect(refused.stderr).toContain('Error validating access token: Session has expired.');
    expect(await t.db.query(`SELECT 1 FROM phone_numbers WHERE messaging_phone_id = '106540352242922'`)).toEqual([]);

    const connected = await connect('EAAG-system-user-token');
    expect(connected.stderr).toBe('');
    expect(JSON.parse(connected.stdout)).toEqual({
      accountId,
      messagingPhoneId: '106540352242922',
      wabaId: '102290129340398',
      displayPhoneNumber: '15550783881',
      verifiedName: 'Acme Support',
      qualityRating: 'GREEN',
      throughput: 'STANDARD',
      messagesPerSecond: 80,
      apiBaseUrl: sandbox.url,
      apiVersion: t.config.WHATSAPP_API_VERSION,
      replaced: false,
    });
    const [row] = await t.db.query(
      `SELECT account_id::text, business_account_id, api_base_url, status, access_token_encrypted FROM phone_numbers WHERE messaging_phone_id = '106540352242922'`,
    );
    expect(row).toMatchObject({
      account_id: accountId,
      business_account_id: '102290129340398',
      api_base_url: sandbox.url,
      status: 'CONNECTED',
    });
    expect(row.access_token_encrypted).not.toContain('EAAG');
    expect(new SecretBox(t.config.ENCRYPTION_KEY).decrypt(row.access_token_encrypted)).toBe('EAAG-system-user-token');

    // another account cannot take the number; the token never appears on the command line
    const other = await t.createAccount();
    const taken = await admin(
      [
        'connect-number',
        '--account',
        other.accountId,
        '--phone-number-id',
        '106540352242922',
        '--waba-id',
        '1',
        '--access-token-stdin',
        '--api-base-url',
        sandbox.url,
      ],
      'EAAG-other\n',
    );
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain(`Phone number 106540352242922 is connected to account ${accountId}`);

    const disconnected = await admin([
      'disconnect-number',
      '--account',
      accountId,
      '--phone-number-id',
      '106540352242922',
      '--json',
    ]);
    expect(JSON.parse(disconnected.stdout)).toEqual({
      accountId,
      phoneNumberId: '106540352242922',
      disconnected: true,
    });
    const [after] = await t.db.query(
      `SELECT status, access_token_encrypted FROM phone_numbers WHERE messaging_phone_id = '106540352242922'`,
    );
    expect(after.status).toBe('DISCONNECTED');
    expect(new SecretBox(t.config.ENCRYPTION_KEY).decrypt(after.access_token_encrypted)).toBe('');
  }, 180_000); // CLI and worker processes: about 2 s each on a quiet machine, far more on a loaded one

  it('a process started with another ENCRYPTION_KEY (or key file) exits at start naming the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-key-'));
    const wrongFile = join(dir, 'wrong.key');
    writeFileSync(wrongFile, `${randomBytes(32).toString('hex')}\n`);

    const worker = await runToEnd(join(DIST, 'apps/worker/src/main.js'), [], {
      ...env,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    expect(worker.code).toBe(78);
    expect(worker.stderr).toContain(
      "ENCRYPTION_KEY does not match the key this database's secrets were encrypted with",
    );
    expect(worker.stderr).toContain('ENCRYPTION_KEY_PREVIOUS');

    const api = await runToEnd(join(DIST, 'apps/api/src/main.js'), [], {
      ...env,
      ENCRYPTION_KEY: '',
      ENCRYPTION_KEY_FILE: wrongFile,
      PORT: '0',
    });
    expect(api.code).toBe(78);
    expect(api.stderr).toContain("ENCRYPTION_KEY does not match the key this database's secrets were encrypted with");
  }, 180_000); // CLI and worker processes: about 2 s each on a quiet machine, far more on a loaded one

  it('rotate-secrets re-encrypts every stored secret with the new key; afterwards only the new key starts a process', async () => {
    const oldKey = t.config.ENCRYPTION_KEY;
    const newKey = randomBytes(32).toString('hex');
    const created = await t.http.post(
      '/v1/webhook-endpoints',
      { url: 'http://127.0.0.1:9/switchboard', events: ['message.received'] },
      { token: (await t.createAccount()).token },
    );
    expect(created.status).toBe(201);

    const withoutPrevious = await admin(['rotate-secrets'], '', { ENCRYPTION_KEY: newKey });
    expect(withoutPrevious.code).toBe(2);
    expect(withoutPrevious.stderr).toContain('rotate-secrets needs the key the data was written with');

    const rotated = await admin(['rotate-secrets', '--json'], '', {
      ENCRYPTION_KEY: newKey,
      ENCRYPTION_KEY_PREVIOUS: oldKey,
    });
    expect(rotated.stderr).toBe('');
    const report = JSON.parse(rotated.stdout);
    expect(report).toMatchObject({ keyCheckWasCurrent: false, unreadable: [], done: true });
    const [{ n: numbers }] = await t.db.query(`SELECT count(*)::int AS n FROM phone_numbers`);
    expect(report.accessTokens).toBe(`${numbers} of ${numbers} re-encrypted`);
    expect(report.webhookSecrets).toBe('1 of 1 re-encrypted');

    const fresh = new SecretBox(newKey);
    for (const { sealed } of await t.db.query(`SELECT access_token_encrypted AS sealed FROM phone_numbers`))
      expect(() => fresh.decrypt(sealed)).not.toThrow();

    const stale = await runToEnd(join(DIST, 'apps/worker/src/main.js'), [], { ...env, ENCRYPTION_KEY: oldKey });
    expect(stale.code).toBe(78);
  }, 180_000); // CLI and worker processes: about 2 s each on a quiet machine, far more on a loaded one
});
