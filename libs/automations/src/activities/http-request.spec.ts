import { loadConfig } from '@switchboard/core';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpRequestInput } from './activities';
import { performHttpRequest } from './http-request';

describe('performHttpRequest (http_request steps)', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders; body: string }> = [];
  const config = loadConfig({
    NODE_ENV: 'test',
    JWT_SECRET: 'x'.repeat(40),
    ENCRYPTION_KEY: 'a'.repeat(64),
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  });
  const activities = { httpRequest: (input: HttpRequestInput) => performHttpRequest(config, input) };
  const ctx = {
    accountId: '1',
    runId: 'r1',
    seq: 3,
    idempotencyKey: 'run:r1:step:3',
    messagingPhoneId: null,
    nodeId: 'n',
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (req.url === '/text') {
          res.writeHead(201, { 'content-type': 'text/plain', 'x-secret': 'dropped' });
          res.end('created');
        } else if (req.url === '/empty') {
          res.writeHead(204);
          res.end();
        } else if (req.url === '/bad-json') {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{oops');
        } else {
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
          res.end(JSON.stringify({ echo: body ? JSON.parse(body) : null }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('sends JSON bodies with the idempotency key and parses JSON answers', async () => {
    const result = await activities.httpRequest({
      ...ctx,
      method: 'POST',
      url: `${base}/json`,
      headers: { 'X-Trace': 't1' },
      body: { a: [1, 'b'] },
    });
    expect(result).toEqual({
      status: 200,
      body: { echo: { a: [1, 'b'] } },
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    const request = seen[seen.length - 1];
    expect(request.headers).toMatchObject({
      'idempotency-key': 'run:r1:step:3',
      'x-trace': 't1',
      'content-type': 'application/json',
    });
  });

  it('keeps text, empty and broken JSON answers as results (non-2xx is not a failure)', async () => {
    expect(await activities.httpRequest({ ...ctx, method: 'GET', url: `${base}/text`, headers: {} })).toEqual({
      status: 201,
      body: 'created',
      headers: { 'content-type': 'text/plain' },
    });
    expect(
      await activities.httpRequest({
        ...ctx,
        method: 'DELETE',
        url: `${base}/empty`,
        headers: {},
        body: { ignored: true },
      }),
    ).toEqual({ status: 204, body: null, headers: {} });
    expect(seen[seen.length - 1].body).toBe('');
    expect(
      await activities.httpRequest({
        ...ctx,
        method: 'PUT',
        url: `${base}/bad-json`,
        headers: { 'Idempotency-Key': 'mine' },
      }),
    ).toMatchObject({ status: 500, body: '{oops' });
    expect(seen[seen.length - 1].headers['idempotency-key']).toBe('mine');
  });

  it('fails a blocked target when private targets are not allowed', async () => {
    const strict = loadConfig({ NODE_ENV: 'test', JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'a'.repeat(64) });
    await expect(
      performHttpRequest(strict, { ...ctx, method: 'GET', url: `${base}/json`, headers: {} }),
    ).rejects.toThrow('target 127.0.0.1 is not allowed (loopback address)');
  });
});
