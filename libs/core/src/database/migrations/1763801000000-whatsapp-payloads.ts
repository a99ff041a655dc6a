import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Real WhatsApp payloads:
 * - contacts known only by a business-scoped user id (BSUID, Meta's usernames): `whatsapp_user_id`, unique per
 *   account; `contact_number` may then be null (one of the two is always set);
 * - templates keep the platform's PAUSED and DISABLED statuses, and the last category change Meta made
 *   (`template_category_update`: `previous_category`, `category_updated_at`).
 */
export class WhatsappPayloads1763801000000 implements MigrationInterface {
  name = 'WhatsappPayloads1763801000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE contacts ADD COLUMN whatsapp_user_id text`);
    await db.query(`ALTER TABLE contacts ALTER COLUMN contact_number DROP NOT NULL`);
    await db.query(
      `ALTER TABLE contacts ADD CONSTRAINT contacts_identity_check CHECK (contact_number IS NOT NULL OR whatsapp_user_id IS NOT NULL)`,
    );
    await db.query(
      `CREATE UNIQUE INDEX contacts_account_user_id_key ON contacts (account_id, whatsapp_user_id) WHERE whatsapp_user_id IS NOT NULL`,
    );

    await db.query(`ALTER TABLE templates DROP CONSTRAINT IF EXISTS templates_status_check`);
    await db.query(
      `ALTER TABLE templates ADD CONSTRAINT templates_status_check CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'))`,
    );
    await db.query(
      `ALTER TABLE templates ADD COLUMN previous_category text, ADD COLUMN category_updated_at timestamptz`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE templates DROP COLUMN previous_category, DROP COLUMN category_updated_at`);
    await db.query(`UPDATE templates SET status = 'REJECTED' WHERE status IN ('PAUSED', 'DISABLED')`);
    await db.query(`ALTER TABLE templates DROP CONSTRAINT templates_status_check`);
    await db.query(
      `ALTER TABLE templates ADD CONSTRAINT templates_status_check CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED'))`,
    );
    await db.query(`DELETE FROM contacts WHERE contact_number IS NULL`);
    await db.query(`DROP INDEX contacts_account_user_id_key`);
    await db.query(`ALTER TABLE contacts DROP CONSTRAINT contacts_identity_check`);
    await db.query(`ALTER TABLE contacts ALTER COLUMN contact_number SET NOT NULL`);
    await db.query(`ALTER TABLE contacts DROP COLUMN whatsapp_user_id`);
  }
}
