import { randomBytes } from 'node:crypto';

/**
 * Errors in the Graph API's shape:
 * `{ error: { message, type, code, error_data?: { messaging_product, details }, error_subcode?, is_transient?, fbtrace_id } }`.
 *
 * HTTP statuses mirror what the Cloud API answers (e.g. 130429 "Rate limit hit" is a 400 on the
 * real platform, not a 429; 132001 is a 404; 190 is a 401).
 */
export interface GraphErrorBody {
  error: {
    message: string;
    type: string;
    code: number;
    error_subcode?: number;
    error_user_title?: string;
    error_user_msg?: string;
    is_transient?: boolean;
    error_data?: { messaging_product: 'whatsapp'; details: string };
    fbtrace_id: string;
  };
}

export class GraphError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly body: GraphErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error.message);
  }
}

export function fbtraceId(): string {
  return randomBytes(8).toString('base64url');
}

interface ErrorSpec {
  status: number;
  title: string;
  type?: string;
}

/** The Cloud API codes the sandbox produces, with Meta's titles and HTTP statuses. */
export const ERRORS: Record<number, ErrorSpec> = {
  1: { status: 500, title: 'An unknown error occurred', type: 'OAuthException' },
  2: { status: 503, title: 'Service temporarily unavailable', type: 'OAuthException' },
  100: { status: 400, title: 'Invalid parameter' },
  190: { status: 401, title: 'Invalid OAuth access token', type: 'OAuthException' },
  2500: { status: 400, title: 'Unknown path components', type: 'OAuthException' },
  130429: { status: 400, title: 'Rate limit hit' },
  131000: { status: 500, title: 'Something went wrong' },
  131026: { status: 400, title: 'Message Undeliverable' },
  131047: { status: 400, title: 'Re-engagement message' },
  131049: { status: 400, title: 'This message was not delivered to maintain healthy ecosystem engagement.' },
  131050: {
    status: 400,
    title:
      'Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.',
  },
  131056: { status: 400, title: '(Business Account, Consumer Account) pair rate limit hit' },
  132000: { status: 400, title: 'Number of parameters does not match the expected number of params' },
  132001: { status: 404, title: 'Template name does not exist in the translation' },
  132012: { status: 400, title: 'Parameter format does not match format in the created template' },
  132015: { status: 400, title: 'Template is Paused' },
  132016: { status: 400, title: 'Template is Disabled' },
  132018: { status: 400, title: 'There was an issue with the parameters in your template.' },
  139001: { status: 400, title: "Flow can't be updated" },
  139002: { status: 400, title: 'Publishing Flow in invalid state' },
  139003: { status: 400, title: "Flow can't be deprecated" },
  139004: { status: 400, title: "Flow can't be deleted" },
};

export function titleOf(code: number): string {
  return ERRORS[code]?.title ?? 'Unknown error';
}

/** A Cloud API error: message `(#code) title`, `error_data.details` with the specifics. */
export function cloudError(
  code: number,
  details?: string,
  extra: {
    subcode?: number;
    status?: number;
    message?: string;
    transient?: boolean;
    headers?: Record<string, string>;
  } = {},
): GraphError {
  const spec = ERRORS[code] ?? { status: 400, title: 'Unknown error' };
  const body: GraphErrorBody = {
    error: {
      message: extra.message ?? `(#${code}) ${spec.title}`,
      type: spec.type ?? 'OAuthException',
      code,
      ...(extra.subcode !== undefined ? { error_subcode: extra.subcode } : {}),
      ...(extra.transient !== undefined ? { is_transient: extra.transient } : {}),
      ...(details !== undefined ? { error_data: { messaging_product: 'whatsapp', details } } : {}),
      fbtrace_id: fbtraceId(),
    },
  };
  return new GraphError(extra.status ?? spec.status, body, extra.headers);
}

export const invalidParam = (details: string): GraphError => cloudError(100, details);
