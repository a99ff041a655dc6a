import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The inbox (libs/inbox, docs/inbox.md): when the conversation was last read by an agent. Unread = the customer's
 * messages after it.
 */
export class InboxReadMarks1764100000000 implements MigrationInterface {
  name = 'InboxReadMarks1764100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE conversations ADD COLUMN last_read_at timestamptz`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE conversations DROP COLUMN last_read_at`);
  }
}
