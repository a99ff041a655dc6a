import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * The request id of the work in progress: an API request (X-Request-Id), then the queue jobs it enqueued, the worker
 * code that runs them, and their platform calls. Every log line written inside carries it (logging.ts), and the Cloud
 * API client sends it as X-Request-Id. Kept free of Nest so that libs/whatsapp can import it alone.
 */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** A caller's X-Request-Id is kept when it is 1–128 characters of [A-Za-z0-9._-]; anything else gets a new id. */
const VALID_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function acceptedRequestId(header: unknown): string {
  return typeof header === 'string' && VALID_ID.test(header) ? header : randomUUID();
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** Runs `fn` with this request id (none: `fn` runs outside any request, e.g. a sweep). */
export function runWithRequestId<T>(requestId: string | undefined, fn: () => T): T {
  return requestId ? storage.run({ requestId }, fn) : storage.exit(fn);
}

/** Job data plus the current request id, so the worker that runs the job logs and calls out under the same id. */
export function withRequestId<T extends object>(data: T): T & { requestId?: string } {
  const requestId = currentRequestId();
  return requestId ? { ...data, requestId } : data;
}

/** Runs a queue job's handler under the request id its data carries (withRequestId). */
export function inJobContext<T>(job: { data?: unknown }, fn: () => T): T {
  const requestId = (job.data as { requestId?: unknown } | undefined)?.requestId;
  return runWithRequestId(typeof requestId === 'string' ? requestId : undefined, fn);
}
