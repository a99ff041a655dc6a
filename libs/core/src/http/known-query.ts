import { applyDecorators, CanActivate, ExecutionContext, Injectable, Type, UseGuards } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { validationException } from './validation';

/** The properties a query DTO validates (its own and inherited ones, e.g. PaginationQuery's page and pageSize). */
export function queryParametersOf(dto: Type<unknown>): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}

/**
 * A list endpoint that refuses query parameters it does not know, with a 400 naming each one, instead of ignoring
 * them (a mistyped filter such as `?groupId=` would otherwise list everything):
 *
 *   @Get() @KnownQueryParameters(ListContactsQuery) list(@Query() query: ListContactsQuery) { ... }
 *
 * The allowed names are the properties the DTO validates. Runs as a guard: after authentication, before validation.
 */
export function KnownQueryParameters(dto: Type<unknown>) {
  const allowed = queryParametersOf(dto);
  @Injectable()
  class KnownQueryParametersGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      const query = context.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query ?? {};
      const unknown = Object.keys(query).filter((name) => !allowed.includes(name));
      if (unknown.length)
        throw validationException(
          unknown.map((name) => ({
            field: name,
            message: `unknown query parameter ${name}; allowed: ${allowed.join(', ')}`,
          })),
        );
      return true;
    }
  }
  return applyDecorators(UseGuards(KnownQueryParametersGuard));
}
