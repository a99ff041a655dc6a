import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * messages.send_job: the id of the send job that owns an outbound message when several messages share one job
 * (campaign fan-out sends a chunk of recipients per job); NULL means the job id is the message id. Every re-queue
 * of the message (recovery sweep, fan-out replay, campaign resume) uses this id, so at most one job sends it.
 */
export class SendBatches1763796000000 implements MigrationInterface {
  name = 'SendBatches1763796000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages ADD COLUMN send_job text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages DROP COLUMN send_job`);
  }
}
