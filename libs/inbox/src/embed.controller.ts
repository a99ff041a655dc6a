import {
  BadRequestException,
  Body,
  Controller,
  ForbiddenException,
  Get,
  HttpCode,
  Inject,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiExcludeEndpoint, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { AccountsService } from '@switchboard/accounts';
import {
  addressKey,
  type AuthenticatedClient,
  CurrentClient,
  grantRequired,
  Public,
  RedisThrottlerStorage,
  RequireGrant,
} from '@switchboard/auth';
import { ContactsService } from '@switchboard/contacts';
import { AppConfig, normalizePhone, REDIS } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbedTokens } from './embed-tokens';
import { ExchangeEmbedTokenDto, MintEmbedTokenDto } from './inbox.dto';

export const CONSOLE_CANNOT_MINT =
  "Embed tokens are minted by your server with an API client's access token, not from a console session";

/** The built page (apps/console's embed-chat entry, `npm run build`). */
const EMBED_PAGE = join(process.cwd(), 'dist', 'console', 'embed-chat.html');

const pageCsp = (origins: string[]) =>
  [
    "default-src 'self'",
    "base-uri 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    `frame-ancestors ${origins.length ? origins.join(' ') : "'none'"}`,
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self'",
  ].join('; ');

const badField = (field: string, message: string) =>
  new BadRequestException({ statusCode: 400, message, errors: [{ field, message }] });

/**
 * The embeddable inbox's door (docs/inbox.md): a customer's server mints a short-lived single-use embed token, its
 * page frames `{app_url}/embed-chat`, whose script exchanges the token for an inbox session (30 per minute per IP).
 */
@ApiTags('Embedded inbox')
@Controller()
export class EmbedController {
  private readonly limiter: RedisThrottlerStorage;

  constructor(
    private readonly tokens: EmbedTokens,
    private readonly accounts: AccountsService,
    private readonly contacts: ContactsService,
    private readonly config: AppConfig,
    @Inject(REDIS) redis: Redis,
  ) {
    this.limiter = new RedisThrottlerStorage(redis, config.REDIS_PREFIX);
  }

  @Post('v1/embed/tokens')
  @HttpCode(201)
  @RequireGrant('/conversations')
  @ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
  @ApiOperation({ summary: 'Mint a single-use embed token (server to server) and the URL of the inbox page' })
  @ApiResponse({
    status: 201,
    description: 'the token, the page URL to put in an <iframe>, and when the token expires',
    schema: {
      type: 'object',
      properties: {
        embedToken: { type: 'string' },
        embedUrl: { type: 'string' },
        expiresAt: { type: 'string', format: 'date-time' },
      },
      example: {
        embedToken: 'eyJhbGciOiJIUzI1NiIs…',
        embedUrl: 'https://switchboard.example.com/embed-chat?e=3f0c…#token=eyJhbGciOiJIUzI1NiIs…',
        expiresAt: '2026-11-25T10:05:00.000Z',
      },
    },
  })
  async mint(@CurrentClient() client: AuthenticatedClient, @Body() body: MintEmbedTokenDto) {
    const { accountId } = client;
    // A session holds its minting client's standing and is checked against it on every use; a console person has no
    // such standing (deleted, signed out or demoted, their sessions went on), so only API clients mint.
    if ('userId' in client) throw new ForbiddenException({ statusCode: 403, message: CONSOLE_CANNOT_MINT });
    // a token cannot carry more than its minter may do: sending needs the /send-message grant, as on /v1/inbox
    if (body.permissions.some((p) => p !== 'read') && !client.grants.includes('/send-message'))
      throw grantRequired('/send-message');
    const scope = body.scope ?? {};
    for (const [i, id] of (scope.messagingPhoneIds ?? []).entries())
      if (!(await this.accounts.findPhoneNumber(accountId, id)))
        throw badField(
          `scope.messagingPhoneIds[${i}]`,
          `scope.messagingPhoneIds[${i}] is not a number of this account`,
        );
    const missing = await this.contacts.missingGroups(accountId, scope.groupIds ?? []);
    if (missing.length) throw badField('scope.groupIds', `scope.groupIds: no such group: ${missing.join(', ')}`);
    const contactNumbers = (scope.contactNumbers ?? []).map((n, i) => {
      const digits = normalizePhone(n);
      if (!digits) throw badField(`scope.contactNumbers[${i}]`, `scope.contactNumbers[${i}] is not a phone number`);
      return digits;
    });
    const minted = await this.tokens.mint(
      {
        accountId,
        scope: {
          ...(scope.messagingPhoneIds?.length ? { messagingPhoneIds: scope.messagingPhoneIds } : {}),
          ...(scope.groupIds?.length ? { groupIds: scope.groupIds } : {}),
          ...(contactNumbers.length ? { contactNumbers } : {}),
        },
        permissions: [...new Set(body.permissions)],
        allowedOrigins: [...new Set(body.allowedOrigins.map((o) => o.toLowerCase()))],
        agentName: body.agentName ?? null,
      },
      body.ttlSeconds ?? 300,
      client.clientId,
    );
    return {
      embedToken: minted.token,
      embedUrl: `${this.config.baseUrl}/embed-chat?e=${minted.id}#token=${minted.token}`,
      expiresAt: minted.expiresAt.toISOString(),
    };
  }

