import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Send claims (a fencing token per outbound message): right before each platform call the sender claims the message in
 * one UPDATE that bumps `send_claim` and stamps `claimed_at`, on the condition that the claim is still the one it read.
 * A job that lost its lock (a frozen or killed worker) therefore never calls out for a message claimed since, and a
 * message claimed without a recorded platform answer is "in doubt" from `claimed_at` on (docs/messaging.md).
 * The partial index answers "is any platform webhook received before T still unprocessed?" for that wait.
 */
export class SendClaims1764150000000 implements MigrationInterface {
  name = 'SendClaims1764150000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE messages ADD COLUMN send_claim int NOT NULL DEFAULT 0, ADD COLUMN claimed_at timestamptz`,
    );
    await db.query(
      `CREATE INDEX platform_webhook_events_unprocessed ON platform_webhook_events (received_at)
        WHERE processed_at IS NULL AND error IS NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX platform_webhook_events_unprocessed`);
    await db.query(`ALTER TABLE messages DROP COLUMN send_claim, DROP COLUMN claimed_at`);
  }
}
