import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The inbox (docs/inbox.md): a session scoped to some numbers (one brand's agents) marks a conversation read for its
 * numbers only, so another brand's unread messages of the same customer stay unread. A customer message is unread
 * while it is newer than both the conversation's read mark (the whole account's agents) and its number's.
 */
export class InboxNumberReadMarks1764210000000 implements MigrationInterface {
  name = 'InboxNumberReadMarks1764210000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE conversation_number_reads (
        account_id      bigint NOT NULL,
        contact_id      bigint NOT NULL,
        phone_number_id bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        last_read_at    timestamptz NOT NULL,
        PRIMARY KEY (account_id, contact_id, phone_number_id),
        FOREIGN KEY (account_id, contact_id) REFERENCES conversations (account_id, contact_id) ON DELETE CASCADE
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE conversation_number_reads`);
  }
}
