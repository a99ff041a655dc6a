import { ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import { AppConfig } from '@switchboard/core';
import { randomUUID } from 'node:crypto';
import { Repository } from 'typeorm';
import { ApiClient } from './api-client.entity';
import { secretVersion } from './client-lifecycle';
import { ClientStateCache } from './client-state-cache';
import { secretMatches } from './credentials';
import type { AccessClaims, AuthenticatedClient, RefreshClaims } from './token-claims';

export interface TokenPair {
  token: string;
  refreshToken: string;
}

/** SPEC §5: access tokens (1 h) and rotating refresh tokens (7 d, only the newest is valid). */
@Injectable()
export class AuthService {
  constructor(
    @InjectRepository(ApiClient) private readonly clients: Repository<ApiClient>,
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
    private readonly clientStates: ClientStateCache,
  ) {}

  async authenticate(clientId: string | undefined, clientSecret: string | undefined): Promise<TokenPair> {
    if (!clientId || !clientSecret) throw new UnauthorizedException({ error: 'Missing credentials' });
    const client = await this.clients.findOneBy({ clientId });
    if (!client || !secretMatches(clientSecret, client.secretHash))
      throw new UnauthorizedException({ error: 'Invalid credentials' });

    // A new authentication replaces whichever refresh token was valid before; only while the secret checked is still
    // the client's: a rotation committed in between must not be outlived by the refresh token stored here.
    const jti = randomUUID();
    const stored = await this.clients.update({ id: client.id, secretHash: client.secretHash }, { refreshTokenId: jti });
    if (!stored.affected) throw new UnauthorizedException({ error: 'Invalid credentials' });
    return this.issuePair(client, jti);
  }

  async refresh(refreshToken: string | undefined): Promise<TokenPair> {
    if (!refreshToken) throw new UnauthorizedException({ message: 'Refresh token required' });
    const claims = this.verifyRefreshToken(refreshToken, false);

    // Compare-and-swap, so two concurrent refreshes with the same token cannot both win.
    const jti = randomUUID();
    const [rows] = (await this.clients.query(
      `UPDATE api_clients SET refresh_token_id = $1 WHERE client_id = $2 AND refresh_token_id = $3
       RETURNING id, account_id AS "accountId", client_id AS "clientId", grants, secret_hash AS "secretHash"`,
      [jti, claims.sub, claims.jti],
    )) as [Pick<ApiClient, 'id' | 'accountId' | 'clientId' | 'grants' | 'secretHash'>[], number];
    const client = rows[0];
    if (!client) throw new ForbiddenException({ message: 'Refresh token not recognized' });
    return this.issuePair(client, jti);
  }

  /** Revokes the refresh token if it is the current one. Issued access tokens stay valid until they expire. */
  async logout(refreshToken: string): Promise<void> {
    const claims = this.verifyRefreshToken(refreshToken, true);
    await this.clients.update({ clientId: claims.sub, refreshTokenId: claims.jti }, { refreshTokenId: null });
  }

  /**
   * The caller of a request: a valid access token whose client still exists (deleted: refused at once) and whose secret
   * has not been rotated since the token was issued; grants and account are read from the client as it is now, so
   * `set-grants` applies at once too. The row is kept in memory until PostgreSQL notifies a change (ClientStateCache).
   */
  async authenticateAccessToken(token: string): Promise<AuthenticatedClient> {
    const claims = this.verifyAccessToken(token);
    const state = await this.clientStates.get(claims.sub);
    if (!state) throw new UnauthorizedException({ message: 'Client not found: it was deleted' });
    if (claims.sv !== undefined && claims.sv !== state.secretVersion)
      throw new UnauthorizedException({ message: 'Token revoked: the client secret was rotated' });
    return { clientId: claims.sub, accountId: state.accountId, grants: state.grants };
  }

  /** An API client as it is now (grants, secret version), for tokens issued on its behalf; undefined once deleted. */
  clientStanding(clientId: string): Promise<{ grants: string[]; secretVersion: string } | undefined> {
    return this.clientStates.get(clientId);
  }

  /** Tokens whose signature was checked, with their claims, until they expire (a client sends one token many times). */
  private readonly verified = new Map<string, AccessClaims & { exp: number }>();

  /** Verifies an access token; the message of a failure is jsonwebtoken's (`jwt expired`, `invalid signature`…). */
  verifyAccessToken(token: string): AccessClaims {
    const known = this.verified.get(token);
    if (known && Date.now() < known.exp * 1000) return known;
    let claims: AccessClaims & { exp?: number };
    try {
      claims = this.jwt.verify<AccessClaims & { exp?: number }>(token);
    } catch (error) {
      this.verified.delete(token);
      throw new UnauthorizedException({ message: (error as Error).message });
    }
    if (claims.typ !== 'access') throw new UnauthorizedException({ message: 'invalid token type' });
    if (claims.exp !== undefined) {
      if (this.verified.size >= 10_000) this.verified.clear(); // bounded; whoever comes next is verified again
      this.verified.set(token, claims as AccessClaims & { exp: number });
    }
    return claims;
  }

  private verifyRefreshToken(token: string, ignoreExpiration: boolean): RefreshClaims {
    let claims: RefreshClaims;
    try {
      claims = this.jwt.verify<RefreshClaims>(token, { ignoreExpiration });
    } catch {
      throw new ForbiddenException({ message: 'Invalid refresh token' });
    }
    if (claims.typ !== 'refresh' || !claims.jti || !claims.sub)
      throw new ForbiddenException({ message: 'Invalid refresh token' });
    return claims;
  }

  private issuePair(
    client: Pick<ApiClient, 'accountId' | 'clientId' | 'grants' | 'secretHash'>,
    jti: string,
  ): TokenPair {
    const access: AccessClaims = {
      typ: 'access',
      sub: client.clientId,
      acc: String(client.accountId),
      grants: client.grants,
      sv: secretVersion(client.secretHash),
    };
    const refresh: RefreshClaims = { typ: 'refresh', sub: client.clientId, jti };
    return {
      token: this.jwt.sign(access, { expiresIn: this.config.ACCESS_TOKEN_TTL_SECONDS }),
      refreshToken: this.jwt.sign(refresh, { expiresIn: this.config.REFRESH_TOKEN_TTL_SECONDS }),
    };
  }
}
