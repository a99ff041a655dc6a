import { SameMomentCache } from './same-moment-cache';

describe('SameMomentCache', () => {
  it('loads a key once for the callers of one moment, and again in a later moment', async () => {
    const cache = new SameMomentCache<number>();
    let loads = 0;
    const load = async () => ++loads;
    const together = await Promise.all([cache.get('a', load), cache.get('a', load), cache.get('a', load)]);
    expect(together).toEqual([1, 1, 1]);
    await new Promise((r) => setImmediate(r));
    expect(await cache.get('a', load)).toBe(2);
  });

  it('keeps keys apart and does not share a failed load', async () => {
    const cache = new SameMomentCache<string>();
    await expect(cache.get('x', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('x', async () => 'up')).toBe('up');
    expect(await cache.get('y', async () => 'other')).toBe('other');
  });
});
