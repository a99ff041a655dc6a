import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Embedded driver: a customer's reply that arrives while a run still performs a step (the send before its
 * `wait_for_reply`) is kept in `pending_replies` and offered to the run's next reply wait, as the Temporal workflow
 * buffers it. Replies are routed to runs waiting for a reply or performing a step: the index that finds them covers
 * both.
 */
export class RunsEarlyReplies1764191000000 implements MigrationInterface {
  name = 'RunsEarlyReplies1764191000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE workflow_runs ADD COLUMN pending_replies jsonb`);
    await db.query(
      `CREATE INDEX workflow_runs_reply_target_idx ON workflow_runs (account_id, contact_phone) WHERE waiting_kind IN ('reply', 'effect')`,
    );
    await db.query(`DROP INDEX workflow_runs_reply_idx`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE INDEX workflow_runs_reply_idx ON workflow_runs (account_id, contact_phone) WHERE waiting_kind = 'reply'`,
    );
    await db.query(`DROP INDEX workflow_runs_reply_target_idx`);
    await db.query(`ALTER TABLE workflow_runs DROP COLUMN pending_replies`);
  }
}
