import { MigrationInterface, QueryRunner } from 'typeorm';

export class MessagesAndPlatformWebhooks1763783000000 implements MigrationInterface {
  name = 'MessagesAndPlatformWebhooks1763783000000';

  async up(db: QueryRunner): Promise<void> {
    // Delivery statuses only move forward; failed is final.
    await db.query(`
      CREATE FUNCTION message_status_rank(status text) RETURNS int LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE status WHEN 'queued' THEN 0 WHEN 'accepted' THEN 1 WHEN 'sent' THEN 2 WHEN 'delivered' THEN 3
                           WHEN 'read' THEN 4 WHEN 'failed' THEN 5 ELSE -1 END
      $$`);
    await db.query(`
      CREATE TABLE messages (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id       bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        phone_number_id  bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        contact_id       bigint,
        direction        text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
        recipient        text NOT NULL,
        kind             text NOT NULL,
        template_name    text,
        body             text,
        payload          jsonb NOT NULL DEFAULT '{}',
        status           text NOT NULL,
        wamid            text UNIQUE,
        context_wamid    text,
        idempotency_key  text,
        callback_url     text,
        callback_events  text[] NOT NULL DEFAULT '{}',
        error_code       integer,
        error_title      text,
        error_message    text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        accepted_at      timestamptz,
        sent_at          timestamptz,
        delivered_at     timestamptz,
        read_at          timestamptz,
        failed_at        timestamptz,
        replied_at       timestamptz
      )`);
    await db.query(
      `CREATE UNIQUE INDEX messages_idempotency_idx ON messages (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await db.query(`CREATE INDEX messages_conversation_idx ON messages (phone_number_id, recipient, created_at DESC)`);
    await db.query(`CREATE INDEX messages_account_idx ON messages (account_id, created_at DESC)`);

    // The 24-hour customer-care window: the last time each customer wrote to each of our numbers.
    await db.query(`
      CREATE TABLE customer_windows (
        phone_number_id  bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        customer         text NOT NULL,
        last_inbound_at  timestamptz NOT NULL,
        PRIMARY KEY (phone_number_id, customer)
      )`);

    // Every platform webhook as received (verified), processed later by the worker.
    await db.query(`
      CREATE TABLE platform_webhook_events (
        id            bigserial PRIMARY KEY,
        received_at   timestamptz NOT NULL DEFAULT now(),
        payload       jsonb NOT NULL,
        processed_at  timestamptz,
        error         text
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE platform_webhook_events`);
    await db.query(`DROP TABLE customer_windows`);
    await db.query(`DROP TABLE messages`);
    await db.query(`DROP FUNCTION message_status_rank(text)`);
  }
}
