import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy, ValidationOptions } from 'class-validator';

/** Highest page number accepted; far past any real listing, low enough that offsets never overflow. */
export const MAX_PAGE = 2_147_483_647;

export interface PageRequest {
  page: number;
  pageSize: number;
}

export interface PageMeta {
  page: number;
  pageSize: number;
  total: number;
}

/**
 * Query strings arrive as text: only plain decimal digits become numbers. Anything else (`abc`, `1.5`, `1e2`,
 * `-1`, an empty value, a repeated parameter) becomes NaN and fails validation with a 400 naming the field.
 */
export const toStrictInt = ({ value }: { value: unknown }): unknown => {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d{1,10}$/.test(value)) return Number(value);
  return Number.NaN;
};

/** An integer in [min, max]; one message naming the field and the range (no stack of IsInt/Min/Max messages). */
export function IsIntInRange(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIntInRange',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) =>
          typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
        defaultMessage: (args) => `${args?.property} must be an integer from ${min} to ${max}`,
      },
    },
    options,
  );
}

export interface PaginationOptions {
  /** pageSize when the query does not give one. */
  defaultPageSize: number;
  /** Largest pageSize accepted; a larger one is a 400 naming `pageSize`, never silently clamped. */
  maxPageSize: number;
}

/**
 * A query-DTO base class with `page` (integer ≥ 1, default 1) and `pageSize` (integer from 1 to max, default
 * given), validated by the global ValidationPipe and documented for Swagger. Extend it:
 *
 *   export class ListContactsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) { ... }
 *
 * then `.skip(pageOffset(query)).take(query.pageSize)` and answer `{ ...items, ...pageMeta(query, total) }`.
 */
export function PaginationQuery({ defaultPageSize, maxPageSize }: PaginationOptions) {
  if (!(defaultPageSize >= 1 && defaultPageSize <= maxPageSize))
    throw new Error('PaginationQuery: need 1 ≤ defaultPageSize ≤ maxPageSize');

  class Pagination implements PageRequest {
    @ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE,
      default: 1,
      description: 'page number, from 1',
    })
    @Transform(toStrictInt)
    @IsIntInRange(1, MAX_PAGE)
    page: number = 1;

    @ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: maxPageSize,
      default: defaultPageSize,
      description: `items per page, at most ${maxPageSize}`,
    })
    @Transform(toStrictInt)
    @IsIntInRange(1, maxPageSize)
    pageSize: number = defaultPageSize;
  }
  return Pagination;
}

/** Rows to skip for the requested page. */
export function pageOffset({ page, pageSize }: PageRequest): number {
  return (page - 1) * pageSize;
}

/** The `{page, pageSize, total}` part of a paginated response. */
export function pageMeta({ page, pageSize }: PageRequest, total: number): PageMeta {
  return { page, pageSize, total };
}
