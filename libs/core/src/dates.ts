/** A timestamp from a row (a Date from pg, or its text) as ISO 8601 for an API answer; null when there is none. */
export const isoOrNull = (value: unknown): string | null => (value ? new Date(value as string).toISOString() : null);

/** The date and time as written exist (V8 reads 2026-02-31 as March 3rd and 24:00 as the next day). */
export function isCalendarTime(text: string): boolean {
  const [y, mo, d, h, mi, s] = (text.match(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/) ?? [])
    .slice(1)
    .map((part) => Number(part ?? 0));
  const probe = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return (
    probe.getUTCFullYear() === y &&
    probe.getUTCMonth() === mo - 1 &&
    probe.getUTCDate() === d &&
    probe.getUTCHours() === h &&
    probe.getUTCMinutes() === mi &&
    probe.getUTCSeconds() === s
  );
}

/**
 * An ISO 8601 date-time a database reads as the same instant: `2026-11-23T10:00:00Z`, `…T10:00+01:00`,
 * `…T10:00:00.123456789Z`, `2026-11-23 10:00:00+0100`, or a date (`2026-11-23`). Not the other forms ISO 8601
 * allows (week dates, ordinal dates, `+01` offsets, decimal commas), which JavaScript cannot read and PostgreSQL
 * refuses, nor a day or time that does not exist (2026-02-30).
 */
export function isIsoDateTime(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  // RFC 3339 as written by Go (nanoseconds), .NET ("o", 7 digits), PostgreSQL (a space for T), `+0100` offsets
  const match = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2})?)(?:\.\d{1,9})?([Zz]|[+-]\d{2}:?\d{2})?)?$/.exec(
    text,
  );
  if (!match) return false;
  const [, day, time, offset] = match;
  const probe = `${day}T${time ?? '00:00'}${offset ? offset.toUpperCase().replace(/^([+-]\d{2})(\d{2})$/, '$1:$2') : ''}`;
  return !Number.isNaN(new Date(probe).getTime()) && isCalendarTime(probe);
}
