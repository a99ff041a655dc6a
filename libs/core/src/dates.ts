/** A timestamp from a row (a Date from pg, or its text) as ISO 8601 for an API answer; null when there is none. */
export const isoOrNull = (value: unknown): string | null => (value ? new Date(value as string).toISOString() : null);
