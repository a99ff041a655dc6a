import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workflows (definitions, one row per version) and their runs, for libs/automations.
 * A run keeps the version it started with; its engine state (including the step history) is one json column.
 * json rather than jsonb where key order matters: jsonb reorders keys, and send_template variables are filled in key order.
 */
export class Automations1763790000000 implements MigrationInterface {
  name = 'Automations1763790000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE workflows (
        id               bigserial PRIMARY KEY,
        account_id       bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name             text NOT NULL,
        is_active        boolean NOT NULL DEFAULT true,
        identifier       text NOT NULL UNIQUE,
        trigger_type     text NOT NULL,
        current_version  integer NOT NULL DEFAULT 1,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX workflows_account_idx ON workflows (account_id, id)`);
    await db.query(
      `CREATE INDEX workflows_keyword_idx ON workflows (account_id) WHERE is_active AND trigger_type = 'keyword'`,
    );
    await db.query(`
      CREATE TABLE workflow_versions (
        workflow_id  bigint NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        version      integer NOT NULL,
        definition   json NOT NULL,  -- json, not jsonb: key order is meaningful (template variables)
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workflow_id, version)
      )`);
    await db.query(`
      CREATE TABLE workflow_runs (
        id                  uuid PRIMARY KEY,
        account_id          bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        workflow_id         bigint NOT NULL,
        workflow_version    integer NOT NULL,
        status              text NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'completed', 'failed')),
        payload             json,
        state               json,   -- the engine's RunState; json keeps the key order of effect variables
        current_node_id     text,
        contact_id          text,
        contact_phone       text,
        messaging_phone_id  text,
        waiting_kind        text CHECK (waiting_kind IN ('effect', 'timer', 'reply')),
        waiting_seq         integer,
        wake_at             timestamptz,
        idempotency_key     text,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        finished_at         timestamptz,
        FOREIGN KEY (workflow_id, workflow_version) REFERENCES workflow_versions (workflow_id, version) ON DELETE CASCADE
      )`);
    await db.query(
      `CREATE UNIQUE INDEX workflow_runs_idempotency_idx ON workflow_runs (workflow_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await db.query(`CREATE INDEX workflow_runs_workflow_idx ON workflow_runs (workflow_id, created_at DESC, id DESC)`);
    await db.query(
      `CREATE INDEX workflow_runs_reply_idx ON workflow_runs (account_id, contact_phone) WHERE waiting_kind = 'reply'`,
    );
    await db.query(
      `CREATE INDEX workflow_runs_active_idx ON workflow_runs (status, updated_at) WHERE status IN ('pending', 'running', 'waiting')`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE workflow_runs`);
    await db.query(`DROP TABLE workflow_versions`);
    await db.query(`DROP TABLE workflows`);
  }
}
