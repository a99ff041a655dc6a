import { isIsoDateTime } from './dates';

describe('isIsoDateTime', () => {
  it.each([
    '2026-11-23',
    '2026-11-23T10:00:00Z',
    '2026-11-23T10:00Z',
    '2026-11-23T10:00:00+01:00',
    '2026-11-23T10:00:00.123456Z',
    '2026-11-23T10:00:00.123456789Z', // Go's RFC3339Nano
    '2026-11-23T10:00:00.1234567+01:00', // .NET's "o"
    '2026-11-23 10:00:00+0100', // PostgreSQL's text form, a +0100 offset
    '2026-11-23t10:00:00z',
    '2024-02-29T00:00:00Z',
  ])('takes %s', (text) => {
    expect(isIsoDateTime(text)).toBe(true);
  });

  it.each([
    '2026-11-23T10:00:00+01', // an offset JavaScript cannot read
    '2026-11-23T10:00:00,5Z', // a decimal comma
    '2026-11-23T1000Z',
    '20261123',
    '2026-W48',
    '2026-327',
    '2026-02-30T00:00:00Z', // no such day (V8 would read March 2nd)
    '2025-02-29',
    '2026-11-23T24:00:00Z',
    'yesterday',
    '',
  ])('refuses %s', (text) => {
    expect(isIsoDateTime(text)).toBe(false);
  });

  it('refuses what is not text', () => {
    expect(isIsoDateTime(20261123)).toBe(false);
    expect(isIsoDateTime(null)).toBe(false);
  });
});
