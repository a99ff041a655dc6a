import { eventually } from './sandbox';
import type { TestApp } from './test-app';

/**
 * Waits until a statement of this test's database whose text contains `statement` waits for a lock: the moment a test
 * holding a transaction open (another writer, as a race would interleave them) lets it go on.
 */
export function waitsForLock(t: TestApp, statement: string, what: string): Promise<unknown> {
  return eventually(
    async () => {
      const [waiting] = await t.db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
        [statement],
      );
      return waiting.n > 0;
    },
    10_000,
    what,
  );
}
