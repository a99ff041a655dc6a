import { ConflictException } from '@nestjs/common';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';

/** How long a second change of the same record waits for the first before it is refused (409). */
export const ADVISORY_LOCK_WAIT_MS = 30_000;

/**
 * Runs `work` holding a PostgreSQL session advisory lock on `key`, so that one read → platform call → write sequence on a
 * record finishes before the next one reads. For work that calls out between its reads and writes, where a
 * transaction's lock would be held across the network anyway.
 *
 * The lock is held on a connection of its own, outside the pool: `work` reads and writes through the pool, and locks
 * held (or waited for) on pool connections could take every one of them, each holder then waiting for good for the
 * connection its work needs (twenty edits at once stopped the process). A change that waits ADVISORY_LOCK_WAIT_MS for
 * another of the same record is refused with 409.
 */
export async function withAdvisoryLock<T>(
  db: DataSource,
  key: string,
  work: () => Promise<T>,
  waitMs = ADVISORY_LOCK_WAIT_MS,
): Promise<T> {
  const client = new Client({ connectionString: (db.options as { url: string }).url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined); // a connection cut (the server restarting) fails the query below, not the process
  try {
    await client.connect();
    await client.query(`SET lock_timeout = ${Math.max(1, Math.round(waitMs))}`);
    try {
      await client.query(`SELECT pg_advisory_lock(hashtextextended($1, 0))`, [key]);
    } catch (error) {
      if ((error as { code?: string }).code === '55P03')
        throw new ConflictException({ message: 'Another change of this record is in progress; try again shortly' });
      throw error;
    }
    try {
      return await work();
    } finally {
      // a connection lost meanwhile released the lock with it: the work's outcome stands
      await client.query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [key]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether some session holds the advisory lock of `key` now (withAdvisoryLock's), as one query on any connection. */
export async function advisoryLockHeld(
  db: { query: (sql: string, params: unknown[]) => Promise<unknown> },
  key: string,
) {
  // a bigint key is held as classid (its high 32 bits) and objid (its low 32 bits)
  const [row] = (await db.query(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
                      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)) AS held`,
    [key],
  )) as Array<{ held: boolean }>;
  return row.held;
}
