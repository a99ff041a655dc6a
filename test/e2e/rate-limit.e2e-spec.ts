import { CLAIM_TIMEOUT_MS, REDIS_AWAY_MS, RedisThrottlerStorage } from '@switchboard/auth';
import { createRedis } from '@switchboard/core';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { eventually } from '../helpers/sandbox';
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
    expect(limited.body.message).toMatch(
      /^Rate limit exceeded: 105 requests per 60 seconds\. Retry after \d+ seconds\.$/,
    );

    expect((await t.http.get('/account/get', { token: b.token })).status).toBe(200);
  });

  it('counted routes answer X-RateLimit-*; @SkipThrottle routes are neither counted nor limited', async () => {
    const limitedApp = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const account = await limitedApp.createAccount(); // the authenticate call counts for the IP, not the client
      for (let i = 0; i < 5; i++) {
        const health = await limitedApp.http.get('/health/ready', {});
        expect(health.status).toBe(200);
        expect(health.headers.get('x-ratelimit-limit')).toBeNull();
      }
      const remaining: Array<string | null> = [];
      for (let i = 0; i < 3; i++) {
        const read = await limitedApp.http.get('/account/get', { token: account.token });
        expect(read.status).toBe(200);
        expect(read.headers.get('x-ratelimit-limit')).toBe('3');
        remaining.push(read.headers.get('x-ratelimit-remaining'));
      }
      expect(remaining).toEqual(['2', '1', '0']);
      expect((await limitedApp.http.get('/account/get', { token: account.token })).status).toBe(429);
    } finally {
      await limitedApp.close();
    }
  });

  it('authentication calls count too, per IP address', async () => {
    const limitedApp = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push(
          (await limitedApp.http.post('/v1/authenticate', undefined, { headers: { clientid: 'x', clientsecret: 'y' } }))
            .status,
        );
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
        for (const app of [shared, second, shared, second, second])
          statuses.push((await app.http.get('/health/ready', {})).status);
        const calls = [];
        for (const app of [shared, second, shared, second, second])
          calls.push((await app.http.get('/account/get', { token: account.token })).status);
        expect(calls.slice(0, 4).every((s) => s !== 429)).toBe(true);
        expect(calls[4]).toBe(429);
      } finally {
        await second.close();
      }
    } finally {
      await shared.close();
    }
  });
  it('150 requests of one client at once: exactly 105 pass, the rest get 429 (hits claimed in blocks stay exact)', async () => {
    const account = await t.createAccount();
    const statuses = await Promise.all(
      Array.from({ length: 150 }, () => t.http.get('/account/get', { token: account.token }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(105);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);
  });

  describe('the counter shared by several processes (RedisThrottlerStorage against Redis)', () => {
    const connect = () => createRedis(t.config.REDIS_URL);
    const count = async (storage: RedisThrottlerStorage, key: string, limit: number, n: number) => {
      const records = await Promise.all(Array.from({ length: n }, () => storage.increment(key, 60_000, limit)));
      return records.filter((r) => !r.isBlocked).length;
    };

    it('two processes taking turns in bursts never let more than the limit through, and lose little of it', async () => {
      const [a, b] = [connect(), connect()];
      try {
        const prefix = `rl-test-${Date.now()}`;
        const first = new RedisThrottlerStorage(a, prefix);
        const second = new RedisThrottlerStorage(b, prefix);
        let allowed = 0;
        for (let round = 0; round < 40; round++) {
          allowed += await count(first, 'client:busy', 1000, 30);
          allowed += await count(second, 'client:busy', 1000, 30);
        }
        expect(allowed).toBeLessThanOrEqual(1000);
        expect(allowed).toBeGreaterThanOrEqual(1000 - 2 * Math.ceil(1000 / 16));
        const counted = Number(await a.get(`${prefix}:rl:client:busy`));
        expect(counted).toBeLessThanOrEqual(1000 + 2 * 64);
        // a refused request does not ask Redis: both processes know the window is full
        expect((await first.increment('client:busy', 60_000, 1000)).isBlocked).toBe(true);
        expect((await second.increment('client:busy', 60_000, 1000)).isBlocked).toBe(true);
        expect(Number(await a.get(`${prefix}:rl:client:busy`))).toBe(counted);
      } finally {
        a.disconnect();
        b.disconnect();
      }
    });

    it('a busy key claims its hits in blocks: far fewer Redis calls than requests', async () => {
      const redis = connect();
      try {
        const storage = new RedisThrottlerStorage(redis, `rl-test-${Date.now()}`);
        const claims = jest.spyOn(redis as unknown as { sbRateLimitClaim: () => unknown }, 'sbRateLimitClaim');
        let allowed = 0;
        for (let i = 0; i < 20; i++) allowed += await count(storage, 'client:steady', 100_000, 100);
        expect(allowed).toBe(2000);
        expect(claims.mock.calls.length).toBeLessThan(100);
        const record = await storage.increment('client:steady', 60_000, 100_000);
        expect(record.totalHits).toBe(2001); // the next request's place in the window, as without blocks
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('Redis away', () => {
    /** A Redis server of this test's own (the shared one must stay up), on a free port. */
    async function ownRedis() {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const port = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));
      const start = () => {
        const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', ''], {
          stdio: 'ignore',
        });
        return server;
      };
      let server = start();
      const url = `redis://127.0.0.1:${port}`;
      const ping = createRedis(url);
      await eventually(async () => (await ping.ping().catch(() => null)) === 'PONG', 5_000, 'own Redis up');
      ping.disconnect();
      return {
        url,
        pause: () => server.kill('SIGSTOP'),
        resume: () => server.kill('SIGCONT'),
        stop: () => server.kill('SIGKILL'),
        restart: () => (server = start()),
      };
    }

    it('a hung Redis holds no request: after one claim of about a second, requests are counted per process', async () => {
      const redis = await ownRedis();
      const app = await startTestApp({ REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '20' });
      try {
        const account = await app.createAccount();
        expect((await app.http.get('/account/get', { token: account.token })).status).toBe(200);
        redis.pause();
        const started = Date.now();
        const first = await app.http.get('/account/get', { token: account.token });
        expect(first.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(3_000);
        const statuses: number[] = [];
        const rest = Date.now();
        for (let i = 0; i < 20; i++)
          statuses.push((await app.http.get('/account/get', { token: account.token })).status);
        expect(Date.now() - rest).toBeLessThan(3_000); // Redis is not asked again meanwhile
        // still limited: 20 a minute, the window Redis counted (1 request) going on in this process: 2 to 20 pass
        expect(statuses.filter((s) => s === 200)).toHaveLength(18);
        expect(statuses.slice(-2)).toEqual([429, 429]);
        redis.resume();
      } finally {
        redis.resume();
        await app.close();
        redis.stop();
      }
    }, 60_000);

    it('Redis gone (connection refused): the window goes on where Redis had it, without Redis, which is asked again after REDIS_AWAY_MS', async () => {
      const redis = await ownRedis();
      const connection = createRedis(redis.url);
      const storage = new RedisThrottlerStorage(connection, 'rl-away');
      const claims = jest.spyOn(connection as unknown as { sbRateLimitClaim: () => unknown }, 'sbRateLimitClaim');
      const hit = () => storage.increment('client:away', 60_000, 10);
      try {
        for (let i = 1; i <= 3; i++) expect((await hit()).totalHits).toBe(i);
        redis.stop();
        await new Promise((r) => setTimeout(r, 200));
        const started = Date.now();
        expect((await hit()).totalHits).toBe(4); // the 4th of the window Redis counted: not a fresh window
        expect(Date.now() - started).toBeLessThan(CLAIM_TIMEOUT_MS + 1_000);
        const asked = claims.mock.calls.length;
        const rest = [];
        for (let i = 0; i < 7; i++) rest.push(await hit());
        expect(rest.map((r) => r.isBlocked)).toEqual([false, false, false, false, false, false, true]);
        expect(rest.map((r) => r.totalHits).slice(0, 6)).toEqual([5, 6, 7, 8, 9, 10]);
        expect(claims.mock.calls.length).toBe(asked); // Redis not asked meanwhile

        redis.restart();
        await eventually(async () => (await connection.ping().catch(() => null)) === 'PONG', 10_000, 'Redis back');
        await new Promise((r) => setTimeout(r, REDIS_AWAY_MS));
        expect((await storage.increment('client:back', 60_000, 10)).totalHits).toBe(1);
        expect(claims.mock.calls.length).toBe(asked + 1);
        expect(await connection.get('rl-away:rl:client:back')).toBe('1');
      } finally {
        connection.disconnect();
        redis.stop();
      }
    }, 60_000);
  });

  describe('the client address behind the per-IP limits (TRUST_PROXY)', () => {
    const badSignIn = (app: TestApp, forwardedFor: string) =>
      app.http.post('/v1/authenticate', undefined, {
        headers: { clientid: 'x', clientsecret: 'y', 'x-forwarded-for': forwardedFor },
      });

    it('off by default: a forged X-Forwarded-For is ignored, the socket address counts (sign-in, refresh, logout)', async () => {
      const app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
      try {
        expect(app.config.trustProxy).toBe(false);
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) statuses.push((await badSignIn(app, `203.0.113.${i + 1}`)).status);
        expect(statuses).toEqual([401, 401, 401, 429]);
        // the other unauthenticated endpoints share the address's counter
        const refresh = await app.http.post(
          '/v1/refreshToken',
          { refreshToken: 'x' },
          { headers: { 'x-forwarded-for': '198.51.100.7' } },
        );
        expect(refresh.status).toBe(429);
        const logout = await app.http.delete('/v1/logout/x', { headers: { 'x-forwarded-for': '198.51.100.8' } });
        expect(logout.status).toBe(429);
      } finally {
        await app.close();
      }
    });

    it('120 bad sign-ins, each with another forged X-Forwarded-For, are limited at 105 (issue 14 defect 3)', async () => {
      const app = await startTestApp();
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 120; i++) statuses.push((await badSignIn(app, `10.${i}.0.1`)).status);
        expect(statuses.filter((s) => s === 401)).toHaveLength(105);
        expect(statuses.slice(105).every((s) => s === 429)).toBe(true);
      } finally {
        await app.close();
      }
    });

    it('a trusted proxy (address list): the forwarded address counts, so clients behind it have their own limits', async () => {
      const app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: '127.0.0.1' });
      try {
        const first: number[] = [];
        for (let i = 0; i < 4; i++) first.push((await badSignIn(app, '203.0.113.1')).status);
        expect(first).toEqual([401, 401, 401, 429]);
        // another client behind the same proxy is not limited by the first one
        expect((await badSignIn(app, '203.0.113.2')).status).toBe(401);
        // an address the client prepends itself is not trusted: the proxy's rightmost entry is the client
        expect((await badSignIn(app, '198.51.100.9, 203.0.113.1')).status).toBe(429);
        // IPv6 clients count by their /64: a new address of the same network each time is still one client
        const sameNetwork: number[] = [];
        for (let i = 1; i <= 4; i++) sameNetwork.push((await badSignIn(app, `2001:db8:1:2::${i}`)).status);
        expect(sameNetwork).toEqual([401, 401, 401, 429]);
        expect((await badSignIn(app, '2001:db8:1:3::1')).status).toBe(401);
      } finally {
        await app.close();
      }
    });

    it('a hop count works the same way; a proxy list that does not hold the peer ignores the header', async () => {
      const hops = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '1' });
      try {
        expect(hops.config.trustProxy).toBe(1);
        expect([
          (await badSignIn(hops, '203.0.113.5')).status,
          (await badSignIn(hops, '203.0.113.5')).status,
          (await badSignIn(hops, '203.0.113.5')).status,
        ]).toEqual([401, 401, 429]);
        expect((await badSignIn(hops, '203.0.113.6')).status).toBe(401);
      } finally {
        await hops.close();
      }
      const elsewhere = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '10.0.0.0/8' });
      try {
        expect([
          (await badSignIn(elsewhere, '203.0.113.7')).status,
          (await badSignIn(elsewhere, '203.0.113.8')).status,
          (await badSignIn(elsewhere, '203.0.113.9')).status,
        ]).toEqual([401, 401, 429]);
      } finally {
        await elsewhere.close();
      }
    });
  });
});
