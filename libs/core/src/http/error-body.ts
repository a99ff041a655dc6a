import { STATUS_CODES } from 'node:http';
import type { FieldError } from './validation';

/**
 * The one error shape of the API (docs/errors.md). `message` is always a sentence for a person; `field` names the input
 * at fault when there is one (the first of `errors`); other members are those SPEC.md or an endpoint's docs name.
 */
export interface ErrorBody {
  statusCode: number;
  message: string;
  field?: string;
  errors?: FieldError[];
  [member: string]: unknown;
}

/** Normalises what an HttpException carries (a string or any object) into the error shape, keeping SPEC members. */
export function errorBody(status: number, response: unknown): ErrorBody {
  if (typeof response === 'string') return { statusCode: status, message: response };
  const {
    statusCode: _ignored,
    message,
    error,
    field,
    errors,
    ...members
  } = (response ?? {}) as Record<string, unknown>;
  const text = Array.isArray(message)
    ? message.join('; ')
    : typeof message === 'string'
      ? message
      : typeof error === 'string'
        ? error
        : (STATUS_CODES[status] ?? 'Error');
  const body: ErrorBody = { statusCode: status, message: text };
  const firstField =
    typeof field === 'string'
      ? field
      : Array.isArray(errors) && typeof errors[0]?.field === 'string'
        ? (errors[0].field as string)
        : undefined;
  if (firstField !== undefined) body.field = firstField;
  if (Array.isArray(errors)) body.errors = errors as FieldError[];
  // SPEC §7: authentication failures carry `error` ("Missing credentials" / "Invalid credentials"); Nest's generic
  // `error: "Bad Request"` beside a message is dropped.
  if (message === undefined && typeof error === 'string') body.error = error;
  if (error !== undefined && typeof error !== 'string') body.error = error; // e.g. the failing checks of GET /health/ready
  return Object.assign(body, members);
}

const CLIENT_ERROR_MESSAGES: Record<string, (error: { message?: string }) => string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'Unsupported media type: send the request body as application/json',
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'The request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'The request body is empty',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'Content-Length does not match the length of the body',
};

/** Fastify's own 4xx errors (raised before a route handler runs) in the error shape; undefined for anything else. */
export function fastifyClientError(exception: unknown): ErrorBody | undefined {
  const error = exception as { statusCode?: number; code?: string; message?: string; name?: string } | undefined;
  if (typeof error?.statusCode !== 'number' || error.statusCode < 400 || error.statusCode >= 500) return undefined;
  const describe =
    (error.code && CLIENT_ERROR_MESSAGES[error.code]) ||
    (error.name === 'SyntaxError' ? CLIENT_ERROR_MESSAGES.FST_ERR_CTP_INVALID_JSON_BODY : undefined);
  return {
    statusCode: error.statusCode,
    message: describe ? describe(error) : (error.message ?? STATUS_CODES[error.statusCode] ?? 'Bad request'),
  };
}
