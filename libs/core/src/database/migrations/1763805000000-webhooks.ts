import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Account webhooks (libs/webhooks, docs/webhooks.md):
 * - webhook_endpoints: an account's receivers (URL, subscribed event types, sealed signing secrets);
 * - webhook_events: the outbox — one row per event, written in the same transaction as the change it reports;
 *   `dispatched_at` is set when the dispatcher has fanned it out into deliveries;
 * - webhook_deliveries: one event to one endpoint; the delivery queue itself (`next_attempt_at` is also the lease of
 *   an attempt in flight, so a delivery claimed by a worker that died is attempted again after the lease);
 * - webhook_delivery_attempts: the log of every HTTP attempt.
 */
export class Webhooks1763805000000 implements MigrationInterface {
  name = 'Webhooks1763805000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE webhook_endpoints (
        id                         text PRIMARY KEY DEFAULT 'ep_' || replace(gen_random_uuid()::text, '-', ''),
        account_id                 bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        url                        text NOT NULL,
        events                     text[] NOT NULL,
        description                text NOT NULL DEFAULT '',
        enabled                    boolean NOT NULL DEFAULT true,
        disabled_reason            text,
        disabled_at                timestamptz,
        secret_sealed              text NOT NULL,
        previous_secret_sealed     text,
        previous_secret_expires_at timestamptz,
        failing_since              timestamptz,
        created_at                 timestamptz NOT NULL DEFAULT now(),
        updated_at                 timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at)`);
    await db.query(`
      CREATE TABLE webhook_events (
        id            text PRIMARY KEY DEFAULT 'evt_' || replace(gen_random_uuid()::text, '-', ''),
        account_id    bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        type          text NOT NULL,
        data          jsonb NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
        dispatched_at timestamptz
      )`);
    await db.query(`CREATE INDEX webhook_events_account_idx ON webhook_events (account_id, created_at, id)`);
    await db.query(
      `CREATE INDEX webhook_events_undispatched_idx ON webhook_events (created_at) WHERE dispatched_at IS NULL`,
    );
    await db.query(`
      CREATE TABLE webhook_deliveries (
        id               text PRIMARY KEY DEFAULT 'del_' || replace(gen_random_uuid()::text, '-', ''),
        account_id       bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_id         text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        trigger          text NOT NULL DEFAULT 'event' CHECK (trigger IN ('event', 'replay', 'test')),
        status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        last_attempt_at  timestamptz,
        last_status_code integer,
        last_error       text,
        delivered_at     timestamptz,
        created_at       timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await db.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await db.query(`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC)`);
    await db.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
    await db.query(`
      CREATE TABLE webhook_delivery_attempts (
        id               bigserial PRIMARY KEY,
        delivery_id      text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        attempted_at     timestamptz NOT NULL,
        status_code      integer,
        latency_ms       integer NOT NULL,
        response_excerpt text,
        error            text
      )`);
    await db.query(
      `CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, id)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE webhook_delivery_attempts`);
    await db.query(`DROP TABLE webhook_deliveries`);
    await db.query(`DROP TABLE webhook_events`);
    await db.query(`DROP TABLE webhook_endpoints`);
  }
}
