import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every message row is inserted, then updated with its wamid when the platform answers (an update no index can skip:
 * wamid is indexed and `queued` changes). Each index costs an entry at both. Two entries less per message:
 * - `messages_account_idx` (account_id, created_at) served no query: the lists read by contact, the reports by
 *   campaign, the lookups by id or wamid. (It would serve a cascade from a deleted account, which nothing does.)
 * - wamid's unique index leaves out the rows without one (queued or failed before the platform answered): a lookup by
 *   wamid, and `ON CONFLICT (wamid) WHERE wamid IS NOT NULL`, use the partial index.
 * Measured on 20,000 campaign messages: WAL records of the inserts 161,923 → 120,888, of the answers 154,674 →
 * 134,748 (docs/performance.md).
 */
export class MessagesFewerIndexEntries1764190000000 implements MigrationInterface {
  name = 'MessagesFewerIndexEntries1764190000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX messages_account_idx`);
    await db.query(`CREATE UNIQUE INDEX messages_wamid_idx ON messages (wamid) WHERE wamid IS NOT NULL`);
    await db.query(`ALTER TABLE messages DROP CONSTRAINT messages_wamid_key`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages ADD CONSTRAINT messages_wamid_key UNIQUE (wamid)`);
    await db.query(`DROP INDEX messages_wamid_idx`);
    await db.query(`CREATE INDEX messages_account_idx ON messages (account_id, created_at DESC)`);
  }
}
