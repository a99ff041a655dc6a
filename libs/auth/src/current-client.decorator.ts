import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AuthenticatedClient } from './token-claims';

/** The authenticated client of the request: `@CurrentClient() client` → {clientId, accountId, grants}. */
export const CurrentClient = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthenticatedClient => {
  return ctx.switchToHttp().getRequest().client;
});

/** Shorthand for the caller's account id, the scope of every query. */
export const AccountId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  return ctx.switchToHttp().getRequest().client.accountId;
});
