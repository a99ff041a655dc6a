import { MigrationInterface, QueryRunner } from 'typeorm';

/** Per table: the SQL expression (over one of its rows) of the counters that row adds to. */
const COUNTERS = {
  messages: `CASE WHEN replied_at IS NULL THEN ARRAY['messages:' || status] ELSE ARRAY['messages:' || status, 'messages:replied'] END`,
  campaign_recipients: `ARRAY['recipients:' || status]`,
  campaign_audience: `ARRAY['audience']`,
};

/** Audience rows are never updated (only added and removed). */
const OPERATIONS = {
  messages: ['insert', 'update', 'delete'],
  campaign_recipients: ['insert', 'update', 'delete'],
  campaign_audience: ['insert', 'delete'],
} as const;

/**
 * campaign_counts: a campaign's progress as counters (`audience`, `recipients:<status>`, `messages:<status>`,
 * `messages:replied`), kept by statement-level triggers on messages, campaign_recipients and campaign_audience, so
 * GET /v2/campaigns/{id} reads a dozen rows instead of counting a 100,000-recipient campaign on every poll.
 *
 * Each statement adds its net change per counter in one ordered upsert (concurrent statements lock counter rows in the
 * same order). Rows of campaigns that no longer exist (a campaign being deleted sets its messages' campaign_id to null)
 * are left out by the join.
 */
export class CampaignCounts1763797000000 implements MigrationInterface {
  name = 'CampaignCounts1763797000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE campaign_counts (
        campaign_id  bigint NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        counter      text NOT NULL,
        n            bigint NOT NULL,
        PRIMARY KEY (campaign_id, counter)
      )`);
    // One trigger function per table and operation, with static SQL (plans are cached: a single-row UPDATE of a
    // message pays a few microseconds for its counters, not a planning of dynamic SQL)
    for (const [table, counters] of Object.entries(COUNTERS)) {
      for (const op of OPERATIONS[table as keyof typeof COUNTERS]) {
        const changes = {
          insert: `SELECT campaign_id, unnest(${counters}) AS counter, 1 AS delta FROM new_rows`,
          delete: `SELECT campaign_id, unnest(${counters}) AS counter, -1 AS delta FROM old_rows`,
          update: `SELECT campaign_id, unnest(${counters}) AS counter, 1 AS delta FROM new_rows
                   UNION ALL SELECT campaign_id, unnest(${counters}), -1 FROM old_rows`,
        }[op];
        await db.query(`
          CREATE FUNCTION ${table}_counted_${op}() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            INSERT INTO campaign_counts (campaign_id, counter, n)
            SELECT d.campaign_id, d.counter, sum(d.delta)
              FROM (${changes}) d JOIN campaigns c ON c.id = d.campaign_id
             GROUP BY d.campaign_id, d.counter HAVING sum(d.delta) <> 0
             ORDER BY d.campaign_id, d.counter
            ON CONFLICT (campaign_id, counter) DO UPDATE SET n = campaign_counts.n + EXCLUDED.n;
            RETURN NULL;
          END $fn$`);
        const transition = {
          insert: 'NEW TABLE AS new_rows',
          delete: 'OLD TABLE AS old_rows',
          update: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
        }[op];
        await db.query(
          `CREATE TRIGGER ${table}_counted_${op} AFTER ${op.toUpperCase()} ON ${table} REFERENCING ${transition} FOR EACH STATEMENT EXECUTE FUNCTION ${table}_counted_${op}()`,
        );
      }
    }
    await db.query(`
      INSERT INTO campaign_counts (campaign_id, counter, n)
      SELECT campaign_id, counter, count(*) FROM (
        SELECT campaign_id, unnest(${COUNTERS.messages}) AS counter FROM messages WHERE campaign_id IS NOT NULL
        UNION ALL SELECT campaign_id, unnest(${COUNTERS.campaign_recipients}) FROM campaign_recipients
        UNION ALL SELECT campaign_id, unnest(${COUNTERS.campaign_audience}) FROM campaign_audience
      ) x GROUP BY campaign_id, counter`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const [table, operations] of Object.entries(OPERATIONS)) {
      for (const op of operations) {
        await db.query(`DROP TRIGGER ${table}_counted_${op} ON ${table}`);
        await db.query(`DROP FUNCTION ${table}_counted_${op}()`);
      }
    }
    await db.query(`DROP TABLE campaign_counts`);
  }
}
