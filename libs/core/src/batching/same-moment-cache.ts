/**
 * Shares one lookup among the callers of the same moment: `get(key, load)` returns the promise of a load started for
 * that key in this turn of the event loop (or one still in flight from it), else starts `load`. Nothing is kept past
 * the moment, so a change committed before a later call is always seen: this only saves the 49 repeats of 50 steps
 * started together (one batch of runs each reading the same template and number).
 */
export class SameMomentCache<V> {
  private readonly loads = new Map<string, Promise<V>>();
  private clearing = false;

  get(key: string, load: () => Promise<V>): Promise<V> {
    let loading = this.loads.get(key);
    if (!loading) {
      loading = load();
      this.loads.set(key, loading);
      // a failed load is not shared with later callers: they try again
      loading.catch(() => this.loads.get(key) === loading && this.loads.delete(key));
    }
    if (!this.clearing) {
      this.clearing = true;
      setImmediate(() => {
        this.loads.clear();
        this.clearing = false;
      });
    }
    return loading;
  }
}
