/** A write's result for one item that failed on its own: that item's `add` rejects with `error`, the others resolve. */
export class BatchItemFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Writes the items together; if that fails (an all-or-nothing write: it left nothing behind), writes each alone, side
 * by side (when the database is down they all fail at once, not one timeout after the other), so that one bad item
 * fails only itself: its result is a BatchItemFailure.
 */
export async function writeTogetherOrEachAlone<T, R>(
  items: T[],
  write: (items: T[]) => Promise<R[]>,
): Promise<Array<R | BatchItemFailure>> {
  try {
    return await write(items);
  } catch (error) {
    if (items.length === 1) throw error;
    return Promise.all(
      items.map((item) =>
        write([item]).then(
          ([result]) => result,
          (e) => new BatchItemFailure(e),
        ),
      ),
    );
  }
}

/**
 * Turns many concurrent single writes into few batched ones: `add(item)` resolves with that item's result once the
 * batch holding it is written. Items that arrive while a batch is being written wait for the next one, so a quiet
 * process writes each item at once (one event-loop turn later) and a busy one writes up to `maxItems` per call.
 *
 * Each batch's `write` is one round trip instead of one per item; on this kind of machine a database round trip
 * costs the caller about 0.1 ms of CPU, which is what limits the send pipeline at 1,000 msg/s.
 */
export class MicroBatcher<T, R> {
  private pending: Array<{ item: T; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;
  private lastStartedAt = -Infinity;

  constructor(
    /** writes a batch; returns one result per item, in order (a BatchItemFailure rejects that item alone) */
    private readonly write: (items: T[]) => Promise<Array<R | BatchItemFailure>>,
    private readonly options: {
      maxItems: number;
      maxConcurrent?: number;
      /**
       * Batches start at least this far apart: under a steady stream (paced sends answer ~1 ms apart) each write then
       * carries the items of this interval, not one or two. A write after a quiet spell still starts at once.
       */
      minIntervalMs?: number;
      /**
       * For all-or-nothing writes (a failed batch left nothing behind): when a batch of several items fails, each is
       * written again alone (all at once), so that one bad item (a row a constraint refuses) fails only its own `add`.
       */
      retryEachAlone?: boolean;
    } = { maxItems: 500 },
  ) {}

  /** For writes with nothing to answer per item: each `add` resolves once the batch holding its item is written. */
  static ofWrites<T>(
    write: (items: T[]) => Promise<unknown>,
    options?: { maxItems: number; maxConcurrent?: number; minIntervalMs?: number },
  ): MicroBatcher<T, void> {
    return new MicroBatcher<T, void>(async (items) => {
      await write(items);
      return items.map(() => undefined);
    }, options);
  }

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= (this.options.maxConcurrent ?? 1) || this.pending.length === 0) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      void this.flush();
    };
    const wait = this.lastStartedAt + (this.options.minIntervalMs ?? 0) - Date.now();
    // after the current I/O phase: every item that arrived in this turn of the event loop joins the batch
    if (wait > 0) setTimeout(run, wait);
    else setImmediate(run);
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.options.maxItems);
    if (batch.length === 0) return;
    this.lastStartedAt = Date.now();
    this.inFlight++;
    try {
      const items = batch.map((b) => b.item);
      const results = this.options.retryEachAlone
        ? await writeTogetherOrEachAlone(items, this.write)
        : await this.write(items);
      batch.forEach((b, i) => {
        const result: R | BatchItemFailure = results[i];
        if (result instanceof BatchItemFailure) b.reject(result.error);
        else b.resolve(result);
      });
    } catch (error) {
      for (const b of batch) b.reject(error);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
