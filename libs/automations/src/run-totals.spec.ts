import { REMEMBERED_TOTAL_FROM, REMEMBERED_TOTAL_MS, RememberedRunTotals } from './run-totals';

describe('RememberedRunTotals', () => {
  let now = 0;
  const totals = () => new RememberedRunTotals(() => now);
  beforeEach(() => (now = 1_000_000));

  it('never remembers a total below REMEMBERED_TOTAL_FROM: small lists are always counted', () => {
    const t = totals();
    t.counted('1:', REMEMBERED_TOTAL_FROM - 1);
    expect(t.get('1:')).toBeUndefined();
  });

  it('answers a long list total for REMEMBERED_TOTAL_MS, then has one caller recount while the rest keep it', () => {
    const t = totals();
    t.counted('1:', 100_000);
    now += REMEMBERED_TOTAL_MS - 1;
    expect(t.get('1:')).toBe(100_000);
    now += 1;
    expect(t.get('1:')).toBeUndefined(); // this caller counts
    expect(t.get('1:')).toBe(100_000); // the others meanwhile answer what was counted
    t.counted('1:', 100_250);
    expect(t.get('1:')).toBe(100_250);
  });

  it('counts again when a recount has not come back within five periods (it may have failed)', () => {
    const t = totals();
    t.counted('1:', 50_000);
    now += REMEMBERED_TOTAL_MS;
    expect(t.get('1:')).toBeUndefined();
    now += 4 * REMEMBERED_TOTAL_MS - 1;
    expect(t.get('1:')).toBe(50_000);
    now += 1;
    expect(t.get('1:')).toBeUndefined();
  });

  it('forgets a total that fell below the threshold, and keeps keys apart', () => {
    const t = totals();
    t.counted('1:', 20_000);
    t.counted('1:failed', 12_000);
    t.counted('2:', 30_000);
    t.counted('1:failed', 5);
    expect([t.get('1:'), t.get('1:failed'), t.get('2:')]).toEqual([20_000, undefined, 30_000]);
  });
});
