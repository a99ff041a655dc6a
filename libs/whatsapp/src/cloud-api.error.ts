import { GraphApiErrorBody } from './cloud-api.types';

/** Cloud API error codes Switchboard acts on. */
export const CloudApiErrorCode = {
  /** generic Graph errors, usually transient */
  Unknown: 1,
  Service: 2,
  TooManyCalls: 4,
  InvalidParameter: 100,
  /** access token invalid or expired */
  AccessToken: 190,
  /** Cloud API throughput (messages per second per number) reached */
  Throughput: 130429,
  /** something went wrong on the platform, retry */
  SomethingWentWrong: 131000,
  /** the recipient cannot receive the message */
  MessageUndeliverable: 131026,
  /** more than 24 h since the customer's last message: only templates allowed */
  ReEngagement: 131047,
  /** spam rate limit */
  SpamRateLimit: 131048,
  /** sending too fast to one recipient (business, consumer) pair */
  PairRateLimit: 131056,
  ServiceUnavailable: 131016,
  /** template body/header parameter count differs from the template */
  ParameterMismatch: 132000,
  /** template (name, language) missing or not approved */
  TemplateMissing: 132001,
  ParameterFormatMismatch: 132012,
  /** the template is paused (its quality) or disabled: every send of it is refused until Meta reinstates it */
  TemplatePaused: 132015,
  TemplateDisabled: 132016,
  ServerUnavailable: 133004,
  FlowCantBeUpdated: 139001,
  FlowPublishInvalidState: 139002,
  FlowCantBeDeprecated: 139003,
  FlowCantBeDeleted: 139004,
} as const;

/**
 * `network`: no connection, nothing went out (the platform cannot have the request); `connection_lost`: the connection
 * broke once the request may have gone out, before any answer; `timeout`: no answer in time; `invalid_response`: an
 * answer that cannot be read. After the last three the platform may have carried the request out.
 */
export type CloudApiErrorKind = 'api' | 'network' | 'connection_lost' | 'timeout' | 'invalid_response';

const RETRYABLE_CODES = new Set<number>([
  1,
  2,
  4,
  17,
  32,
  341,
  613,
  80007,
  CloudApiErrorCode.Throughput,
  CloudApiErrorCode.SomethingWentWrong,
  CloudApiErrorCode.ServiceUnavailable,
  CloudApiErrorCode.PairRateLimit,
  CloudApiErrorCode.ServerUnavailable,
]);

/** Default wait before retrying when the platform gives no Retry-After. */
const DEFAULT_RETRY_AFTER_MS: Record<number, number> = {
  [CloudApiErrorCode.Throughput]: 1_000,
  [CloudApiErrorCode.PairRateLimit]: 6_000,
  4: 60_000,
  80007: 60_000,
};

export interface CloudApiErrorInit {
  kind: CloudApiErrorKind;
  code: number;
  message: string;
  httpStatus?: number;
  type?: string;
  title?: string;
  details?: string;
  subcode?: number;
  userTitle?: string;
  userMessage?: string;
  fbtraceId?: string;
  isTransient?: boolean;
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * An error answered by the Cloud API (or a failure to reach it). The client never retries;
 * `retryable` and `retryAfterMs` tell the caller (the send queue) whether and when to.
 */
export class CloudApiError extends Error {
  readonly kind: CloudApiErrorKind;
  /** Meta's error code (0 for network/timeout errors) */
  readonly code: number;
  /** Graph error `type`, e.g. OAuthException */
  readonly type?: string;
  /** the title part of Meta's message: "(#131047) Re-engagement message" -> "Re-engagement message" */
  readonly title?: string;
  /** `error_data.details` */
  readonly details?: string;
  readonly subcode?: number;
  readonly userTitle?: string;
  readonly userMessage?: string;
  /** 0 when no HTTP response was received */
  readonly httpStatus: number;
  readonly fbtraceId?: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;

  constructor(init: CloudApiErrorInit) {
    super(init.message, init.cause !== undefined ? { cause: init.cause } : undefined);
    this.name = 'CloudApiError';
    this.kind = init.kind;
    this.code = init.code;
    this.type = init.type;
    this.title = init.title;
    this.details = init.details;
    this.subcode = init.subcode;
    this.userTitle = init.userTitle;
    this.userMessage = init.userMessage;
    this.httpStatus = init.httpStatus ?? 0;
    this.fbtraceId = init.fbtraceId;
    this.retryable =
      init.kind === 'network' ||
      init.kind === 'connection_lost' ||
      init.kind === 'timeout' ||
      this.httpStatus === 429 ||
      this.httpStatus >= 500 ||
      init.isTransient === true ||
      RETRYABLE_CODES.has(init.code);
    this.retryAfterMs = this.retryable ? (init.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS[init.code]) : undefined;
  }

  is(code: number): boolean {
    return this.code === code;
  }

