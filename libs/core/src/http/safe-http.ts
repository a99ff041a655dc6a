/**
 * Outbound HTTP to client-given URLs, behind the SSRF guard: node:http(s) with a guarded DNS lookup (the
 * addresses connected to are the ones checked), an overall timeout, a response size cap, and no redirects
 * (a 3xx is returned as the response: following it would need a second check, and callers can branch on it).
 *
 * Connections are kept alive per target (account webhooks and callbacks go to the same few receivers all day: a new
 * TCP and TLS handshake per delivery cost more than the delivery). The guard stays where it was: a kept connection
 * was opened through the guarded lookup and stays bound to the address that was checked. Idle connections are closed
 * after KEEP_ALIVE_IDLE_MS, below the 5 s idle timeout of Node's own servers; a request whose reused connection turns
 * out to have been closed by the receiver in the meantime (reset before any answer) is sent once more on a new one.
 */
import http from 'node:http';
import https from 'node:https';
import { BlockedTargetError, checkTargetUrl, guardedLookup } from './ssrf-guard';

export interface SafeHttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** Sent as-is. */
  body?: string | Buffer;
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
}

export interface SafeHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export class OutboundHttpError extends Error {
  constructor(
    message: string,
    readonly code: 'blocked_target' | 'timeout' | 'response_too_large' | 'network_error',
  ) {
    super(message);
    this.name = 'OutboundHttpError';
  }
}

const KEEP_ALIVE_IDLE_MS = 4000;

/** One keep-alive agent per protocol and guard setting; the agent's own options (the guarded lookup) win over a request's. */
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS, lookup: guardedLookup({ allowPrivate }) };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the kept connections (tests start from none; idle ones never keep a stopping process alive: they are unref'd). */
export function closeSafeHttpConnections(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

export async function safeHttpRequest(request: SafeHttpRequest): Promise<SafeHttpResponse> {
  let url: URL;
  try {
    url = checkTargetUrl(request.url, { allowPrivate: request.allowPrivate });
  } catch (error) {
    throw new OutboundHttpError((error as Error).message, 'blocked_target');
  }
  try {
    return await send(url, request);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    return send(url, request); // the receiver closed the kept connection as we reused it: nothing was answered
  }
}

/** A reused keep-alive connection that was reset before any answer (the receiver closed it while it sat idle). */
class StaleConnectionError extends Error {}

function send(url: URL, request: SafeHttpRequest): Promise<SafeHttpResponse> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SafeHttpResponse>((resolve, reject) => {
    let settled = false;
    const fail = (error: OutboundHttpError | StaleConnectionError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new OutboundHttpError(`request to ${url.host} timed out after ${request.timeoutMs} ms`, 'timeout')),
      request.timeoutMs,
    );
    let req: http.ClientRequest;
    let answered = false;
    try {
      req = client.request(
        url,
        {
          method: request.method,
          // A body goes with its Content-Length, never chunked: some receivers (and proxies) refuse chunked POSTs.
          headers:
            request.body === undefined
              ? request.headers
              : { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
          agent: agentFor(url.protocol, request.allowPrivate),
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          let size = 0;
          const declared = Number(res.headers['content-length']);
          if (Number.isFinite(declared) && declared > request.maxResponseBytes) {
            fail(
              new OutboundHttpError(
                `response from ${url.host} is larger than ${request.maxResponseBytes} bytes`,
                'response_too_large',
              ),
            );
            return;
          }
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > request.maxResponseBytes) {
              fail(
                new OutboundHttpError(
                  `response from ${url.host} is larger than ${request.maxResponseBytes} bytes`,
                  'response_too_large',
                ),
              );
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', (error) =>
            fail(new OutboundHttpError(`request to ${url.host} failed: ${error.message}`, 'network_error')),
          );
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            const headers: Record<string, string> = {};
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
            }
            resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
          });
        },
      );
    } catch (error) {
      // Invalid header names or values (e.g. CR/LF from a template) are refused by node before any connection.
      clearTimeout(timer);
      settled = true;
      reject(new OutboundHttpError(`invalid request: ${(error as Error).message}`, 'network_error'));
      return;
    }
    req.on('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (req.reusedSocket && !answered && (code === 'ECONNRESET' || code === 'EPIPE'))
        fail(new StaleConnectionError(code));
      else if (error instanceof BlockedTargetError) fail(new OutboundHttpError(error.message, 'blocked_target'));
      else fail(new OutboundHttpError(`request to ${url.host} failed: ${code ?? error.message}`, 'network_error'));
    });
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}
