import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People of an account who sign in to the console (libs/users), their server-side sessions, and the workflow
 * builder's storage (libs/automations): per-version node positions (`layout`), one draft per workflow with a
 * revision number for optimistic concurrency, and archiving instead of deleting (runs keep their version).
 */
export class ConsoleUsers1763806000000 implements MigrationInterface {
  name = 'ConsoleUsers1763806000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE users (
        id             bigserial PRIMARY KEY,
        account_id     bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        email          text NOT NULL,
        password_hash  text NOT NULL,
        role           text NOT NULL CHECK (role IN ('admin', 'marketer', 'agent')),
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE UNIQUE INDEX users_email_idx ON users (lower(email))`);
    await db.query(`
      CREATE TABLE console_sessions (
        id            text PRIMARY KEY,  -- sha256 of the cookie value; the value itself is never stored
        user_id       bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf_token    text NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        expires_at    timestamptz NOT NULL
      )`);
    await db.query(`CREATE INDEX console_sessions_user_idx ON console_sessions (user_id)`);

    await db.query(`ALTER TABLE workflow_versions ADD COLUMN layout json`);
    await db.query(`ALTER TABLE workflows ADD COLUMN archived_at timestamptz`);
    await db.query(`
      CREATE TABLE workflow_drafts (
        workflow_id   bigint PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
        revision      integer NOT NULL,
        base_version  integer NOT NULL,
        name          text NOT NULL,
        definition    json NOT NULL,  -- as edited: may not be valid yet
        layout        json,
        updated_at    timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE workflow_drafts`);
    await db.query(`ALTER TABLE workflows DROP COLUMN archived_at`);
    await db.query(`ALTER TABLE workflow_versions DROP COLUMN layout`);
    await db.query(`DROP TABLE console_sessions`);
    await db.query(`DROP TABLE users`);
  }
}
