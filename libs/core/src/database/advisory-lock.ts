import type { DataSource } from 'typeorm';

/**
 * Runs `work` holding a PostgreSQL session advisory lock on `key` (on a connection of its own, released after), so
 * that one read → platform call → write sequence on a record finishes before the next one reads. For work that calls
 * out between its reads and writes, where a transaction's lock would be held across the network anyway.
 */
export async function withAdvisoryLock<T>(db: DataSource, key: string, work: () => Promise<T>): Promise<T> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`SELECT pg_advisory_lock(hashtextextended($1, 0))`, [key]);
    try {
      return await work();
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [key]);
    }
  } finally {
    await runner.release();
  }
}
