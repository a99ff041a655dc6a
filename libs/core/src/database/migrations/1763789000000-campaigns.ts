import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaigns (libs/campaigns):
 * - campaigns: a prepared template send (number, template, default variables, media, callback) with a group audience
 *   and a state (draft → running ⇄ paused → completed; cancelled from any but completed). `variables` is `json`, not
 *   `jsonb`: body variables are filled in key order and `json` keeps the text (and so the order) as given;
 * - campaign_audience: the contacts of the campaign (group members as the start fan-out reaches them, API triggers);
 * - campaign_triggers: one row per start or API trigger: the request, the idempotency key (unique per campaign) and the
 *   fan-out cursor (`cursor` = last contact id expanded, `batches_done`), so a restarted worker resumes where it stopped;
 * - campaign_recipients: one row per (campaign, trigger, contact): unique, so a replayed batch or a retried trigger never
 *   creates a second message; `message_id` links the stored message;
 * - messages.campaign_id: progress counts come from the messages themselves (statuses move with the platform webhooks).
 */
export class Campaigns1763789000000 implements MigrationInterface {
  name = 'Campaigns1763789000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE campaigns (
        id               bigserial PRIMARY KEY,
        account_id       bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        phone_number_id  bigint NOT NULL REFERENCES phone_numbers(id) ON DELETE CASCADE,
        name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        template_name    text NOT NULL,
        template_language text NOT NULL,
        variables        json NOT NULL DEFAULT '{}',
        media_url        text,
        document_name    text,
        callback_url     text,
        callback_events  text[] NOT NULL DEFAULT '{}',
        group_ids        bigint[] NOT NULL DEFAULT '{}',
        status           text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'running', 'paused', 'completed', 'cancelled')),
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        started_at       timestamptz,
        completed_at     timestamptz
      )`);
    await db.query(`CREATE INDEX campaigns_account_idx ON campaigns (account_id, id DESC)`);

    await db.query(`
      CREATE TABLE campaign_audience (
        campaign_id  bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        contact_id   bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        added_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (campaign_id, contact_id)
      )`);

    await db.query(`
      CREATE TABLE campaign_triggers (
        id               bigserial PRIMARY KEY,
        campaign_id      bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        kind             text NOT NULL CHECK (kind IN ('start', 'api')),
        idempotency_key  text,
        include_existing boolean NOT NULL DEFAULT false,
        request          json,
        status           text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'cancelled')),
        cursor           bigint NOT NULL DEFAULT 0,
        batches_done     integer NOT NULL DEFAULT 0,
        contacts         integer NOT NULL DEFAULT 0,
        recipients       integer NOT NULL DEFAULT 0,
        skipped_blocked  integer NOT NULL DEFAULT 0,
        created_at       timestamptz NOT NULL DEFAULT now(),
        completed_at     timestamptz
      )`);
    await db.query(
      `CREATE UNIQUE INDEX campaign_triggers_idempotency_idx ON campaign_triggers (campaign_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await db.query(
      `CREATE INDEX campaign_triggers_running_idx ON campaign_triggers (campaign_id) WHERE status = 'running'`,
    );

    await db.query(`
      CREATE TABLE campaign_recipients (
        campaign_id  bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        trigger_id   bigint NOT NULL REFERENCES campaign_triggers(id) ON DELETE CASCADE,
        contact_id   bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        message_id   uuid,
        variables    json,
        status       text NOT NULL CHECK (status IN ('pending', 'queued', 'skipped_blocked', 'failed', 'cancelled')),
        error        text,
        batch        integer,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (campaign_id, trigger_id, contact_id)
      )`);
    // "has this contact already been sent this campaign" (the start fan-out skips contacts an API trigger reached)
    await db.query(`CREATE INDEX campaign_recipients_contact_idx ON campaign_recipients (campaign_id, contact_id)`);

    await db.query(`ALTER TABLE messages ADD COLUMN campaign_id bigint REFERENCES campaigns(id) ON DELETE SET NULL`);
    await db.query(`CREATE INDEX messages_campaign_idx ON messages (campaign_id) WHERE campaign_id IS NOT NULL`);
    // the fan-out's backlog check: this campaign's messages not yet handed to the platform
    await db.query(
      `CREATE INDEX messages_campaign_queued_idx ON messages (campaign_id) WHERE campaign_id IS NOT NULL AND status = 'queued'`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX messages_campaign_queued_idx`);
    await db.query(`DROP INDEX messages_campaign_idx`);
    await db.query(`ALTER TABLE messages DROP COLUMN campaign_id`);
    await db.query(`DROP TABLE campaign_recipients`);
    await db.query(`DROP TABLE campaign_triggers`);
    await db.query(`DROP TABLE campaign_audience`);
    await db.query(`DROP TABLE campaigns`);
  }
}
