import { startTestApp, TestApp } from '../helpers/test-app';

/** SPEC §8: 105 requests per minute; 429 past it, with Retry-After and a JSON message. */
describe('Rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('the 106th request of a client in a minute gets 429; another client is unaffected', async () => {
    const a = await t.createAccount();
    const b = await t.createAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 105; i++) statuses.push((await t.http.get('/account/get', { token: a.token })).status);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const limited = await t.http.get('/account/get', { token: a.token });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(limited.body.message).toMatch(/^Rate limit exceeded: 105 requests per 60 seconds\. Retry after \d+ seconds\.$/);

    expect((await t.http.get('/account/get', { token: b.token })).status).toBe(200);
  });

  it('authentication calls count too, per IP address', async () => {
    const limitedApp = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await limitedApp.http.post('/v1/authenticate', undefined, { headers: { clientid: 'x', clientsecret: 'y' } })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await limitedApp.close();
    }
  });

  it('the limit is shared through Redis by every API process', async () => {
    const shared = await startTestApp({ RATE_LIMIT_PER_MINUTE: '4' });
    try {
      const account = await shared.createAccount(); // the authenticate call counts for the IP, not the client
      // a second process of the same deployment: same database, Redis and JWT secret
      const second = await startTestApp({
        RATE_LIMIT_PER_MINUTE: '4',
        REDIS_PREFIX: shared.config.REDIS_PREFIX,
        JWT_SECRET: shared.config.JWT_SECRET,
        DATABASE_URL: shared.config.DATABASE_URL,
      });
      try {
        const statuses = [];
        for (const app of [shared, second, shared, second, second]) statuses.push((await app.http.get('/health/ready', {})).status);
        const calls = [];
        for (const app of [shared, second, shared, second, second]) calls.push((await app.http.get('/account/get', { token: account.token })).status);
        expect(calls.slice(0, 4).every((s) => s !== 429)).toBe(true);
        expect(calls[4]).toBe(429);
      } finally {
        await second.close();
      }
    } finally {
      await shared.close();
    }
  });
});
