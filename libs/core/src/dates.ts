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
 * `…T10:00:00.123456Z`, or a date (`2026-11-23`, midnight UTC). Not the other forms ISO 8601 allows (week dates,
 * ordinal dates, `+01` offsets, decimal commas), which JavaScript cannot read and PostgreSQL refuses, nor a day
 * or time that does not exist (2026-02-30).
 */
export function isIsoDateTime(text: unknown): text is string {
  return (
    typeof text === 'string' &&
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(text) &&
    !Number.isNaN(new Date(text).getTime()) &&
    isCalendarTime(text.includes('T') ? text : `${text}T00:00`)
  );
}