  /** Build from an HTTP response whose body is (maybe) a Graph error. */
  static fromResponse(httpStatus: number, body: unknown, retryAfterHeader?: string | null): CloudApiError {
    const retryAfterMs = parseRetryAfter(retryAfterHeader);
    const err = (body as GraphApiErrorBody | undefined)?.error;
    if (!err || typeof err !== 'object' || typeof err.code !== 'number') {
      return new CloudApiError({
        // an error status is a refusal even without Meta's body (an edge's HTML 429 or 502: retried, never in doubt,
        // docs/messaging.md); only a success that cannot be read may have been carried out
        kind: httpStatus >= 200 && httpStatus <= 299 ? 'invalid_response' : 'api',
        code: 0,
        httpStatus,
        message: `Cloud API answered HTTP ${httpStatus} without a Graph error body`,
        retryAfterMs,
      });
    }
    const details = typeof err.error_data === 'string' ? err.error_data : err.error_data?.details;
    const title = /^\(#\d+\)\s*(.*)$/.exec(err.message ?? '')?.[1] ?? err.message;
    return new CloudApiError({
      kind: 'api',
      code: err.code,
      httpStatus,
      message: err.message ?? `Cloud API error ${err.code}`,
      type: err.type,
      title,
      details,
      subcode: err.error_subcode,
      userTitle: err.error_user_title,
      userMessage: err.error_user_msg,
      fbtraceId: err.fbtrace_id,
      isTransient: err.is_transient,
      retryAfterMs,
    });
  }
}

/** `Retry-After`: seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export type CloudApiErrorClass =
  | 'throughput' // 130429, 4, 80007, HTTP 429: slow down and retry
  | 'pair_rate' // 131056: retry this recipient later
  | 'transient' // 5xx, network, timeout, platform hiccups: retry with backoff
  | 'auth' // 190: fix the token, do not retry
  | 'window_closed' // 131047: send a template instead
  | 'template' // 132000, 132001, 132012: fix the template or parameters
  | 'recipient' // 131026 and other per-recipient failures
  | 'invalid_request' // 100 and other client errors
  | 'unknown';

export interface ErrorClassification {
  class: CloudApiErrorClass;
  retryable: boolean;
  retryAfterMs?: number;
}

/** Classify any error thrown by the client (or anything else) for the send queue. */
export function classifyCloudApiError(err: unknown): ErrorClassification {
  if (!(err instanceof CloudApiError)) return { class: 'unknown', retryable: false };
  const c = CloudApiErrorCode;
  const cls: CloudApiErrorClass = (() => {
    if (err.code === c.Throughput || err.code === 4 || err.code === 80007 || err.httpStatus === 429)
      return 'throughput';
    if (err.code === c.PairRateLimit) return 'pair_rate';
    if (err.code === c.AccessToken) return 'auth';
    if (err.code === c.ReEngagement) return 'window_closed';
    if (err.code === c.ParameterMismatch || err.code === c.TemplateMissing || err.code === c.ParameterFormatMismatch)
      return 'template';
    if (
      err.code === c.MessageUndeliverable ||
      err.code === c.SpamRateLimit ||
      err.code === 131049 ||
      err.code === 131050
    )
      return 'recipient';
    if (err.retryable) return 'transient';
    if (err.kind === 'api') return 'invalid_request';
    return 'unknown';
  })();
  return { class: cls, retryable: err.retryable, retryAfterMs: err.retryAfterMs };
}

/**
 * No answer came back although the request may have reached the platform (timeout, connection lost, an answer that
 * cannot be read): whatever it asked for may have been done. Meta has no idempotency key, so a send after this is in
 * doubt, not refused.
 */
export function answerLost(err: unknown): boolean {
  return (
    err instanceof CloudApiError &&
    (err.kind === 'timeout' || err.kind === 'connection_lost' || err.kind === 'invalid_response')
  );
}

/** The platform's answer was lost or was a server error: the request may still have been carried out. */
export function mayHaveBeenDone(err: unknown): boolean {
  return answerLost(err) || (err instanceof CloudApiError && err.kind === 'api' && err.httpStatus >= 500);
}

/**
 * Refusals that every send of the number (or of its template) will meet until someone fixes the cause: the access
 * token (190), permissions (10, 200), the account locked (131031), its payment (131042), a policy block (368), the
 * number not registered (133010), the template paused or disabled (132015, 132016). Sending on refuses each message
 * of a campaign in turn: its whole audience would fail within minutes.
 */
const STOPS_EVERY_SEND = new Set<number>([10, 190, 200, 368, 131031, 131042, 132015, 132016, 133010]);

export function stopsEverySend(err: unknown): boolean {
  return err instanceof CloudApiError && err.kind === 'api' && STOPS_EVERY_SEND.has(err.code);
}

export function isRetryableCloudApiError(err: unknown): boolean {
  return err instanceof CloudApiError && err.retryable;
}

/** The platform's reason as a person reads it (Meta's user title and message when given), for our error answers and logs. */
export function platformMessage(err: unknown): string {
  if (err instanceof CloudApiError) {
    const parts = [err.userTitle, err.userMessage ?? err.details ?? err.title ?? err.message].filter(Boolean);
    return parts.join(': ') || err.message;
  }
  return (err as Error)?.message ?? String(err);
}

/** The `platform_error` member of our error answers: Meta's code, subcode, message and details. */
export function platformErrorBody(err: unknown) {
  return err instanceof CloudApiError
    ? {
        code: err.code,
        ...(err.subcode ? { subcode: err.subcode } : {}),
        message: err.message,
        ...(err.details ? { details: err.details } : {}),
      }
    : undefined;
}

/** Meta refused the request itself (a 4xx that retrying will not change, not an expired token): our 400, not a 502. */
export function isRequestRefusedByPlatform(err: unknown): err is CloudApiError {
  return (
    err instanceof CloudApiError &&
    err.kind === 'api' &&
    err.httpStatus >= 400 &&
    err.httpStatus < 500 &&
    !err.retryable &&
    err.code !== 190
  );
}
