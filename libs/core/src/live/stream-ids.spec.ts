import { compareStreamIds, isStreamId } from './stream-ids';

describe('stream ids', () => {
  it('orders by milliseconds, then sequence (numerically, not as text)', () => {
    expect(compareStreamIds('1700000000000-0', '1700000000000-0')).toBe(0);
    expect(compareStreamIds('1700000000000-2', '1700000000000-10')).toBeLessThan(0);
    expect(compareStreamIds('1700000000001-0', '1700000000000-99')).toBeGreaterThan(0);
    expect(compareStreamIds('999-0', '1000-0')).toBeLessThan(0);
  });

  it('accepts only <ms>-<seq>', () => {
    expect(isStreamId('1700000000000-3')).toBe(true);
    expect(isStreamId('abc')).toBe(false);
    expect(isStreamId('1-2-3')).toBe(false);
    expect(isStreamId('$')).toBe(false);
  });
});
