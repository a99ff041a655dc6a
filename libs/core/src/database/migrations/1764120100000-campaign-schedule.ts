import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled campaigns: `scheduled_at` (when a `scheduled` campaign starts by itself; kept afterwards as history) and
 * `schedule_error` (why a scheduled start could not happen: the campaign went back to draft). The state machine gains
 * `scheduled` (docs/campaigns.md).
 */
export class CampaignSchedule1764120100000 implements MigrationInterface {
  name = 'CampaignSchedule1764120100000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE campaigns ADD COLUMN scheduled_at timestamptz, ADD COLUMN schedule_error text`);
    await db.query(`ALTER TABLE campaigns DROP CONSTRAINT campaigns_status_check`);
    await db.query(
      `ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check
         CHECK (status IN ('draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'))`,
    );
    await db.query(`CREATE INDEX campaigns_scheduled_idx ON campaigns (scheduled_at) WHERE status = 'scheduled'`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX campaigns_scheduled_idx`);
    await db.query(`UPDATE campaigns SET status = 'draft' WHERE status = 'scheduled'`);
    await db.query(`ALTER TABLE campaigns DROP CONSTRAINT campaigns_status_check`);
    await db.query(
      `ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check
         CHECK (status IN ('draft', 'running', 'paused', 'completed', 'cancelled'))`,
    );
    await db.query(`ALTER TABLE campaigns DROP COLUMN scheduled_at, DROP COLUMN schedule_error`);
  }
}
