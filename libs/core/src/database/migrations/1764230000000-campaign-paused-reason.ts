import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaigns (docs/campaigns.md "State machine"): why a running campaign paused itself — its template stopped being
 * APPROVED while it sent (Meta pauses a template for its quality). Cleared by a resume. Before, every recipient left
 * was marked failed within seconds and the campaign completed, with no way to send them once the template came back.
 */
export class CampaignPausedReason1764230000000 implements MigrationInterface {
  name = 'CampaignPausedReason1764230000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE campaigns ADD COLUMN paused_reason text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE campaigns DROP COLUMN paused_reason`);
  }
}
