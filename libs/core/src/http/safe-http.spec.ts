import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeSafeHttpConnections, safeHttpRequest } from './safe-http';

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

  describe('kept connections', () => {
    let keeper: Server;
    let keeperUrl: string;
    let connections = 0;
    let requests = 0;
    /** answers every request, except that a connection's `dropOn`-th request is met by closing the connection */
    let dropOn = 0;
    beforeAll(async () => {
      keeper = createServer((req, res) => {
        requests++;
        const onSocket = ((req.socket as { served?: number }).served ?? 0) + 1;
        (req.socket as { served?: number }).served = onSocket;
        req.resume();
        req.on('end', () => (onSocket === dropOn ? req.socket.destroy() : res.end(`answer ${requests}`)));
      });
      keeper.on('connection', () => connections++);
      await new Promise<void>((resolve) => keeper.listen(0, '127.0.0.1', resolve));
      keeperUrl = `http://127.0.0.1:${(keeper.address() as AddressInfo).port}/hook`;
    });
    beforeEach(() => {
      closeSafeHttpConnections();
      connections = 0;
      requests = 0;
      dropOn = 0;
    });
    afterAll(() => {
      closeSafeHttpConnections();
      return new Promise((resolve) => keeper.close(resolve));
    });

    it('sends one after the other over one connection', async () => {
      for (let i = 1; i <= 3; i++) {
        const res = await safeHttpRequest({ ...request, url: keeperUrl, body: '{}', allowPrivate: true });
        expect(res.body.toString()).toBe(`answer ${i}`);
      }
      expect(connections).toBe(1);
    });

    it('a kept connection the receiver closes as it is reused: the request goes again on a new one, answered once', async () => {
      dropOn = 2;
      expect((await safeHttpRequest({ ...request, url: keeperUrl, allowPrivate: true })).body.toString()).toBe(
        'answer 1',
      );
      const again = await safeHttpRequest({ ...request, url: keeperUrl, body: '{}', allowPrivate: true });
      expect(again.status).toBe(200);
      expect(again.body.toString()).toBe('answer 3'); // the 2nd request met the closing connection, the 3rd is answered
      expect(connections).toBe(2);
    });

    it('a new connection that is reset is an error, not sent again', async () => {
      dropOn = 1;
      await expect(safeHttpRequest({ ...request, url: keeperUrl, body: '{}', allowPrivate: true })).rejects.toThrow(
        /request to 127\.0\.0\.1:\d+ failed: ECONNRESET/,
      );
      expect(requests).toBe(1);
    });

    it('a connection kept for a private target is not used when private targets are refused', async () => {
      const byName = keeperUrl.replace('127.0.0.1', 'localhost');
      expect((await safeHttpRequest({ ...request, url: byName, allowPrivate: true })).status).toBe(200);
      await expect(safeHttpRequest({ ...request, url: byName, allowPrivate: false })).rejects.toThrow(
        /^target localhost resolves to .*\(loopback address\)/,
      );
      expect(requests).toBe(1);
    });
  });
});
