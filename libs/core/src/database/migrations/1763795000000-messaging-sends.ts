import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sends, callbacks and conversations (libs/messaging):
 * - accounts.callback_secret: per-account HMAC key of per-message callbacks (X-Switchboard-Signature); generated for
 *   existing accounts here and for new ones by the column default (two random UUIDs = 244 random bits, hex);
 * - messages.queue / attempts: which send queue carries an outbound message, how many platform calls it took;
 * - conversations: one row per (account, contact), maintained by a trigger on messages, so GET /v2/conversations
 *   is an index scan ordered by last activity instead of a DISTINCT over every message of the account.
 */
export class MessagingSends1763795000000 implements MigrationInterface {
  name = 'MessagingSends1763795000000';

  async up(db: QueryRunner): Promise<void> {
    const secret = `replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')`;
    await db.query(`ALTER TABLE accounts ADD COLUMN callback_secret text`);
    await db.query(`UPDATE accounts SET callback_secret = ${secret} WHERE callback_secret IS NULL`);
    await db.query(
      `ALTER TABLE accounts ALTER COLUMN callback_secret SET DEFAULT ${secret}, ALTER COLUMN callback_secret SET NOT NULL`,
    );

    await db.query(`ALTER TABLE messages ADD COLUMN queue text, ADD COLUMN attempts integer NOT NULL DEFAULT 0`);
    // recovery sweep: outbound messages still queued
    await db.query(`CREATE INDEX messages_queued_idx ON messages (created_at) WHERE status = 'queued'`);
    // conversation reads: a contact's messages, newest first
    await db.query(
      `CREATE INDEX messages_contact_idx ON messages (account_id, contact_id, created_at DESC) WHERE contact_id IS NOT NULL`,
    );

    await db.query(`
      CREATE TABLE conversations (
        account_id        bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        contact_id        bigint NOT NULL,
        phone_number_id   bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        last_message_id   uuid NOT NULL,
        last_message_at   timestamptz NOT NULL,
        last_inbound_at   timestamptz,
        last_outbound_at  timestamptz,
        PRIMARY KEY (account_id, contact_id)
      )`);
    await db.query(
      `CREATE INDEX conversations_activity_idx ON conversations (account_id, last_message_at DESC, contact_id DESC)`,
    );
    await db.query(`
      CREATE FUNCTION conversations_touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversations (account_id, contact_id, phone_number_id, last_message_id, last_message_at, last_inbound_at, last_outbound_at)
        VALUES (NEW.account_id, NEW.contact_id, NEW.phone_number_id, NEW.id, NEW.created_at,
                CASE WHEN NEW.direction = 'inbound' THEN NEW.created_at END,
                CASE WHEN NEW.direction = 'outbound' THEN NEW.created_at END)
        ON CONFLICT (account_id, contact_id) DO UPDATE SET
          phone_number_id  = CASE WHEN EXCLUDED.last_message_at >= conversations.last_message_at THEN EXCLUDED.phone_number_id ELSE conversations.phone_number_id END,
          last_message_id  = CASE WHEN EXCLUDED.last_message_at >= conversations.last_message_at THEN EXCLUDED.last_message_id ELSE conversations.last_message_id END,
          last_message_at  = GREATEST(conversations.last_message_at, EXCLUDED.last_message_at),
          last_inbound_at  = GREATEST(conversations.last_inbound_at, EXCLUDED.last_inbound_at),
          last_outbound_at = GREATEST(conversations.last_outbound_at, EXCLUDED.last_outbound_at);
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE TRIGGER messages_conversations_insert AFTER INSERT ON messages
      FOR EACH ROW WHEN (NEW.contact_id IS NOT NULL) EXECUTE FUNCTION conversations_touch()`);
    await db.query(`
      CREATE TRIGGER messages_conversations_link AFTER UPDATE OF contact_id ON messages
      FOR EACH ROW WHEN (NEW.contact_id IS NOT NULL AND OLD.contact_id IS DISTINCT FROM NEW.contact_id) EXECUTE FUNCTION conversations_touch()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER messages_conversations_link ON messages`);
    await db.query(`DROP TRIGGER messages_conversations_insert ON messages`);
    await db.query(`DROP FUNCTION conversations_touch()`);
    await db.query(`DROP TABLE conversations`);
    await db.query(`DROP INDEX messages_contact_idx`);
    await db.query(`DROP INDEX messages_queued_idx`);
    await db.query(`ALTER TABLE messages DROP COLUMN attempts, DROP COLUMN queue`);
    await db.query(`ALTER TABLE accounts DROP COLUMN callback_secret`);
  }
}
