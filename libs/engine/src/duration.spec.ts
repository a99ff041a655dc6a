import { DurationError, MAX_DURATION_MS, parseDuration, tryParseDuration } from './duration';

describe('parseDuration', () => {
  it.each([
    [1, 1_000],
    [90, 90_000],
    ['30s', 30_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['365d', MAX_DURATION_MS],
  ])('parses %p to %p ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    0,
    -5,
    1.5,
    NaN,
    Infinity,
    '0s',
    '-1m',
    '30',
    '1h30m',
    '2 h',
    ' 2h',
    '1w',
    '1.5h',
    '',
    'abc',
    '015m',
    null,
    undefined,
    {},
    [],
  ])('rejects %p with a clear error', (input) => {
    expect(() => parseDuration(input)).toThrow(DurationError);
    expect(() => parseDuration(input)).toThrow(/invalid duration/);
  });

  it('rejects durations longer than 365 days', () => {
    expect(() => parseDuration('366d')).toThrow(/maximum of 365d/);
    expect(() => parseDuration(365 * 86_400 + 1)).toThrow(/maximum/);
  });

  it('explains the accepted formats', () => {
    const result = tryParseDuration('1w');
    expect(result).toEqual({ ok: false, error: expect.stringContaining('"30s", "15m", "2h", "1d"') });
    expect(tryParseDuration('1w')).not.toHaveProperty('ms');
    expect(tryParseDuration(5)).toEqual({ ok: true, ms: 5000 });
  });
});
