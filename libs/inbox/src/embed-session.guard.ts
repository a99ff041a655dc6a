import { CanActivate, ExecutionContext, HttpException, Inject, Injectable, createParamDecorator } from '@nestjs/common';
import { RedisThrottlerStorage } from '@switchboard/auth';
import { accessRefused, AppConfig, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import { createHash } from 'node:crypto';
import { EmbedTokens } from './embed-tokens';
import type { InboxPrincipal } from './inbox.service';

/**
 * Routes of the embedded inbox: the session token from POST /v1/embed/session, in the Authorization header, counted
 * against the session's rate limit (EMBED_INBOX_RATE_LIMIT_PER_MINUTE; 429 with Retry-After past it).
 */
@Injectable()
export class EmbedSessionGuard implements CanActivate {
  private readonly limiter: RedisThrottlerStorage;

  constructor(
    private readonly tokens: EmbedTokens,
    private readonly config: AppConfig,
    @Inject(REDIS) redis: Redis,
  ) {
    this.limiter = new RedisThrottlerStorage(redis, config.REDIS_PREFIX);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest();
    const header: string | undefined = request.headers.authorization;
    const token = header?.replace(/^Bearer\s+/i, '').trim();
    const grant = await this.tokens.session(token);
    await this.count(token!, context);
    request.inbox = {
      accountId: grant.accountId,
      scope: grant.scope,
      permissions: grant.permissions,
      // a live stream outlasts this check: it asks again while open (the session's expiry, the minter's standing)
      stillValid: () => this.tokens.session(token).then(() => true, accessRefused),
    } satisfies InboxPrincipal;
    return true;
  }

  private async count(token: string, context: ExecutionContext): Promise<void> {
    const limit = this.config.EMBED_INBOX_RATE_LIMIT_PER_MINUTE;
    const windowMs = this.config.RATE_LIMIT_WINDOW_MS;
    const session = createHash('sha256').update(token).digest('hex').slice(0, 32);
    const { isBlocked, timeToExpire } = await this.limiter.increment(`embed-inbox:${session}`, windowMs, limit);
    if (!isBlocked) return;
    context.switchToHttp().getResponse().header('retry-after', String(timeToExpire));
    throw new HttpException(
      {
        statusCode: 429,
        message: `Rate limit exceeded: ${limit} requests of this inbox session per ${Math.round(windowMs / 1000)} seconds. Retry after ${timeToExpire} seconds.`,
      },
      429,
    );
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
