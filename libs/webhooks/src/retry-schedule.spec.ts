import { loadConfig } from '@switchboard/core';
import { nextAttemptDelay, parseRetrySchedule } from './retry-schedule';

describe('retry schedule', () => {
  it('parses the default (Svix-like) schedule', () => {
    expect(parseRetrySchedule('0,5s,5m,30m,2h,5h,10h,10h')).toEqual([
      0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(parseRetrySchedule(' 0 , 250ms, 1d ,7')).toEqual([0, 250, 86_400_000, 7]);
  });

  it('gives the delay after each failed attempt, then null (failed)', () => {
    const schedule = [0, 5_000, 300_000];
    expect([1, 2, 3].map((n) => nextAttemptDelay(schedule, n))).toEqual([5_000, 300_000, null]);
  });

  it('is validated with the configuration (a bad value names the variable)', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0,5x' } as NodeJS.ProcessEnv)).toThrow(
      /WEBHOOK_RETRY_SCHEDULE must be comma-separated durations/,
    );
    expect(parseRetrySchedule(loadConfig({} as NodeJS.ProcessEnv).WEBHOOK_RETRY_SCHEDULE)).toHaveLength(8);
  });
});
