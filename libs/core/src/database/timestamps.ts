import { types } from 'pg';

const pgParser = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;

const twoDigits = (text: string, at: number) => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;

/**
 * A `timestamptz` as PostgreSQL writes it for a session in UTC ('2026-11-27 17:47:41.014475+00', fraction optional)
 * to a Date, with no regular expression: about 110 ns against 500 for pg's own parser, which took ~5 % of the API's
 * CPU on the contact list. Anything else (another session time zone, a year before 1000, BC, infinity) goes to pg's
 * parser. Like it, keeps milliseconds.
 */
export function parseTimestamptz(text: string): Date {
  const n = text.length;
  const canonical =
    (n === 22 || (n >= 24 && n <= 29 && text[19] === '.')) &&
    text[4] === '-' &&
    text[10] === ' ' &&
    text.endsWith('+00') &&
    text[0] !== '0';
  if (!canonical) return pgParser(text);
  const ms = n === 22 ? 0 : Number((text.slice(20, n - 3) + '00').slice(0, 3));
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  return new Date(
    Date.UTC(
      year,
      twoDigits(text, 5) - 1,
      twoDigits(text, 8),
      twoDigits(text, 11),
      twoDigits(text, 14),
      twoDigits(text, 17),
      ms,
    ),
  );
}

/** The type parsers of our pools (`types` of pg's pool config): pg's own, but for `timestamptz` in text. */
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === types.builtins.TIMESTAMPTZ && format !== 'binary') return parseTimestamptz;
    return types.getTypeParser(oid, format ?? 'text');
  },
};
