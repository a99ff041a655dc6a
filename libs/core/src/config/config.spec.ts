import { ConfigError, loadConfig } from './config';

const base = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'a'.repeat(64) };

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

  it('requires JWT_SECRET and ENCRYPTION_KEY in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET/);
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
  });
});
