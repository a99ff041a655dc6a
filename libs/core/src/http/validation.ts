import { ArgumentMetadata, BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

export interface FieldError {
  field: string;
  message: string;
}

/** Flattens class-validator's tree into `items[2].phoneNumber`-style paths. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = parent
      ? /^\d+$/.test(error.property)
        ? `${parent}[${error.property}]`
        : `${parent}.${error.property}`
      : error.property;
    for (const message of Object.values(error.constraints ?? {}))
      // a message written with its whole path already ("scope.groupIds must…") keeps it
      out.push({ field, message: message.includes(field) ? message : message.replace(error.property, field) });
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

/** The 400 body for bad input: the first problem as `message`, all of them in `errors`. */
export function validationException(errors: FieldError[]): BadRequestException {
  return new BadRequestException({ statusCode: 400, message: errors[0]?.message ?? 'Invalid request', errors });
}

/** Global pipe: strips unknown fields, converts types, and answers 400 naming every field at fault. */
export function createValidationPipe(): ValidationPipe {
  return new QueryRememberingValidationPipe({
    whitelist: true,
    transform: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) => validationException(flattenValidationErrors(errors)),
  });
}

/** Query strings remembered per query class; the oldest half goes when one holds this many. */
const REMEMBERED_QUERIES = 1000;

type Flat = Record<string, string | number | boolean | null | undefined>;

const isFlat = (value: unknown): value is Flat =>
  typeof value === 'object' &&
  value !== null &&
  Object.values(value).every((v) => v === null || (typeof v !== 'object' && typeof v !== 'function'));

/**
 * Lists are read with the same few query strings over and over (page 1, a console polling a page), and building and
 * validating the query class cost more than the rest of such a request (class-transformer and class-validator: about
 * a tenth of a list read's CPU). A query string that passed once gives the same result again, so the result is kept
 * per query class and handed out as a copy. Only flat queries are kept (every value a string, and every result value
 * a primitive), so no request can change what another one gets; a query that fails is validated again every time.
 */
class QueryRememberingValidationPipe extends ValidationPipe {
  private readonly remembered = new Map<ArgumentMetadata['metatype'], Map<string, Flat>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'query' || !metadata.metatype || !isFlat(value)) return super.transform(value, metadata);
    let byQuery = this.remembered.get(metadata.metatype);
    if (!byQuery) this.remembered.set(metadata.metatype, (byQuery = new Map()));
    const key = JSON.stringify(value);
    const known = byQuery.get(key);
    if (known) return copy(known);
    const result: unknown = await super.transform(value, metadata);
    if (!isFlat(result)) return result;
    if (byQuery.size >= REMEMBERED_QUERIES)
      for (const old of [...byQuery.keys()].slice(0, REMEMBERED_QUERIES / 2)) byQuery.delete(old);
    byQuery.set(key, copy(result));
    return result;
  }
}

const copy = (value: Flat): Flat => Object.assign(Object.create(Object.getPrototypeOf(value) as object) as Flat, value);

/**
 * An Idempotency-Key header of the send and trigger endpoints: 1 to 200 characters, else a 400 naming it (a
 * 3,000-character key overflowed the messages' unique index: a 500).
 */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && (key.length === 0 || key.length > 200))
    throw validationException([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 200 characters' }]);
}
