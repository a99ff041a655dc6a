/**
 * Outbound HTTP to client-given URLs, behind the SSRF guard: node:http(s) with a guarded DNS lookup (the
 * addresses connected to are the ones checked), an overall timeout, a response size cap, and no redirects
 * (a 3xx is returned as the response: following it would need a second check, and callers can branch on it).
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

export function safeHttpRequest(request: SafeHttpRequest): Promise<SafeHttpResponse> {
  let url: URL;
  try {
    url = checkTargetUrl(request.url, { allowPrivate: request.allowPrivate });
  } catch (error) {
    return Promise.reject(new OutboundHttpError((error as Error).message, 'blocked_target'));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SafeHttpResponse>((resolve, reject) => {
    let settled = false;
    const fail = (error: OutboundHttpError) => {
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
          lookup: guardedLookup({ allowPrivate: request.allowPrivate }),
          agent: false,
        },
        (res) => {
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
      if (error instanceof BlockedTargetError) fail(new OutboundHttpError(error.message, 'blocked_target'));
      else
        fail(
          new OutboundHttpError(
            `request to ${url.host} failed: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
            'network_error',
          ),
        );
    });
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}
