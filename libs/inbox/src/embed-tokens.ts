import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AuthService } from '@switchboard/auth';
import { AppConfig, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import { createHmac, randomUUID } from 'node:crypto';

export const PERMISSIONS = ['read', 'send', 'send_template'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** What an embedded inbox may see (ids as the API shows them). Absent = no restriction on that axis. */
export interface EmbedScope {
  messagingPhoneIds?: string[];
  groupIds?: string[];
  contactNumbers?: string[];
}

/** What an embed token and the session exchanged for it carry. */
export interface EmbedGrant {
  accountId: string;
  scope: EmbedScope;
  permissions: Permission[];
  allowedOrigins: string[];
  agentName: string | null;
}

interface EmbedClaims extends EmbedGrant {
  typ: 'embed' | 'embed-session';
  jti: string;
  /** the API client that minted it and its secret version: the token lives only as long as both */
  sub?: string;
  sv?: string;
}

export const SESSION_TTL_SECONDS = 3600;
export const EMBED_TOKEN_INVALID = 'Embed token is invalid';
export const EMBED_TOKEN_EXPIRED = 'Embed token has expired: mint a new one';
export const EMBED_TOKEN_USED = 'Embed token has already been used: mint a new one';
export const SESSION_INVALID = 'Inbox session is invalid or has expired: ask the host page for a new embed token';
export const MINTER_REVOKED =
  'The client that opened this inbox was deleted, its secret rotated or its /conversations grant removed: ask the host page for a new embed token';

/**
 * Embed tokens (minted server to server, single use, at most 10 minutes) and the inbox sessions they are exchanged
 * for (at most 1 hour, kept in the page's memory only). Both are JWTs signed with a key derived from JWT_SECRET for
 * this purpose alone, so neither can pass for an access token nor the other way round. Single use: the token's id is
 * claimed with SET NX in Redis when it is exchanged; the allowed origins are kept by id for the page's CSP.
 */
@Injectable()
export class EmbedTokens {
  private readonly jwt: JwtService;

  constructor(
    private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly auth: AuthService,
  ) {
    const secret = createHmac('sha256', config.JWT_SECRET).update('switchboard embedded inbox').digest();
    this.jwt = new JwtService({
      secret,
      signOptions: { algorithm: 'HS256' },
      verifyOptions: { algorithms: ['HS256'] },
    });
  }

  private key(kind: string, id: string) {
    return `${this.config.REDIS_PREFIX}:embed:${kind}:${id}`;
  }

  /** `minterClientId`: the API client minting (console sessions cannot mint: EmbedController). */
  async mint(
    grant: EmbedGrant,
    ttlSeconds: number,
    minterClientId?: string,
  ): Promise<{ token: string; id: string; expiresAt: Date }> {
    const id = randomUUID();
    const standing = minterClientId ? await this.auth.clientStanding(minterClientId) : undefined;
    const minter = standing ? { sub: minterClientId, sv: standing.secretVersion } : {};
    const token = await this.jwt.signAsync({ ...grant, ...minter, typ: 'embed', jti: id } satisfies EmbedClaims, {
      expiresIn: ttlSeconds,
    });
    // the page's frame-ancestors, by token id: kept an hour past expiry so a late page still shows its error screen
    await this.redis.set(this.key('origins', id), JSON.stringify(grant.allowedOrigins), 'EX', ttlSeconds + 3600);
    return { token, id, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
  }

  /** The allowed origins of a token, by its id or by the token itself (signature checked, expiry not). */
  async allowedOrigins(ref: { id?: string; token?: string }): Promise<{ id: string; origins: string[] } | null> {
    let id = ref.id;
    if (!id && ref.token) {
      const claims = await this.jwt.verifyAsync<EmbedClaims>(ref.token, { ignoreExpiration: true }).catch(() => null);
      if (claims?.typ === 'embed') id = claims.jti;
    }
    if (!id || !/^[0-9a-f-]{36}$/.test(id)) return null;
    const stored = await this.redis.get(this.key('origins', id));
    return stored ? { id, origins: JSON.parse(stored) as string[] } : null;
  }

  /** Consumes an embed token: 401 with a distinct message when it is invalid, expired or already used. */
  async exchange(token: string): Promise<{ sessionToken: string; expiresIn: number; grant: EmbedGrant }> {
    let claims: EmbedClaims;
    try {
      claims = await this.jwt.verifyAsync<EmbedClaims>(token);
    } catch (error) {
      const expired = (error as Error).name === 'TokenExpiredError';
      throw new UnauthorizedException({ message: expired ? EMBED_TOKEN_EXPIRED : EMBED_TOKEN_INVALID });
    }
    if (claims.typ !== 'embed') throw new UnauthorizedException({ message: EMBED_TOKEN_INVALID });
    const remaining = Math.max(1, (claims as unknown as { exp: number }).exp - Math.floor(Date.now() / 1000));
    const claimed = await this.redis.set(this.key('used', claims.jti), '1', 'EX', remaining + 60, 'NX');
    if (claimed !== 'OK') throw new UnauthorizedException({ message: EMBED_TOKEN_USED });
    const grant = await this.standingGrant(claims);
    const sessionToken = await this.jwt.signAsync(
      {
        ...grantOf(claims),
        sub: claims.sub,
        sv: claims.sv,
        typ: 'embed-session',
        jti: randomUUID(),
      } satisfies EmbedClaims,
      { expiresIn: SESSION_TTL_SECONDS },
    );
    return { sessionToken, expiresIn: SESSION_TTL_SECONDS, grant };
  }

  /** The grant of a session token (Authorization header), or 401. */
  async session(token: string | undefined): Promise<EmbedGrant> {
    const claims = token ? await this.jwt.verifyAsync<EmbedClaims>(token).catch(() => null) : null;
    if (!claims || claims.typ !== 'embed-session') throw new UnauthorizedException({ message: SESSION_INVALID });
    return this.standingGrant(claims);
  }

  /**
   * The grant as the minting client may still give it (checked on every use, from the client's cached row): 401 once
   * the client is deleted, its secret rotated or its /conversations grant removed; sending only while it has
   * /send-message. As an access token of that client would be.
   */
  private async standingGrant(claims: EmbedClaims): Promise<EmbedGrant> {
    const grant = grantOf(claims);
    if (!claims.sub) return grant;
    const standing = await this.auth.clientStanding(claims.sub);
    if (!standing || standing.secretVersion !== claims.sv || !standing.grants.includes('/conversations'))
      throw new UnauthorizedException({ message: MINTER_REVOKED });
    if (standing.grants.includes('/send-message')) return grant;
    return { ...grant, permissions: grant.permissions.filter((p) => p === 'read') };
  }
}

function grantOf(claims: EmbedClaims): EmbedGrant {
  return {
    accountId: claims.accountId,
    scope: claims.scope,
    permissions: claims.permissions,
    allowedOrigins: claims.allowedOrigins,
    agentName: claims.agentName ?? null,
  };
}