  @Post('v1/embed/session')
  @HttpCode(200)
  @Public()
  @SkipThrottle()
  @ApiOperation({ summary: 'Exchange an embed token (once) for an inbox session; 30 requests per minute per IP' })
  @ApiResponse({
    status: 200,
    description: 'the session token (send it as Authorization to /v1/embed/inbox/*), its lifetime, scope, permissions',
    schema: {
      type: 'object',
      example: {
        sessionToken: 'eyJhbGciOiJIUzI1NiIs…',
        expiresIn: 3600,
        scope: { messagingPhoneIds: ['106540352242922'] },
        permissions: ['read', 'send'],
        agentName: 'Dana (support)',
      },
    },
  })
  @ApiResponse({
    status: 401,
    description: 'Embed token is invalid | Embed token has expired: mint a new one | … has already been used',
  })
  @ApiResponse({ status: 429, description: 'more than 30 exchanges in a minute from this IP; see Retry-After' })
  async exchange(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: ExchangeEmbedTokenDto,
  ) {
    const limit = this.config.EMBED_SESSION_RATE_LIMIT_PER_MINUTE;
    const windowMs = this.config.RATE_LIMIT_WINDOW_MS;
    const { isBlocked, timeToExpire } = await this.limiter.increment(
      `embed-session:ip:${addressKey(request.ip)}`,
      windowMs,
      limit,
    );
    if (isBlocked) {
      void reply.status(429).header('retry-after', String(timeToExpire));
      return {
        statusCode: 429,
        message: `Rate limit exceeded: ${limit} session exchanges per ${Math.round(windowMs / 1000)} seconds. Retry after ${timeToExpire} seconds.`,
      };
    }
    const { sessionToken, expiresIn, grant } = await this.tokens.exchange(body.embedToken);
    return { sessionToken, expiresIn, scope: grant.scope, permissions: grant.permissions, agentName: grant.agentName };
  }

  /** The page: framed only by the token's allowed origins, never sends a referrer. */
  @Get('embed-chat')
  @Public()
  @SkipThrottle()
  @ApiExcludeEndpoint()
  async page(
    @Query('e') id: string | undefined,
    @Query('token') token: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const found = await this.tokens.allowedOrigins({
      id: typeof id === 'string' ? id : undefined,
      token: typeof token === 'string' ? token : undefined,
    });
    const html = await readFile(EMBED_PAGE, 'utf8').catch(() => null);
    reply.removeHeader('x-frame-options');
    void reply
      .header('content-security-policy', pageCsp(found?.origins ?? []))
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store');
    if (!html) {
      void reply.status(404).send({ statusCode: 404, message: 'The inbox page is not built (npm run build)' });
      return;
    }
    void reply.type('text/html; charset=utf-8').send(html);
  }
}
