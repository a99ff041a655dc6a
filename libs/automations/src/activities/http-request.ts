import { AppConfig, safeHttpRequest } from '@switchboard/core';
import type { HttpResult } from '@switchboard/engine';
import type { HttpRequestInput } from './activities';

const BODYLESS_METHODS = ['GET', 'DELETE'];
/** Response headers kept in the step result (`vars.<saveAs>.headers`); the rest are dropped to keep run state small. */
const KEPT_RESPONSE_HEADERS = ['content-type', 'location', 'etag'];

/**
 * The http_request step: SSRF-guarded, with timeout and size cap. Non-2xx answers are results (the workflow branches
 * on `status`); a blocked target, a network error, a timeout or a too large response reject (the step fails). JSON
 * responses are parsed, others kept as text. The step's idempotency key is sent as `Idempotency-Key` unless the node
 * sets that header itself.
 */
export async function performHttpRequest(
  config: Pick<
    AppConfig,
    'AUTOMATION_HTTP_TIMEOUT_MS' | 'AUTOMATION_HTTP_MAX_RESPONSE_BYTES' | 'ALLOW_PRIVATE_NETWORK_TARGETS'
  >,
  input: HttpRequestInput,
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) headers[name.toLowerCase()] = value;
  headers['user-agent'] ??= 'Switchboard-Automations/1';
  headers['idempotency-key'] ??= input.idempotencyKey;
  let body: string | undefined;
  if (input.body !== undefined && input.body !== null && !BODYLESS_METHODS.includes(input.method)) {
    body = typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
    headers['content-type'] ??= typeof input.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
  }
  const response = await safeHttpRequest({
    method: input.method,
    url: input.url,
    headers,
    body,
    timeoutMs: config.AUTOMATION_HTTP_TIMEOUT_MS,
    maxResponseBytes: config.AUTOMATION_HTTP_MAX_RESPONSE_BYTES,
    allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  });
  const text = response.body.toString('utf8');
  let parsed: unknown = text;
  if (/\bjson\b/i.test(response.headers['content-type'] ?? '') && text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  } else if (text === '') {
    parsed = null;
  }
  const kept: Record<string, string> = {};
  for (const name of KEPT_RESPONSE_HEADERS)
    if (response.headers[name] !== undefined) kept[name] = response.headers[name];
  return { status: response.status, body: parsed, headers: kept };
}
