import { MigrationInterface, QueryRunner } from 'typeorm';
import { ApiClientChanges1764170000000 } from './1764170000000-api-client-changes';
import { PhoneNumberChanges1764171000000 } from './1764171000000-phone-number-changes';

/**
 * One trigger function for every table whose rows a process keeps in memory (ChangeNotices, NotifiedCache):
 * `notify_row_change(channel, column)` NOTIFYs `channel` at commit with the changed row's `column` (the new row for an
 * INSERT, the old one otherwise; `*` for a TRUNCATE). The two functions of the previous migrations differed only in
 * those two names; webhook_endpoints is the third user: whether an account has an endpoint (WebhookEndpointPresence)
 * decides whether a status write needs a transaction for its account webhook events.
 */
export class RowChangeNotices1764180000000 implements MigrationInterface {
  name = 'RowChangeNotices1764180000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION notify_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify(TG_ARGV[0], '*');
        ELSIF TG_OP = 'INSERT' THEN
          PERFORM pg_notify(TG_ARGV[0], to_jsonb(NEW) ->> TG_ARGV[1]);
        ELSE
          PERFORM pg_notify(TG_ARGV[0], to_jsonb(OLD) ->> TG_ARGV[1]);
        END IF;
        RETURN NULL;
      END $$`);

    await db.query(`DROP TRIGGER api_client_changed_truncate ON api_clients`);
    await db.query(`DROP TRIGGER api_client_changed_update ON api_clients`);
    await db.query(`DROP TRIGGER api_client_changed_delete ON api_clients`);
    await db.query(`DROP FUNCTION api_client_changed()`);
    await db.query(`
      CREATE TRIGGER api_client_changed_delete AFTER DELETE ON api_clients FOR EACH ROW
      EXECUTE FUNCTION notify_row_change('api_client_changed', 'client_id')`);
    // Not on refresh_token_id: the guard does not read it, and every sign-in and refresh writes it.
    await db.query(`
      CREATE TRIGGER api_client_changed_update AFTER UPDATE ON api_clients FOR EACH ROW
      WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id OR OLD.account_id IS DISTINCT FROM NEW.account_id
        OR OLD.grants IS DISTINCT FROM NEW.grants OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash)
      EXECUTE FUNCTION notify_row_change('api_client_changed', 'client_id')`);
    await db.query(`
      CREATE TRIGGER api_client_changed_truncate AFTER TRUNCATE ON api_clients
      FOR EACH STATEMENT EXECUTE FUNCTION notify_row_change('api_client_changed')`);

    await db.query(`DROP TRIGGER phone_number_changed_truncate ON phone_numbers`);
    await db.query(`DROP TRIGGER phone_number_changed_row ON phone_numbers`);
    await db.query(`DROP FUNCTION phone_number_changed()`);
    await db.query(`
      CREATE TRIGGER phone_number_changed_row AFTER INSERT OR UPDATE OR DELETE ON phone_numbers FOR EACH ROW
      EXECUTE FUNCTION notify_row_change('phone_number_changed', 'id')`);
    await db.query(`
      CREATE TRIGGER phone_number_changed_truncate AFTER TRUNCATE ON phone_numbers
      FOR EACH STATEMENT EXECUTE FUNCTION notify_row_change('phone_number_changed')`);

    // Only whether an account has an endpoint is kept: inserts and deletes, not the delivery worker's updates.
    await db.query(`
      CREATE TRIGGER webhook_endpoint_changed_row AFTER INSERT OR DELETE ON webhook_endpoints FOR EACH ROW
      EXECUTE FUNCTION notify_row_change('webhook_endpoint_changed', 'account_id')`);
    await db.query(`
      CREATE TRIGGER webhook_endpoint_changed_truncate AFTER TRUNCATE ON webhook_endpoints
      FOR EACH STATEMENT EXECUTE FUNCTION notify_row_change('webhook_endpoint_changed')`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER webhook_endpoint_changed_truncate ON webhook_endpoints`);
    await db.query(`DROP TRIGGER webhook_endpoint_changed_row ON webhook_endpoints`);
    await db.query(`DROP TRIGGER phone_number_changed_truncate ON phone_numbers`);
    await db.query(`DROP TRIGGER phone_number_changed_row ON phone_numbers`);
    await db.query(`DROP TRIGGER api_client_changed_truncate ON api_clients`);
    await db.query(`DROP TRIGGER api_client_changed_update ON api_clients`);
    await db.query(`DROP TRIGGER api_client_changed_delete ON api_clients`);
    await db.query(`DROP FUNCTION notify_row_change()`);
    // the previous migrations' own functions and triggers, as they made them
    await new ApiClientChanges1764170000000().up(db);
    await new PhoneNumberChanges1764171000000().up(db);
  }
}
