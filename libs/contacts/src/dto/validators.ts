import { PipeTransform } from '@nestjs/common';
import { normalizePhone, PHONE_FORMAT_HINT, validationException } from '@switchboard/core';
import { isEmail, isURL, ValidateBy, ValidationOptions } from 'class-validator';

/** Largest id accepted in bodies and paths: every JSON-safe integer is a valid PostgreSQL bigint. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** Trims strings; an empty string means "no value" (null). Other types pass through to fail validation. */
export const trimToNull = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
};

/** A phone number with country code, as normalizePhone accepts it (a JSON number of digits is accepted too). */
export function IsPhone(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPhone',
      validator: {
        validate: (value: unknown) => normalizePhone(value) !== null,
        defaultMessage: (args) =>
          args?.value === undefined || args?.value === null || args?.value === ''
            ? `${args?.property} is required: ${PHONE_FORMAT_HINT}`
            : `${args?.property} must be ${PHONE_FORMAT_HINT}`,
      },
    },
    options,
  );
}

/** A calendar date `YYYY-MM-DD`, from 1900-01-01 to today. */
export function IsDateOfBirth(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateOfBirth',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
          const date = new Date(`${value}T00:00:00Z`);
          return (
            !Number.isNaN(date.getTime()) &&
            date.toISOString().slice(0, 10) === value &&
            value >= '1900-01-01' &&
            date.getTime() <= Date.now()
          );
        },
        defaultMessage: (args) => `${args?.property} must be a date YYYY-MM-DD between 1900-01-01 and today`,
      },
    },
    options,
  );
}

/**
 * Path ids (`/v2/contacts/{contact_id}`): a positive integer, else a 400 naming the parameter
 * (so `/v2/contacts/abc` is a clear client error, not a 404 or a database error).
 */
export class ParseIdPipe implements PipeTransform<string, string> {
  constructor(private readonly field: string) {}

  transform(value: string): string {
    if (/^[1-9]\d{0,15}$/.test(value) && Number(value) <= MAX_ID) return value;
    throw validationException([{ field: this.field, message: `${this.field} must be a positive integer` }]);
  }
}

/** A string of `min` to `max` characters; one message whatever is wrong. */
export function IsText(max: number, min = 0, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isText',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.length >= min && value.length <= max,
        defaultMessage: (args) =>
          `${args?.property} must be a string of ${min ? `${min} to ${max}` : `at most ${max}`} characters`,
      },
    },
    options,
  );
}

/** An email address of at most 320 characters. */
export function IsEmailAddress(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEmailAddress',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.length <= 320 && isEmail(value),
        defaultMessage: (args) => `${args?.property} must be an email address`,
      },
    },
    options,
  );
}

/** An http(s) URL (the scheme may be left out) of at most 2048 characters. Stored only; we never fetch it. */
export function IsWebUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isWebUrl',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' &&
          value.length <= 2048 &&
          isURL(value, { protocols: ['http', 'https'], require_protocol: false }),
        defaultMessage: (args) => `${args?.property} must be an http(s) URL`,
      },
    },
    options,
  );
}

/** An array of `min` to `max` positive integer ids (JSON numbers); one message whatever is wrong. */
export function IsIdList(min: number, max: number, noun: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIdList',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.length >= min &&
          value.length <= max &&
          value.every((id) => Number.isInteger(id) && id >= 1 && id <= MAX_ID),
        defaultMessage: (args) =>
          `${args?.property} must be an array of ${min} to ${max} ${noun} ids (positive integers)`,
      },
    },
    options,
  );
}
