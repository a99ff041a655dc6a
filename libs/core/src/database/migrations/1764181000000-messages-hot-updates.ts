import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A sent message's row is updated four times after its insert (claimed, answered, sent, delivered; read and replied
 * later). PostgreSQL can write such an update in place (a HOT update: no new entry in any of the table's eight
 * indexes) only when no indexed column changes and the page has room. `status` was in two partial indexes'
 * predicates (`WHERE status = 'queued'`), so every status change wrote eight index entries. The sweep's index now
 * uses `queued`, a stored generated column that changes only when a message enters or leaves `queued`; the campaign
 * backlog's index is gone (the fan-out reads its counter in campaign_counts). And pages are filled to 80 % by inserts,
 * leaving room for the updated versions. Adding the column rewrites the table once.
 */
export class MessagesHotUpdates1764181000000 implements MigrationInterface {
  name = 'MessagesHotUpdates1764181000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages ADD COLUMN queued boolean GENERATED ALWAYS AS (status = 'queued') STORED`);
    await db.query(`CREATE INDEX messages_queued_since_idx ON messages (created_at) WHERE queued`);
    await db.query(`DROP INDEX messages_queued_idx`);
    await db.query(`DROP INDEX messages_campaign_queued_idx`);
    await db.query(`ALTER TABLE messages SET (fillfactor = 80)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages RESET (fillfactor)`);
    await db.query(
      `CREATE INDEX messages_campaign_queued_idx ON messages (campaign_id) WHERE campaign_id IS NOT NULL AND status = 'queued'`,
    );
    await db.query(`CREATE INDEX messages_queued_idx ON messages (created_at) WHERE status = 'queued'`);
    await db.query(`DROP INDEX messages_queued_since_idx`);
    await db.query(`ALTER TABLE messages DROP COLUMN queued`);
  }
}
