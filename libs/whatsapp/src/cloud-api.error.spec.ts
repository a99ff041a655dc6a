/**
 * Error mapping for HTTP failures the sandbox does not produce (429 with Retry-After, 5xx,
 * non-JSON bodies, hanging servers), over real HTTP against a tiny local server.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { CloudApiClient } from './cloud-api.client';
import { answerLost, classifyCloudApiError, CloudApiError, parseRetryAfter } from './cloud-api.error';

let server: Server;
let baseUrl: string;
let respond: (res: import('node:http').ServerResponse) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => respond(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const client = (timeoutMs?: number) =>
  new CloudApiClient(
    { baseUrl, apiVersion: 'v21.0', accessToken: 't', phoneNumberId: 'p', businessAccountId: 'w' },
    { timeoutMs },
  );

async function failure(p: Promise<unknown>): Promise<CloudApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CloudApiError);
    return err as CloudApiError;
  }
  throw new Error('expected failure');
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: import('node:http').ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

describe('CloudApiError mapping', () => {
  it('HTTP 429 is retryable and honours Retry-After (seconds)', async () => {
    respond = json(
      429,
      {
        error: { message: '(#4) Application request limit reached', type: 'OAuthException', code: 4, fbtrace_id: 'x' },
      },
      { 'retry-after': '7' },
    );
    const err = await failure(client().sendText('49111', 'x'));
    expect(err).toMatchObject({
      kind: 'api',
      code: 4,
      httpStatus: 429,
      retryable: true,
      retryAfterMs: 7000,
      fbtraceId: 'x',
    });
    expect(classifyCloudApiError(err).class).toBe('throughput');
  });

  it("HTTP 5xx and 429 without a Graph body (an edge's HTML) are refusals to retry, not answers lost", async () => {
    respond = (res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    const err = await failure(client().getFlow('1'));
    expect(err).toMatchObject({ kind: 'api', httpStatus: 502, retryable: true });
    expect(classifyCloudApiError(err).class).toBe('transient');
    expect(answerLost(err)).toBe(false);
    respond = (res) => {
      res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '3' });
      res.end('<html>slow down</html>');
    };
    const busy = await failure(client().getFlow('1'));
    expect(busy).toMatchObject({ kind: 'api', httpStatus: 429, retryable: true, retryAfterMs: 3000 });
    expect(classifyCloudApiError(busy).class).toBe('throughput');
    expect(answerLost(busy)).toBe(false);
  });

  it('is_transient marks a Graph error retryable', async () => {
    respond = json(500, {
      error: { message: 'An unexpected error has occurred.', type: 'OAuthException', code: 2, is_transient: true },
    });
    expect((await failure(client().listTemplates())).retryable).toBe(true);
  });

  it('131056 pair rate limit: retryable, 6 s default wait', async () => {
    respond = json(400, {
      error: {
        message: '(#131056) (Business Account, Consumer Account) pair rate limit hit',
        type: 'OAuthException',
        code: 131056,
        error_data: {
          messaging_product: 'whatsapp',
          details:
            'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.',
        },
      },
    });
    const err = await failure(client().sendText('49111', 'x'));
    expect(err).toMatchObject({
      code: 131056,
      title: '(Business Account, Consumer Account) pair rate limit hit',
      retryable: true,
      retryAfterMs: 6000,
    });
    expect(classifyCloudApiError(err).class).toBe('pair_rate');
  });

  it('template API errors whose error_data is a string keep it as details', async () => {
    respond = json(400, {
      error: {
        message: 'Invalid parameter',
        type: 'OAuthException',
        code: 100,
        error_subcode: 2388042,
        error_data: 'Body text too long',
      },
    });
    const err = await failure(
      client().createTemplate({ name: 'x', language: 'en', category: 'UTILITY', components: [] }),
    );
    expect(err).toMatchObject({
      code: 100,
      subcode: 2388042,
      details: 'Body text too long',
      retryable: false,
      retryAfterMs: undefined,
    });
    expect(classifyCloudApiError(err).class).toBe('invalid_request');
  });

  it('a 200 with a non-JSON body is an invalid_response', async () => {
    respond = (res) => res.end('ok');
    expect((await failure(client().getFlow('1'))).kind).toBe('invalid_response');
  });

  it('times out a hanging request (AbortSignal.timeout) as a retryable timeout', async () => {
    respond = () => undefined; // never answers
    const err = await failure(client(100).sendText('49111', 'x'));
    expect(err).toMatchObject({ kind: 'timeout', code: 0, httpStatus: 0, retryable: true });
  });

  it('parseRetryAfter reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter(new Date(10_000 + 5_000).toUTCString(), 10_000)).toBe(5000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it('non-Cloud API errors classify as unknown', () => {
    expect(classifyCloudApiError(new Error('x'))).toEqual({ class: 'unknown', retryable: false });
  });
});
