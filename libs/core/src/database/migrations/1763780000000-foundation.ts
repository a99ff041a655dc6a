import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763780000000 implements MigrationInterface {
  name = 'Foundation1763780000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE accounts (
        id          bigserial PRIMARY KEY,
        name        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`
      CREATE TABLE phone_numbers (
        id                      bigserial PRIMARY KEY,
        account_id              bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        messaging_phone_id      text NOT NULL UNIQUE,
        display_phone_number    text NOT NULL,
        verified_name           text NOT NULL,
        status                  text NOT NULL DEFAULT 'CONNECTED',
        business_account_id     text NOT NULL,
        api_base_url            text NOT NULL,
        api_version             text NOT NULL,
        access_token_encrypted  text NOT NULL,
        messages_per_second     integer NOT NULL DEFAULT 80 CHECK (messages_per_second BETWEEN 1 AND 1000),
        created_at              timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX phone_numbers_account_idx ON phone_numbers (account_id)`);
    await db.query(`
      CREATE TABLE api_clients (
        id                  bigserial PRIMARY KEY,
        account_id          bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        client_id           text NOT NULL UNIQUE,
        secret_hash         text NOT NULL,
        grants              text[] NOT NULL,
        refresh_token_id    text,
        created_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX api_clients_account_idx ON api_clients (account_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE api_clients`);
    await db.query(`DROP TABLE phone_numbers`);
    await db.query(`DROP TABLE accounts`);
  }
}
