import { MigrationInterface, QueryRunner } from 'typeorm';

/** Interactive forms (libs/flows): flows, the flow tokens of sent flow messages, and completed-form responses. */
export class Flows1763787000000 implements MigrationInterface {
  name = 'Flows1763787000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE flows (
        id                bigserial PRIMARY KEY,
        account_id        bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        phone_number_id   bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        platform_flow_id  text NOT NULL,
        name              text NOT NULL,
        categories        text[] NOT NULL,
        status            text NOT NULL CHECK (status IN ('draft', 'published', 'deprecated')),
        screens           jsonb,
        flow_json         jsonb NOT NULL,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        published_at      timestamptz,
        deprecated_at     timestamptz,
        CONSTRAINT flows_account_platform_id_key UNIQUE (account_id, platform_flow_id)
      )`);
    await db.query(`CREATE INDEX flows_account_status_idx ON flows (account_id, status, created_at DESC)`);
    await db.query(`CREATE INDEX flows_phone_number_idx ON flows (phone_number_id)`);

    // One row per flow_token put into a sent flow message: how a completed form finds its flow.
    await db.query(`
      CREATE TABLE flow_sends (
        account_id   bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        flow_token   text NOT NULL,
        flow_id      bigint NOT NULL REFERENCES flows(id) ON DELETE CASCADE,
        message_id   uuid REFERENCES messages(id) ON DELETE SET NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, flow_token)
      )`);
    await db.query(`CREATE INDEX flow_sends_flow_idx ON flow_sends (flow_id)`);

    await db.query(`
      CREATE TABLE flow_responses (
        id              bigserial PRIMARY KEY,
        account_id      bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        flow_id         bigint NOT NULL REFERENCES flows(id) ON DELETE CASCADE,
        flow_token      text NOT NULL,
        contact_number  text NOT NULL,
        response        jsonb NOT NULL,
        message_id      uuid NOT NULL UNIQUE REFERENCES messages(id) ON DELETE CASCADE,
        received_at     timestamptz NOT NULL
      )`);
    await db.query(`CREATE INDEX flow_responses_flow_idx ON flow_responses (flow_id, received_at DESC, id DESC)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE flow_responses`);
    await db.query(`DROP TABLE flow_sends`);
    await db.query(`DROP TABLE flows`);
  }
}
