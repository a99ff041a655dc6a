import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk contact imports (CSV / XLSX, libs/contacts `imports/`): the upload is stored here in chunks before its job is
 * queued (a worker streams it back chunk by chunk), the import row carries its settings and progress, and every
 * rejected row is kept with its reason for the downloadable error report.
 */
export class ContactImports1764120000000 implements MigrationInterface {
  name = 'ContactImports1764120000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE contact_imports (
        id              bigserial PRIMARY KEY,
        account_id      bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        file_name       text NOT NULL,
        format          text NOT NULL CHECK (format IN ('csv', 'xlsx')),
        size_bytes      bigint NOT NULL,
        mapping         jsonb NOT NULL,
        group_ids       bigint[] NOT NULL DEFAULT '{}',
        existing        text NOT NULL CHECK (existing IN ('skip', 'update')),
        delimiter       text,
        status          text NOT NULL DEFAULT 'queued'
                        CHECK (status IN ('queued', 'validating', 'importing', 'completed', 'failed')),
        error           text,
        header          text[],
        total_rows      integer,
        processed_rows  integer NOT NULL DEFAULT 0,
        created_count   integer NOT NULL DEFAULT 0,
        updated_count   integer NOT NULL DEFAULT 0,
        skipped_count   integer NOT NULL DEFAULT 0,
        failed_count    integer NOT NULL DEFAULT 0,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        started_at      timestamptz,
        completed_at    timestamptz
      )`);
    await db.query(`CREATE INDEX contact_imports_account_idx ON contact_imports (account_id, id DESC)`);
    await db.query(`
      CREATE TABLE contact_import_chunks (
        import_id  bigint NOT NULL REFERENCES contact_imports(id) ON DELETE CASCADE,
        seq        integer NOT NULL,
        data       bytea NOT NULL,
        PRIMARY KEY (import_id, seq)
      )`);
    // the file is read back once, in order: no compression work on the way in or out
    await db.query(`ALTER TABLE contact_import_chunks ALTER COLUMN data SET STORAGE EXTERNAL`);
    await db.query(`
      CREATE TABLE contact_import_errors (
        import_id   bigint NOT NULL REFERENCES contact_imports(id) ON DELETE CASCADE,
        row_number  integer NOT NULL,
        reason      text NOT NULL,
        cells       text[] NOT NULL,
        PRIMARY KEY (import_id, row_number)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE contact_import_errors`);
    await db.query(`DROP TABLE contact_import_chunks`);
    await db.query(`DROP TABLE contact_imports`);
  }
}
