import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { safeHttpRequest } from './safe-http';
import {
  assertPublicTarget,
  blockedAddressReason,
  BlockedTargetError,
  checkTargetUrl,
  isPublicAddress,
} from './ssrf-guard';

const deny = { allowPrivate: false };

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local / metadata'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'unique-local'],
    ['fc12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local / metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['[::1]', 'loopback'],
  ])('%s is blocked (%s)', (ip, reason) => {
    expect(blockedAddressReason(ip)).toBe(reason);
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '172.15.255.255',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('%s is public', (ip) => {
    expect(blockedAddressReason(ip)).toBeNull();
  });
});

describe('checkTargetUrl', () => {
  it.each([
    ['ftp://example.com/x', /scheme "ftp" is not allowed/],
    ['file:///etc/passwd', /scheme "file" is not allowed/],
    ['gopher://example.com', /scheme "gopher"/],
    ['not a url', /invalid URL/],
    ['http://user:pass@example.com/', /credentials/],
    ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is not allowed \(link-local \/ metadata address\)/],
    ['http://127.0.0.1:8080/', /loopback/],
    ['http://[::1]/', /loopback/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://2130706433/', /loopback/], // decimal form of 127.0.0.1, normalised by the URL parser
    ['http://0x7f.1/', /loopback/],
    ['http://10.0.0.1/', /private/],
  ])('refuses %s', (url, message) => {
    expect(() => checkTargetUrl(url, deny)).toThrow(BlockedTargetError);
    expect(() => checkTargetUrl(url, deny)).toThrow(message);
  });

  it('accepts public http(s) URLs and, when allowed, private ones', () => {
    expect(checkTargetUrl('https://example.com/a?b=1', deny).hostname).toBe('example.com');
    expect(checkTargetUrl('http://127.0.0.1:3000/x', { allowPrivate: true }).port).toBe('3000');
    expect(() => checkTargetUrl('ftp://127.0.0.1/', { allowPrivate: true })).toThrow(/scheme/);
  });

  it('resolves host names: localhost is refused', async () => {
    await expect(assertPublicTarget('http://localhost:1234/', deny)).rejects.toThrow(
      /localhost resolves to .* not allowed \(loopback address\)/,
    );
    await expect(assertPublicTarget('http://localhost:1234/', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });
});

describe('safeHttpRequest', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(5000));
      } else if (req.url === '/slow') {
        setTimeout(() => res.end('late'), 2000).unref();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, method: req.method }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );

  const request = (path: string, extra: Partial<Parameters<typeof safeHttpRequest>[0]> = {}) =>
    safeHttpRequest({
      method: 'GET',
      url: `${base}${path}`,
      timeoutMs: 1000,
      maxResponseBytes: 1000,
      allowPrivate: true,
      ...extra,
    });

  it('calls an allowed target', async () => {
    const res = await request('/');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ ok: true, method: 'GET' });
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('refuses a loopback target unless allowed, also through a host name', async () => {
    await expect(request('/', { allowPrivate: false })).rejects.toMatchObject({ code: 'blocked_target' });
    const port = new URL(base).port;
    await expect(request('', { allowPrivate: false, url: `http://localhost:${port}/` })).rejects.toMatchObject({
      code: 'blocked_target',
      message: expect.stringMatching(/localhost resolves to .* \(loopback address\)/),
    });
  });

  it('caps the response size and times out', async () => {
    await expect(request('/big')).rejects.toMatchObject({ code: 'response_too_large' });
    await expect(request('/slow', { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'timeout',
      message: expect.stringContaining('timed out after 200 ms'),
    });
  });

  it('refuses header values with line breaks', async () => {
    await expect(request('/', { headers: { 'x-a': 'a\r\nx-b: b' } })).rejects.toMatchObject({
      code: 'network_error',
      message: expect.stringContaining('invalid request'),
    });
  });
});
