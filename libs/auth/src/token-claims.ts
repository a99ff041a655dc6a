/** What an access token says about its bearer; attached to the request by the AuthGuard. */
export interface AccessClaims {
  typ: 'access';
  sub: string; // client id
  acc: string; // account id
  grants: string[];
  /** fingerprint of the client secret the token was issued under (client-lifecycle.ts); absent in tokens issued before it existed */
  sv?: string;
}

export interface RefreshClaims {
  typ: 'refresh';
  sub: string;
  jti: string;
}

export interface AuthenticatedClient {
  clientId: string;
  accountId: string;
  grants: string[];
}
