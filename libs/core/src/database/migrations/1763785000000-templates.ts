import { MigrationInterface, QueryRunner } from 'typeorm';

/** Message templates (libs/templates) and the account event log (client-visible events such as template_status_update). */
export class Templates1763785000000 implements MigrationInterface {
  name = 'Templates1763785000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE templates (
        id                        bigserial PRIMARY KEY,
        account_id                bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        phone_number_id           bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        platform_template_id      text,
        name                      text NOT NULL CHECK (name ~ '^[a-z0-9_]+$' AND length(name) <= 512),
        language                  text NOT NULL,
        category                  text NOT NULL CHECK (category IN ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
        status                    text NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED')),
        platform_status           text,
        rejected_reason           text,
        components                jsonb NOT NULL,
        platform_components       jsonb NOT NULL,
        variables                 text[] NOT NULL DEFAULT '{}',
        header_type               text NOT NULL DEFAULT 'none' CHECK (header_type IN ('none', 'text', 'image', 'video', 'document')),
        buttons                   jsonb NOT NULL DEFAULT '[]',
        carousel                  jsonb,
        category_change_allowed   boolean NOT NULL DEFAULT false,
        created_at                timestamptz NOT NULL DEFAULT now(),
        updated_at                timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT templates_account_name_language_key UNIQUE (account_id, name, language)
      )`);
    await db.query(`CREATE INDEX templates_account_status_idx ON templates (account_id, status, created_at DESC)`);
    await db.query(
      `CREATE INDEX templates_platform_id_idx ON templates (platform_template_id) WHERE platform_template_id IS NOT NULL`,
    );
    await db.query(`CREATE INDEX templates_phone_number_idx ON templates (phone_number_id)`);
    await db.query(`
      CREATE TABLE account_events (
        id          bigserial PRIMARY KEY,
        account_id  bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        type        text NOT NULL,
        payload     jsonb NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX account_events_account_idx ON account_events (account_id, id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE account_events`);
    await db.query(`DROP TABLE templates`);
  }
}
