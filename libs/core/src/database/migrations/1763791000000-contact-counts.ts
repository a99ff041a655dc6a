import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The number of contacts of each account, kept by statement-level triggers, so the unfiltered contact list
 * (the common case) answers its total without counting 100,000 rows on every request.
 */
export class ContactCounts1763791000000 implements MigrationInterface {
  name = 'ContactCounts1763791000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE contact_counts (
        account_id  bigint PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        total       bigint NOT NULL DEFAULT 0
      )`);
    await db.query(
      `INSERT INTO contact_counts (account_id, total) SELECT account_id, count(*) FROM contacts GROUP BY account_id`,
    );
    await db.query(`
      CREATE FUNCTION contact_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contact_counts (account_id, total)
        SELECT account_id, count(*) FROM inserted GROUP BY account_id
        ON CONFLICT (account_id) DO UPDATE SET total = contact_counts.total + EXCLUDED.total;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE FUNCTION contact_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE contact_counts c SET total = c.total - d.n
          FROM (SELECT account_id, count(*) AS n FROM deleted GROUP BY account_id) d
         WHERE c.account_id = d.account_id;
        RETURN NULL;
      END $$`);
    await db.query(
      `CREATE TRIGGER contacts_counted_on_insert AFTER INSERT ON contacts REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_after_insert()`,
    );
    await db.query(
      `CREATE TRIGGER contacts_counted_on_delete AFTER DELETE ON contacts REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_after_delete()`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER contacts_counted_on_delete ON contacts`);
    await db.query(`DROP TRIGGER contacts_counted_on_insert ON contacts`);
    await db.query(`DROP FUNCTION contact_counts_after_delete()`);
    await db.query(`DROP FUNCTION contact_counts_after_insert()`);
    await db.query(`DROP TABLE contact_counts`);
  }
}
