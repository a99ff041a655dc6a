import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';

const base = {
  NODE_ENV: 'production',
  JWT_SECRET: 'x'.repeat(40),
  ENCRYPTION_KEY: 'a'.repeat(64),
  WHATSAPP_APP_SECRET: 'meta-app-secret',
  WHATSAPP_VERIFY_TOKEN: 'meta-verify-token',
};

describe('loadConfig', () => {
  it('applies defaults', () => {
    const config = loadConfig(base);
    expect(config.PORT).toBe(3000);
    expect(config.RATE_LIMIT_PER_MINUTE).toBe(105);
    expect(config.baseUrl).toBe('http://127.0.0.1:3000');
    expect(config.inboundWebhookUrl).toBe('http://127.0.0.1:3000');
  });

  it('names each bad variable', () => {
    expect(() => loadConfig({ ...base, PORT: 'abc', DATABASE_URL: 'mysql://x', RATE_LIMIT_PER_MINUTE: '0' })).toThrow(
      ConfigError,
    );
    try {
      loadConfig({ ...base, PORT: 'abc', DATABASE_URL: 'mysql://x' });
    } catch (error) {
      expect((error as Error).message).toContain('PORT:');
      expect((error as Error).message).toContain('DATABASE_URL must be a postgres:// URL');
    }
  });

  it('AUTOMATION_HTTP_TIMEOUT_MS stays under the Temporal effect timeout (a minute)', () => {
    expect(loadConfig({ ...base, AUTOMATION_HTTP_TIMEOUT_MS: '55000' }).AUTOMATION_HTTP_TIMEOUT_MS).toBe(55_000);
    expect(() => loadConfig({ ...base, AUTOMATION_HTTP_TIMEOUT_MS: '75000' })).toThrow(/AUTOMATION_HTTP_TIMEOUT_MS/);
  });

  it('HOST defaults to loopback; SHUTDOWN_TIMEOUT_MS to 25 s', () => {
    expect(loadConfig(base)).toMatchObject({ HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: 25_000 });
    expect(loadConfig({ ...base, HOST: '0.0.0.0', SHUTDOWN_TIMEOUT_MS: '5000' })).toMatchObject({
      HOST: '0.0.0.0',
      SHUTDOWN_TIMEOUT_MS: 5000,
    });
    expect(() => loadConfig({ ...base, HOST: 'two words' })).toThrow(/HOST must be an address/);
  });

  it('reads ENCRYPTION_KEY, ENCRYPTION_KEY_PREVIOUS and JWT_SECRET from *_FILE when unset; an unreadable file is named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-config-'));
    writeFileSync(join(dir, 'key'), `${'b'.repeat(64)}\n`);
    writeFileSync(join(dir, 'old'), 'c'.repeat(64));
    writeFileSync(join(dir, 'jwt'), 'j'.repeat(40));
    const config = loadConfig({
      ...base,
      ENCRYPTION_KEY: undefined,
      JWT_SECRET: undefined,
      ENCRYPTION_KEY_FILE: join(dir, 'key'),
      ENCRYPTION_KEY_PREVIOUS_FILE: join(dir, 'old'),
      JWT_SECRET_FILE: join(dir, 'jwt'),
    });
    expect(config).toMatchObject({ ENCRYPTION_KEY: 'b'.repeat(64), ENCRYPTION_KEY_PREVIOUS: 'c'.repeat(64) });
    expect(config.JWT_SECRET).toBe('j'.repeat(40));
    // the variable itself wins over its file
    expect(loadConfig({ ...base, ENCRYPTION_KEY_FILE: join(dir, 'key') }).ENCRYPTION_KEY).toBe('a'.repeat(64));
    expect(() => loadConfig({ ...base, ENCRYPTION_KEY: '', ENCRYPTION_KEY_FILE: join(dir, 'nope') })).toThrow(
      `ENCRYPTION_KEY_FILE: cannot read ${join(dir, 'nope')}`,
    );
    expect(() => loadConfig({ ...base, ENCRYPTION_KEY: 'short' })).toThrow(
      'ENCRYPTION_KEY must be 32 bytes in hex (64 chars) or base64 (44 chars)',
    );
  });

  it('requires JWT_SECRET and ENCRYPTION_KEY in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET/);
  });

  it("refuses the sandbox's public webhook secret and verify token in production, unset or given", () => {
    const { WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, ...unset } = base;
    expect(WHATSAPP_APP_SECRET && WHATSAPP_VERIFY_TOKEN).toBeTruthy();
    expect(() => loadConfig(unset)).toThrow(
      'Invalid configuration:\n' +
        '  WHATSAPP_APP_SECRET: must be set in production (the sandbox\'s default "sandbox-app-secret" is public)\n' +
        '  WHATSAPP_VERIFY_TOKEN: must be set in production (the sandbox\'s default "switchboard-verify-token" is public)',
    );
    expect(() => loadConfig({ ...base, WHATSAPP_APP_SECRET: 'sandbox-app-secret' })).toThrow(
      /WHATSAPP_APP_SECRET: must/,
    );
    expect(loadConfig(base).WHATSAPP_APP_SECRET).toBe('meta-app-secret');
    // development and tests keep the sandbox's defaults
    expect(loadConfig({ NODE_ENV: 'test', JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'a'.repeat(64) })).toMatchObject({
      WHATSAPP_APP_SECRET: 'sandbox-app-secret',
    });
  });

  it('uses APP_URL and INBOUND_WEBHOOK_URL when given', () => {
    const config = loadConfig({
      ...base,
      APP_URL: 'https://api.example.com/',
      INBOUND_WEBHOOK_URL: 'https://hooks.example.com',
    });
    expect(config.baseUrl).toBe('https://api.example.com');
    expect(config.inboundWebhookUrl).toBe('https://hooks.example.com');
  });
  it('TRUST_PROXY: off by default, a hop count, or a list of proxy addresses and CIDRs; anything else is refused', () => {
    expect(loadConfig(base).trustProxy).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'loopback',
    ]);
    for (const bad of ['true', 'everyone', '10.0.0.0/8;rm', '*']) {
      expect(() => loadConfig({ ...base, TRUST_PROXY: bad })).toThrow(/TRUST_PROXY must be false, a hop count/);
    }
    // every address trusted: any client would pick its own address (docs/production.md: never trust everyone)
    for (const everyone of ['0.0.0.0/0', '::/0', '10.0.0.1, 0.0.0.0/0', '0.0.0.0/00 ,loopback']) {
      expect(() => loadConfig({ ...base, TRUST_PROXY: everyone })).toThrow(
        'TRUST_PROXY must not trust every address (a /0 range): name your proxies',
      );
    }
    expect(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8,172.16.0.0/12' }).trustProxy).toHaveLength(2);
  });
});
