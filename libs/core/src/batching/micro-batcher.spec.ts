import { BatchItemFailure, MicroBatcher } from './micro-batcher';

describe('MicroBatcher', () => {
  it('writes items added in the same turn as one batch and answers each with its own result', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, string>(async (items) => {
      batches.push(items);
      return items.map((n) => `r${n}`);
    });
    const results = await Promise.all([1, 2, 3].map((n) => batcher.add(n)));
    expect(results).toEqual(['r1', 'r2', 'r3']);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('gathers what arrives during a write into the next batch, at most maxItems at a time', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const firstWrite = new Promise<void>((resolve) => (release = resolve));
    const batcher = new MicroBatcher<number, number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await firstWrite;
        return items;
      },
      { maxItems: 2 },
    );
    const first = batcher.add(1);
    await new Promise((r) => setImmediate(r)); // the first batch is being written
    const later = [2, 3, 4].map((n) => batcher.add(n));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1]]); // one write at a time
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });

  it('rejects every item of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const batcher = new MicroBatcher<number, number>(async (items) => {
      if (fail) throw new Error('database down');
      return items;
    });
    const failed = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason.message).toBe('database down');
    fail = false;
    expect(await batcher.add(3)).toBe(3);
  });

  it('retryEachAlone: after a failed batch each item is written alone, so one bad item fails only itself', async () => {
    const writes: number[][] = [];
    const batcher = new MicroBatcher<number, number>(
      async (items) => {
        writes.push(items);
        if (items.includes(2)) throw new Error(`refused: ${items.join(',')}`);
        return items.map((i) => i * 10);
      },
      { maxItems: 10, retryEachAlone: true },
    );
    const results = await Promise.allSettled([batcher.add(1), batcher.add(2), batcher.add(3)]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 10 },
      { status: 'rejected', reason: new Error('refused: 2') },
      { status: 'fulfilled', value: 30 },
    ]);
    expect(writes).toEqual([[1, 2, 3], [1], [2], [3]]);
    // a single item's failure is not tried again
    await expect(batcher.add(2)).rejects.toThrow('refused: 2');
    expect(writes).toHaveLength(5);
  });

  it('a BatchItemFailure in the results rejects that item alone', async () => {
    const batcher = new MicroBatcher<number, number | BatchItemFailure>(async (items) =>
      items.map((i) => (i === 2 ? new BatchItemFailure(new Error('bad item')) : i)),
    );
    const results = await Promise.allSettled([batcher.add(1), batcher.add(2), batcher.add(3)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('bad item');
  });

  it('ofWrites: a write with nothing to answer per item resolves every add of its batch', async () => {
    const batches: number[][] = [];
    const batcher = MicroBatcher.ofWrites(async (items: number[]) => void batches.push(items));
    expect(await Promise.all([1, 2].map((n) => batcher.add(n)))).toEqual([undefined, undefined]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('minIntervalMs: a steady stream is written in batches that start that far apart; a quiet start is written at once', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const batches: Array<{ items: number[]; at: number }> = [];
      const batcher = MicroBatcher.ofWrites(async (items: number[]) => void batches.push({ items, at: Date.now() }), {
        maxItems: 100,
        minIntervalMs: 40,
      });
      const adds: Array<Promise<void>> = [];
      for (let n = 0; n <= 6; n++) {
        adds.push(batcher.add(n));
        await jest.advanceTimersByTimeAsync(10);
      }
      await jest.advanceTimersByTimeAsync(100);
      await Promise.all(adds);
      expect(batches).toEqual([
        { items: [0], at: 0 },
        { items: [1, 2, 3], at: 40 },
        { items: [4, 5, 6], at: 80 },
      ]);
    } finally {
      jest.useRealTimers();
    }
  });
});
