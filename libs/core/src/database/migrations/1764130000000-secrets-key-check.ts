import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row sealed with the deployment's ENCRYPTION_KEY (libs/accounts/src/secrets-key-check.ts): a process started
 * with another key finds out at start, and exits naming the setting, instead of failing requests later.
 */
export class SecretsKeyCheck1764130000000 implements MigrationInterface {
  name = 'SecretsKeyCheck1764130000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE secrets_key_check (
        id               smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        sealed           text NOT NULL,
        key_fingerprint  text NOT NULL,
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE secrets_key_check`);
  }
}
