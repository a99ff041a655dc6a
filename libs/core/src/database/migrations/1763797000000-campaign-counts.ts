import { MigrationInterface, QueryRunner } from 'typeorm';

/** Per table: the SQL expression (over one of its rows) of the counters that row adds to. */
const COUNTERS = {
  messages: `CASE WHEN replied_at IS NULL THEN ARRAY['messages:' || status] ELSE ARRAY['messages:' || status, 'messages:replied'] END`,
  campaign_recipients: `ARRAY['recipients:' || status]`,
  campaign_audience: `ARRAY['audience']`,
};

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
    // TG_ARGV[0]: the counters expression of the table (see COUNTERS); transition tables: new_rows, old_rows
    await db.query(`
      CREATE FUNCTION campaign_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        changes text;
      BEGIN
        changes := CASE TG_OP
          WHEN 'INSERT' THEN format('SELECT campaign_id, unnest(%s) AS counter, 1 AS delta FROM new_rows', TG_ARGV[0])
          WHEN 'DELETE' THEN format('SELECT campaign_id, unnest(%s) AS counter, -1 AS delta FROM old_rows', TG_ARGV[0])
          ELSE format('SELECT campaign_id, unnest(%1$s) AS counter, 1 AS delta FROM new_rows
                       UNION ALL SELECT campaign_id, unnest(%1$s), -1 FROM old_rows', TG_ARGV[0])
        END;
        EXECUTE format($q$
          INSERT INTO campaign_counts (campaign_id, counter, n)
          SELECT d.campaign_id, d.counter, sum(d.delta)
            FROM (%s) d JOIN campaigns c ON c.id = d.campaign_id
           GROUP BY d.campaign_id, d.counter HAVING sum(d.delta) <> 0
           ORDER BY d.campaign_id, d.counter
          ON CONFLICT (campaign_id, counter) DO UPDATE SET n = campaign_counts.n + EXCLUDED.n$q$, changes);
        RETURN NULL;
      END $fn$`);
    for (const [table, counters] of Object.entries(COUNTERS)) {
      const arg = `'${counters.replace(/'/g, "''")}'`;
      await db.query(`CREATE TRIGGER ${table}_counted_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_counts_apply(${arg})`);
      await db.query(`CREATE TRIGGER ${table}_counted_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_counts_apply(${arg})`);
      if (table !== 'campaign_audience') {
        await db.query(
          `CREATE TRIGGER ${table}_counted_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION campaign_counts_apply(${arg})`,
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
    for (const table of Object.keys(COUNTERS)) {
      for (const op of ['insert', 'delete', 'update']) await db.query(`DROP TRIGGER IF EXISTS ${table}_counted_${op} ON ${table}`);
    }
    await db.query(`DROP FUNCTION campaign_counts_apply()`);
    await db.query(`DROP TABLE campaign_counts`);
  }
}
