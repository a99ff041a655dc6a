import { CanActivate, ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import { accessRefused } from '@switchboard/core';
import { EmbedTokens } from './embed-tokens';
import type { InboxPrincipal } from './inbox.service';

/** Routes of the embedded inbox: the session token from POST /v1/embed/session, in the Authorization header. */
@Injectable()
export class EmbedSessionGuard implements CanActivate {
  constructor(private readonly tokens: EmbedTokens) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest();
    const header: string | undefined = request.headers.authorization;
    const token = header?.replace(/^Bearer\s+/i, '').trim();
    const grant = await this.tokens.session(token);
    request.inbox = {
      accountId: grant.accountId,
      scope: grant.scope,
      permissions: grant.permissions,
      // a live stream outlasts this check: it asks again while open (the session's expiry, the minter's standing)
      stillValid: () => this.tokens.session(token).then(() => true, accessRefused),
    } satisfies InboxPrincipal;
    return true;
  }
}

/** The embedded session's principal (set by EmbedSessionGuard). */
export const EmbedPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): InboxPrincipal => ctx.switchToHttp().getRequest().inbox,
);

/** A console agent or API client: the whole account; sends need the `/send-message` grant. */
export const AccountPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): InboxPrincipal => {
  const client = ctx.switchToHttp().getRequest().client as { accountId: string; grants: string[] };
  return {
    accountId: client.accountId,
    scope: {},
    permissions: client.grants.includes('/send-message') ? ['read', 'send', 'send_template'] : ['read'],
  };
});
