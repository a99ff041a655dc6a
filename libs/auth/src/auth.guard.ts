import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  Logger,
  Optional,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { accessRefused, attachAccessCheck } from '@switchboard/core';
import { AuthService } from './auth.service';
import {
  CONSOLE_SESSION_RESOLVER,
  CSRF_HEADER,
  CSRF_REFUSED,
  readCookie,
  SESSION_COOKIE,
  UNSAFE_METHODS,
  type ConsoleSessionResolver,
} from './console-session';
import { GRANT_KEY, grantRequired, PUBLIC_KEY, SIGNED_IN_KEY } from './grants';
import { perRoute } from './route-metadata';
import type { AuthenticatedClient } from './token-claims';

export const SESSION_ENDED = { message: 'Not signed in (the session ended or expired)' };

/**
 * Global guard: every route needs a valid access token and its declared grant, unless marked @Public().
 * The token is sent as issued (SPEC §5.2); a `Bearer ` prefix is accepted too. Without a token, the console's
 * session cookie is accepted instead (its role maps to grants, see libs/users/src/roles.ts); unsafe requests made
 * with the cookie must carry the session's CSRF token in X-Switchboard-CSRF.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly logger = new Logger(AuthGuard.name);
  /** A route's @Public/@SignedIn/@RequireGrant, read from its metadata once. */
  private readonly routeRules = perRoute<RouteRules>((targets) => ({
    isPublic: Boolean(this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)),
    signedInOnly: Boolean(this.reflector.getAllAndOverride<boolean>(SIGNED_IN_KEY, targets)),
    grant: this.reflector.getAllAndOverride<string>(GRANT_KEY, targets),
  }));

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    @Optional() @Inject(CONSOLE_SESSION_RESOLVER) private readonly sessions?: ConsoleSessionResolver,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.routeRules(context);
    if (route.isPublic) return true;
    const request = context.switchToHttp().getRequest();
    request.client = await this.authorize(request, route, context);
    // asked again by live streams while they stay open (a sign-out, an expiry or a revoked client ends them)
    attachAccessCheck(request, () => this.authorize(request, route, context).then(() => true, accessRefused));
    return true;
  }

  /** The caller behind the request's token or session cookie, if it may use this route; throws the refusal otherwise. */
  private async authorize(
    request: { headers: Record<string, string | undefined>; method: string },
    route: RouteRules,
    context: ExecutionContext,
  ): Promise<AuthenticatedClient> {
    const header: string | undefined = request.headers.authorization;
    const token = header?.replace(/^Bearer\s+/i, '').trim();
    let client: AuthenticatedClient;
    if (token) {
      // Checked on every request (kept in memory until PostgreSQL notifies a change): a deleted client or a rotated
      // secret is refused at once, a grant change applies at once.
      client = await this.auth.authenticateAccessToken(token);
    } else {
      const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
      if (!cookie || !this.sessions) throw new UnauthorizedException({ message: 'jwt must be provided' });
      const principal = await this.sessions.resolve(cookie);
      if (!principal) throw new UnauthorizedException(SESSION_ENDED);
      if (UNSAFE_METHODS.has(request.method) && request.headers[CSRF_HEADER] !== principal.csrfToken)
        throw new ForbiddenException(CSRF_REFUSED);
      client = principal;
    }

    if (route.signedInOnly) return client;
    const grant = route.grant;
    if (!grant) {
      // Fail closed: a route that forgot to declare its grant is reachable by nobody.
      this.logger.error(`Route ${context.getClass().name}.${context.getHandler().name} declares no grant`);
      throw new ForbiddenException({ message: 'Unauthorized to make this request' });
    }
    if (!client.grants.includes(grant)) throw grantRequired(grant);
    return client;
  }
}

interface RouteRules {
  isPublic: boolean;
  signedInOnly: boolean;
  grant: string | undefined;
}
