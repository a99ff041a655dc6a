import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every process keeps the phone numbers it reads on each send batch and platform webhook in memory (AccountsService)
 * and drops them when PostgreSQL says one changed: `NOTIFY phone_number_changed` with the row id at commit, whoever
 * makes the change (connect, disconnect, a new token or rate; the operator CLI, a cascade, plain SQL).
 */
export class PhoneNumberChanges1764171000000 implements MigrationInterface {
  name = 'PhoneNumberChanges1764171000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION phone_number_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('phone_number_changed', '*');
        ELSIF TG_OP = 'INSERT' THEN
          PERFORM pg_notify('phone_number_changed', NEW.id::text);
        ELSE
          PERFORM pg_notify('phone_number_changed', OLD.id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE TRIGGER phone_number_changed_row AFTER INSERT OR UPDATE OR DELETE ON phone_numbers FOR EACH ROW
      EXECUTE FUNCTION phone_number_changed()`);
    await db.query(`
      CREATE TRIGGER phone_number_changed_truncate AFTER TRUNCATE ON phone_numbers
      FOR EACH STATEMENT EXECUTE FUNCTION phone_number_changed()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER phone_number_changed_truncate ON phone_numbers`);
    await db.query(`DROP TRIGGER phone_number_changed_row ON phone_numbers`);
    await db.query(`DROP FUNCTION phone_number_changed()`);
  }
}
