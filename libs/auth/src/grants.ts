import { applyDecorators, ForbiddenException, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/** SPEC §2: the areas a Client ID can be granted. A new account's client has all of them. */
export const GRANTS = [
  '/send-message',
  '/templates',
  '/contacts',
  '/conversations',
  '/account',
  '/campaigns',
  '/workflows',
  '/flow',
] as const;
export type Grant = (typeof GRANTS)[number];

export function isGrant(value: string): value is Grant {
  return (GRANTS as readonly string[]).includes(value);
}

export const GRANT_KEY = 'switchboard:grant';
export const PUBLIC_KEY = 'switchboard:public';

/**
 * The grant a controller or route needs (SPEC §5.8). Every authenticated endpoint declares one. The OpenAPI document
 * shows it as `x-required-grant` (and the 403 of a caller without it: apps/api/src/openapi).
 */
export const RequireGrant = (grant: Grant) =>
  applyDecorators(SetMetadata(GRANT_KEY, grant), ApiExtension('x-required-grant', grant));

/** No access token needed (authentication endpoints, health, inbound webhooks); `x-public` in the OpenAPI document. */
export const Public = () => applyDecorators(SetMetadata(PUBLIC_KEY, true), ApiExtension('x-public', true));

export const SIGNED_IN_KEY = 'switchboard:signed-in';

/** Any authenticated caller (token or console session), no grant needed (e.g. GET /console/me). */
export const RequireSignedIn = () => SetMetadata(SIGNED_IN_KEY, true);

/** SPEC's 403 for a caller without the grant a request needs. */
export const grantRequired = (grant: string) =>
  new ForbiddenException({ message: 'Unauthorized to make this request', required_grant: grant });
