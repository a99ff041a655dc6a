import { defaultMaxListeners } from 'node:events';
import { ServerResponse } from 'node:http';
import { startTestApp, TestApp } from '../helpers/test-app';

/** The console's files at /app/ (built into dist/console by the global setup's `npm run build`). */
describe('Console static files', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const html = { accept: 'text/html,application/xhtml+xml' };

  it("serves index.html at /app/ (never cached) and for the SPA's page paths; hashed assets are immutable", async () => {
    const index = await fetch(`${t.url}/app/`, { headers: html });
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const body = await index.text();
    expect(body).toContain('<div id="root"></div>');
    const page = await fetch(`${t.url}/app/workflows/12`, { headers: html });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toBe(body);

    const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(body)![1];
    const asset = await fetch(`${t.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toContain('javascript');
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0); // read: an unread body holds its connection open

    const redirect = await fetch(`${t.url}/app`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/app/');
    await redirect.arrayBuffer();
  });

  it('ships the production build of React, even when the build ran under NODE_ENV=test (as in this run)', async () => {
    expect(process.env.NODE_ENV).toBe('test');
    const body = await (await fetch(`${t.url}/app/`, { headers: html })).text();
    const scripts = [...body.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+\.js)"/g)].map((m) => m[1]);
    const code = (await Promise.all(scripts.map(async (s) => (await fetch(`${t.url}${s}`)).text()))).join('\n');
    // production React points at its error decoder instead of carrying its messages; the development JSX runtime
    // (jsxDEV) and its key warnings are absent
    // (and no source file paths of the machine that built it); booleans, so that a failure does not print the bundle
    const markers = {
      productionErrors: code.includes('react.dev/errors/'),
      jsxDev: code.includes('jsxDEV'),
      keyWarning: code.includes('should have a unique "key" prop'),
      sourcePaths: code.includes('apps/console/src/'),
    };
    expect(markers).toEqual({ productionErrors: true, jsxDev: false, keyWarning: false, sourcePaths: false });
  });

  it('a page path is served without a MaxListenersExceededWarning (it used to be logged for every deep link)', async () => {
    // Node warns once a response has more 'close' listeners than events.defaultMaxListeners: counted as each ends
    // (jest's sandboxed `process` does not see the warning itself)
    const counts: number[] = [];
    const end = ServerResponse.prototype.end;
    ServerResponse.prototype.end = function (this: ServerResponse, ...args: unknown[]) {
      if (this.req?.url?.startsWith('/app/')) counts.push(this.listenerCount('close'));
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof end;
    try {
      for (const path of ['/app/workflows/12', '/app/templates', '/app/inbox/conversations/3']) {
        const page = await fetch(`${t.url}${path}`, { headers: html });
        expect([path, page.status]).toEqual([path, 200]);
        await page.text();
      }
    } finally {
      ServerResponse.prototype.end = end;
    }
    expect(counts.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...counts)).toBeLessThanOrEqual(defaultMaxListeners);
  });

  it('keeps JSON 404s for missing assets, files, non-HTML clients and the API', async () => {
    for (const [path, headers] of [
      ['/app/assets/missing-abc123.js', html],
      ['/app/favicon.ico', html],
      ['/app/workflows/12', { accept: 'application/json' }],
      ['/v9/nothing', html],
    ] as Array<[string, Record<string, string>]>) {
      const res = await t.http.get(path, { headers });
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body).toMatchObject({ statusCode: 404 });
    }
    const post = await t.http.post('/app/workflows', {}, { headers: html });
    expect(post.status).toBe(404);
  });
});
