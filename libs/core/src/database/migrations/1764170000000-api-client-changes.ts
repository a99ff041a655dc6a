import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every API process keeps the client rows its guard checks in memory (libs/auth/src/client-state-cache.ts) and drops
 * one when PostgreSQL says it changed: at commit, whoever made the change (the API, the operator CLI, an account's
 * deletion cascading, plain SQL). The payload is the client id; `*` (a TRUNCATE) means all of them.
 */
export class ApiClientChanges1764170000000 implements MigrationInterface {
  name = 'ApiClientChanges1764170000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION api_client_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('api_client_changed', '*');
        ELSE
          PERFORM pg_notify('api_client_changed', OLD.client_id);
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE TRIGGER api_client_changed_delete AFTER DELETE ON api_clients FOR EACH ROW
      EXECUTE FUNCTION api_client_changed()`);
    // Not on refresh_token_id: the guard does not read it, and every sign-in and refresh writes it.
    await db.query(`
      CREATE TRIGGER api_client_changed_update AFTER UPDATE ON api_clients FOR EACH ROW
      WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id OR OLD.account_id IS DISTINCT FROM NEW.account_id
        OR OLD.grants IS DISTINCT FROM NEW.grants OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash)
      EXECUTE FUNCTION api_client_changed()`);
    await db.query(`
      CREATE TRIGGER api_client_changed_truncate AFTER TRUNCATE ON api_clients
      FOR EACH STATEMENT EXECUTE FUNCTION api_client_changed()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER api_client_changed_truncate ON api_clients`);
    await db.query(`DROP TRIGGER api_client_changed_update ON api_clients`);
    await db.query(`DROP TRIGGER api_client_changed_delete ON api_clients`);
    await db.query(`DROP FUNCTION api_client_changed()`);
  }
}
