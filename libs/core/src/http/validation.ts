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
      out.push({ field, message: message.replace(error.property, field) });
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

/** Inputs remembered per class; the oldest half goes when one holds this many. */
const REMEMBERED_INPUTS = 1000;

type Flat = Record<string, string | number | boolean | null | undefined>;

const isFlat = (value: unknown): value is Flat =>
  typeof value === 'object' &&
  value !== null &&
  Object.values(value).every((v) => v === null || (typeof v !== 'object' && typeof v !== 'function'));

const copy = (value: Flat): Flat => Object.assign(Object.create(Object.getPrototypeOf(value) as object) as Flat, value);

/**
 * Lists are read with the same few query strings over and over (page 1, a console polling a page), and building and
 * validating the query class cost more than the rest of such a request (class-transformer and class-validator: about
 * a tenth of a list read's CPU). An input that passed once gives the same result again, so the result is kept per
 * class and handed out as a copy (same prototype). Only flat inputs are kept (every value a primitive, and every result
 * value a primitive), so no request can change what another one gets; an input that fails is validated every time.
 * For queries only: a body (a contact's name and email) would be kept in memory for nothing.
 */
export class RememberedQueries {
  private readonly byClass = new Map<unknown, Map<string, Flat>>();

  /** `validate(input)`'s result, from memory when this class saw the same flat input pass before. */
  async validated<T>(queryClass: unknown, input: unknown, validate: () => Promise<T>): Promise<T> {
    if (!isFlat(input)) return validate();
    let byInput = this.byClass.get(queryClass);
    if (!byInput) this.byClass.set(queryClass, (byInput = new Map()));
    const key = JSON.stringify(input);
    const known = byInput.get(key);
    if (known) return copy(known) as T;
    const result = await validate();
    if (!isFlat(result)) return result;
    if (byInput.size >= REMEMBERED_INPUTS)
      for (const old of [...byInput.keys()].slice(0, REMEMBERED_INPUTS / 2)) byInput.delete(old);
    byInput.set(key, copy(result));
    return result;
  }
}

/** The global pipe, remembering the queries it validated (RememberedQueries). */
class QueryRememberingValidationPipe extends ValidationPipe {
  private readonly remembered = new RememberedQueries();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'query' || !metadata.metatype) return super.transform(value, metadata);
    return this.remembered.validated(metadata.metatype, value, () => super.transform(value, metadata));
  }
}
