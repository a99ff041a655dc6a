import type { AuthenticatedClient } from './token-claims';

/** Name of the console's session cookie (httpOnly, SameSite=Lax). */
export const SESSION_COOKIE = 'sb_session';
/** Header every unsafe request made with the session cookie must carry, holding the session's CSRF token. */
export const CSRF_HEADER = 'x-switchboard-csrf';

/** A signed-in person, as the auth guard sees them: the same grants model as an API client, plus the user. */
export interface ConsolePrincipal extends AuthenticatedClient {
  userId: string;
  email: string;
  role: string;
  csrfToken: string;
}

/**
 * Resolves a session cookie value to its person (null when unknown, expired or signed out). Provided globally by
 * libs/users; the auth guard uses it when a request has no access token.
 */
export interface ConsoleSessionResolver {
  resolve(cookieValue: string): Promise<ConsolePrincipal | null>;
}
export const CONSOLE_SESSION_RESOLVER = Symbol('CONSOLE_SESSION_RESOLVER');

/** The value of one cookie from a Cookie header (no dependency: the console sets one cookie). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // not percent-encoded text (`%`): no session, not a 500
      }
    }
  }
  return undefined;
}

export const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
export const CSRF_REFUSED = {
  message: 'CSRF check failed: requests made with the console session must send the X-Switchboard-CSRF header',
};

/**
 * Fastify onRequest hook: refuses an unsafe request that carries the session cookie but no CSRF header before its
 * body is even parsed (a cross-site HTML form posts application/x-www-form-urlencoded, which would otherwise get
 * a 415). The guard then checks the header's value against the session.
 */
export function csrfPrecheck(
  request: { method: string; headers: Record<string, string | string[] | undefined> },
  reply: { code(status: number): { send(body: unknown): unknown } },
  done: () => void,
): void {
  const cookie = request.headers.cookie;
  if (
    UNSAFE_METHODS.has(request.method) &&
    !request.headers.authorization &&
    typeof cookie === 'string' &&
    readCookie(cookie, SESSION_COOKIE) &&
    !request.headers[CSRF_HEADER]
  ) {
    reply.code(403).send({ statusCode: 403, ...CSRF_REFUSED });
    return;
  }
  done();
}
