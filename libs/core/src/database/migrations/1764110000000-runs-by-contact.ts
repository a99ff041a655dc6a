import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A contact's runs (GET /v1/workflow-runs?contact_id=, the console's contact detail): runs are bound to a contact by
 * id, or by number for webhook-started runs; one index for each, newest first within the account.
 */
export class RunsByContact1764110000000 implements MigrationInterface {
  name = 'RunsByContact1764110000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE INDEX workflow_runs_contact_idx ON workflow_runs (account_id, contact_id, created_at DESC) WHERE contact_id IS NOT NULL`,
    );
    await db.query(
      `CREATE INDEX workflow_runs_contact_phone_idx ON workflow_runs (account_id, contact_phone, created_at DESC) WHERE contact_phone IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX workflow_runs_contact_phone_idx`);
    await db.query(`DROP INDEX workflow_runs_contact_idx`);
  }
}
