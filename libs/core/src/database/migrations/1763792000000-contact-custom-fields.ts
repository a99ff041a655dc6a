import { MigrationInterface, QueryRunner } from 'typeorm';

/** Custom fields of a contact (set by automations' update_contact, e.g. `last_order`), beside name and email. */
export class ContactCustomFields1763792000000 implements MigrationInterface {
  name = 'ContactCustomFields1763792000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE contacts ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE contacts DROP COLUMN custom_fields`);
  }
}
