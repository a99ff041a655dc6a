/**
 * Durations: a positive integer number of seconds (`90`), or a string of a positive integer followed by
 * one unit: `s` seconds, `m` minutes, `h` hours, `d` days (`30s`, `15m`, `2h`, `1d`).
 * Anything else (`0`, `-5`, `1.5`, `"30"`, `"1h30m"`, `"2 h"`, `"1w"`) is rejected.
 * The longest accepted duration is 365 days.
 */

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const MAX_DURATION_MS = 365 * UNIT_MS.d;

export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

export type DurationParseResult = { ok: true; ms: number } | { ok: false; error: string };

export function tryParseDuration(value: unknown): DurationParseResult {
  let ms: number;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value <= 0) {
      return { ok: false, error: `invalid duration ${String(value)}: a number must be a positive integer of seconds` };
    }
    ms = value * UNIT_MS.s;
  } else if (typeof value === 'string') {
    const match = /^([1-9][0-9]{0,9})([smhd])$/.exec(value);
    if (!match) {
      return {
        ok: false,
        error: `invalid duration ${JSON.stringify(value)}: expected a positive integer followed by s, m, h or d (e.g. "30s", "15m", "2h", "1d")`,
      };
    }
    ms = Number(match[1]) * UNIT_MS[match[2]];
  } else {
    return {
      ok: false,
      error: `invalid duration: expected a positive integer of seconds or a string like "15m", got ${value === null ? 'null' : typeof value}`,
    };
  }
  if (ms > MAX_DURATION_MS) {
    return { ok: false, error: `invalid duration ${JSON.stringify(value)}: longer than the maximum of 365d` };
  }
  return { ok: true, ms };
}

/** Parses a duration to milliseconds; throws DurationError with a clear message otherwise. */
export function parseDuration(value: unknown): number {
  const result = tryParseDuration(value);
  if (!result.ok) throw new DurationError(result.error);
  return result.ms;
}
