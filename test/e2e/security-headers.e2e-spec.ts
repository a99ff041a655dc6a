import { mcpPost } from '../helpers/mcp';
import { startTestApp, TestApp } from '../helpers/test-app';

/** Issue 14 §4: security headers on every response (apps/api/src/security-headers.ts), Swagger UI at /docs still working. */
describe('Security headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const csp = (headers: Headers) =>
    Object.fromEntries(
      (headers.get('content-security-policy') ?? '')
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v]),
    );

  it('API responses, errors and MCP answers included, carry nosniff, a referrer policy, frame denial and a strict CSP; no HSTS over plain HTTP', async () => {
    const account = await t.createAccount();
    // the MCP endpoint answers through its own transport (JsonExchange)
    const mcp = await mcpPost(t.url, { authorization: account.token });
    expect(mcp.status).toBe(200);
    for (const res of [
      await t.http.get('/account/get', { token: account.token }),
      await t.http.get('/v2/nothing'),
      await t.http.post('/v1/authenticate'),
      await t.http.get('/health'),
      mcp,
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('strict-transport-security')).toBeNull();
      const policy = csp(res.headers);
      expect(policy['default-src']).toEqual(["'self'"]);
      expect(policy['script-src']).toEqual(["'self'"]);
      expect(policy['style-src']).toEqual(["'self'"]);
      expect(policy['frame-ancestors']).toEqual(["'none'"]);
      expect(policy['object-src']).toEqual(["'none'"]);
    }
  });

  it('/docs still loads: its HTML, every script and stylesheet it references, and the OpenAPI document', async () => {
    const page = await t.http.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = String(page.body);
    expect(html).toContain('<div id="swagger-ui">');

    // CSP of /docs: scripts only from our origin (so no inline <script> may exist), inline styles allowed there only.
    const policy = csp(page.headers);
    expect(policy['script-src']).toEqual(["'self'"]);
    expect(policy['style-src']).toEqual(["'self'", "'unsafe-inline'"]);
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src=/);
      expect(body.trim()).toBe('');
    }

    const assets = [...html.matchAll(/(?:src|href)=["']([^"']+\.(?:js|css|png))["']/g)].map((m) => m[1]);
    expect(assets).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/swagger-ui-bundle\.js$/),
        expect.stringMatching(/swagger-ui-init\.js$/),
        expect.stringMatching(/swagger-ui\.css$/),
      ]),
    );
    for (const asset of assets) {
      const url = new URL(asset, `${t.url}/docs`); // resolved as the browser does, against the page URL
      expect(url.origin).toBe(t.url);
      const res = await fetch(url);
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      await res.arrayBuffer();
    }
    const init = await (
      await fetch(
        new URL(
          assets.find((a) => a.endsWith('swagger-ui-init.js'))!,
          `${t.url}/docs`,
        ),
      )
    ).text();
    expect(init).toContain('"openapi"');
    expect((await t.http.get('/docs-json')).body.openapi).toMatch(/^3\./);
  });

  it("HSTS only for requests that came over TLS: through a trusted proxy's X-Forwarded-Proto, never from an untrusted one", async () => {
    expect(
      (await t.http.get('/health', { headers: { 'x-forwarded-proto': 'https' } })).headers.get(
        'strict-transport-security',
      ),
    ).toBeNull();
    const behindProxy = await startTestApp({ TRUST_PROXY: '127.0.0.1' });
    try {
      const tls = await behindProxy.http.get('/health', { headers: { 'x-forwarded-proto': 'https' } });
      expect(tls.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect((await behindProxy.http.get('/health')).headers.get('strict-transport-security')).toBeNull();
    } finally {
      await behindProxy.close();
    }
  });
});
