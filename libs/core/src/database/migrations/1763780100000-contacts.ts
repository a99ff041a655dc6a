import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contacts and contact groups (SPEC §2 Contact, §4 Contacts). Numbers are stored as E.164 digits without `+`
 * (see libs/core/src/phone.ts), unique per account. Search on name, number and email is a case-insensitive
 * substring match served by pg_trgm GIN indexes; listing is newest first per account.
 */
export class Contacts1763780100000 implements MigrationInterface {
  name = 'Contacts1763780100000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await db.query(`
      CREATE TABLE contacts (
        id              bigserial PRIMARY KEY,
        account_id      bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name            text,
        contact_number  text NOT NULL CHECK (contact_number ~ '^[1-9][0-9]{7,14}$'),
        email           text,
        date_of_birth   date,
        gender          text,
        instagram_url   text,
        facebook_url    text,
        linkedin_url    text,
        is_blocked      boolean NOT NULL DEFAULT false,
        platform        text NOT NULL DEFAULT 'whatsapp',
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT contacts_account_number_key UNIQUE (account_id, contact_number)
      )`);
    await db.query(`CREATE INDEX contacts_account_newest_idx ON contacts (account_id, created_at DESC, id DESC)`);
    await db.query(`CREATE INDEX contacts_name_trgm_idx ON contacts USING gin (name gin_trgm_ops)`);
    await db.query(`CREATE INDEX contacts_email_trgm_idx ON contacts USING gin (email gin_trgm_ops)`);
    await db.query(`CREATE INDEX contacts_number_trgm_idx ON contacts USING gin (contact_number gin_trgm_ops)`);

    await db.query(`
      CREATE TABLE contact_groups (
        id          bigserial PRIMARY KEY,
        account_id  bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // Group names are unique per account regardless of case ("VIP" and "vip" are the same group).
    await db.query(`CREATE UNIQUE INDEX contact_groups_account_name_key ON contact_groups (account_id, lower(name))`);
    await db.query(
      `CREATE INDEX contact_groups_account_newest_idx ON contact_groups (account_id, created_at DESC, id DESC)`,
    );

    await db.query(`
      CREATE TABLE contact_group_members (
        group_id    bigint NOT NULL REFERENCES contact_groups(id) ON DELETE CASCADE,
        contact_id  bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        added_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (group_id, contact_id)
      )`);
    // The primary key serves the keyset walk over a group's members; this one serves "groups of a contact".
    await db.query(`CREATE INDEX contact_group_members_contact_idx ON contact_group_members (contact_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE contact_group_members`);
    await db.query(`DROP TABLE contact_groups`);
    await db.query(`DROP TABLE contacts`);
  }
}
