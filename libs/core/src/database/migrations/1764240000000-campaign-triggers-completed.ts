import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaigns' live view (libs/campaigns/src/campaign-live.ts): a campaign sent only through the trigger API stays
 * `draft` or `completed`, so its view is kept moving by its triggers, running or completed in the last minute (their
 * sends still go out at the number's rate). This index finds the recently completed ones without reading them all.
 */
export class CampaignTriggersCompleted1764240000000 implements MigrationInterface {
  name = 'CampaignTriggersCompleted1764240000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE INDEX campaign_triggers_completed_idx ON campaign_triggers (completed_at) WHERE completed_at IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX campaign_triggers_completed_idx`);
  }
}
