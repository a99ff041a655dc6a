const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `0,5s,5m,30m` → [0, 5000, 300000, 1800000] (a bare number is milliseconds). */
export function parseRetrySchedule(text: string): number[] {
  return text.split(',').map((part) => {
    const match = part.trim().match(/^(\d+)(ms|s|m|h|d)?$/);
    if (!match) throw new Error(`invalid duration "${part.trim()}" in the retry schedule`);
    return Number(match[1]) * UNIT_MS[match[2] ?? 'ms'];
  });
}

/**
 * When to try again after attempt number `attemptsMade` (1-based) failed: `schedule[attemptsMade]` from now, or
 * null when the schedule is used up (the delivery is then failed).
 */
export function nextAttemptDelay(schedule: number[], attemptsMade: number): number | null {
  return attemptsMade < schedule.length ? schedule[attemptsMade] : null;
}
