import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { safeHttpRequest } from './safe-http';

/** Outbound requests to client-given URLs (callbacks, account webhooks, http_request steps), against a real server. */
describe('safeHttpRequest', () => {
  let server: Server;
  let url: string;
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const request = { method: 'POST', timeoutMs: 2000, maxResponseBytes: 1024 };

  it('sends a body with its Content-Length (in bytes), not chunked', async () => {
    const body = JSON.stringify({ status: 'delivered', name: 'Zoë' });
    const res = await safeHttpRequest({
      ...request,
      url: `${url}/cb`,
      headers: { 'content-type': 'application/json' },
      body,
      allowPrivate: true,
    });
    expect(res.status).toBe(200);
    const { headers, body: got } = received.at(-1)!;
    expect(headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(headers['transfer-encoding']).toBeUndefined();
    expect(got).toBe(body);
  });

  it('refuses a loopback target naming the setting that allows it in development', async () => {
    await expect(safeHttpRequest({ ...request, url: `${url}/cb`, body: '{}', allowPrivate: false })).rejects.toThrow(
      'target 127.0.0.1 is not allowed (loopback address); private network targets are refused unless ALLOW_PRIVATE_NETWORK_TARGETS=true (development and tests only)',
    );
    await expect(
      safeHttpRequest({ ...request, url: url.replace('127.0.0.1', 'localhost'), allowPrivate: false }),
    ).rejects.toThrow(/^target localhost resolves to .*\(loopback address\); .*ALLOW_PRIVATE_NETWORK_TARGETS=true/);
  });
});
