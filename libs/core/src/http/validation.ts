import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

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
  return new ValidationPipe({
    whitelist: true,
    transform: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) => validationException(flattenValidationErrors(errors)),
  });
}
