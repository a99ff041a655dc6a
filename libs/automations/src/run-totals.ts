/** From this many runs on, a run list's total is remembered (below it, counting costs under a millisecond). */
export const REMEMBERED_TOTAL_FROM = 10_000;
/** How long a remembered total is used before it is counted again. */
export const REMEMBERED_TOTAL_MS = 1000;
/** A remembered total whose recount has not come back in this long is not used (the recount may have failed). */
const STALE_AFTER_MS = 5 * REMEMBERED_TOTAL_MS;
const MAX_KEPT = 10_000;

interface Kept {
  total: number;
  countedAt: number;
  recounting: boolean;
}

/**
 * Totals of long run lists, remembered for a moment. Counting a workflow's runs reads every entry of its index
 * (100,000 runs: about 10 ms of PostgreSQL's CPU) for every page, and a console polls its page. From
 * REMEMBERED_TOTAL_FROM runs on, each total (per workflow and status filter, in each API process) is counted at most
 * about once a second: one request recounts while the others keep answering the total they had, so the total can
 * leave out the runs of the last second or so. Smaller totals are always exact. See docs/automations.md.
 */
export class RememberedRunTotals {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The total to answer with, or undefined: then the caller counts and hands the count to `counted`. */
  get(key: string): number | undefined {
    const kept = this.kept.get(key);
    if (!kept) return undefined;
    const age = this.now() - kept.countedAt;
    if (age < REMEMBERED_TOTAL_MS) return kept.total;
    if (kept.recounting && age < STALE_AFTER_MS) return kept.total;
    kept.recounting = true;
    return undefined;
  }

  counted(key: string, total: number): void {
    if (total < REMEMBERED_TOTAL_FROM) {
      this.kept.delete(key);
      return;
    }
    if (this.kept.size >= MAX_KEPT && !this.kept.has(key)) this.kept.clear();
    this.kept.set(key, { total, countedAt: this.now(), recounting: false });
  }
}
