import { CanActivate, ExecutionContext, ForbiddenException, Injectable, Logger, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthService } from './auth.service';
import { GRANT_KEY, PUBLIC_KEY } from './grants';
import type { AuthenticatedClient } from './token-claims';

/**
 * Global guard: every route needs a valid access token and its declared grant, unless marked @Public().
 * The token is sent as issued (SPEC §5.2); a `Bearer ` prefix is accepted too.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly logger = new Logger(AuthGuard.name);

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) return true;

    const request = context.switchToHttp().getRequest();
    const header: string | undefined = request.headers.authorization;
    const token = header?.replace(/^Bearer\s+/i, '').trim();
    if (!token) throw new UnauthorizedException({ message: 'jwt must be provided' });

    // Re-read on every request: a deleted client or a rotated secret is refused at once, a grant change applies at once.
    const client: AuthenticatedClient = await this.auth.authenticateAccessToken(token);
    request.client = client;

    const grant = this.reflector.getAllAndOverride<string>(GRANT_KEY, targets);
    if (!grant) {
      // Fail closed: a route that forgot to declare its grant is reachable by nobody.
      this.logger.error(`Route ${context.getClass().name}.${context.getHandler().name} declares no grant`);
      throw new ForbiddenException({ message: 'Unauthorized to make this request' });
    }
    if (!client.grants.includes(grant)) throw new ForbiddenException({ message: 'Unauthorized to make this request', required_grant: grant });
    return true;
  }
}
