/**
 * EXPLAIN ANALYZE of the contact list queries on 100,000 contacts of one account (plus 50,000 of other accounts),
 * in a scratch database that is dropped afterwards. Run: `npm run build && node dist/test/bench/contacts-explain.js`
 * (DATABASE_URL as for the tests). The SQL is ContactsService's own (contactListSql).
 */
import 'reflect-metadata';
import { runMigrations } from '@switchboard/core/database';
import { contactListSql, type ContactSearch } from '@switchboard/contacts';
import { Client } from 'pg';
import { ensureLocalServices, withDatabase } from '../../scripts/local-services';

async function main() {
  const services = await ensureLocalServices();
  const database = `sb_explain_${process.pid}`;
  const admin = new Client({ connectionString: withDatabase(services.databaseUrl, 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = withDatabase(services.databaseUrl, database);
  const db = new Client({ connectionString: url });
  try {
    await runMigrations(url);
    await db.connect();
    await db.query(`INSERT INTO accounts (name) SELECT 'account ' || g FROM generate_series(1, 6) g`);
    const seedStart = Date.now();
    // Account 1: 100,000 contacts; accounts 2-6: 10,000 each. Names from 200 first x 500 last names.
    await db.query(`
      INSERT INTO contacts (account_id, name, contact_number, email, created_at)
      SELECT acc,
             (ARRAY['Ada','Grace','Alan','Linus','Ken','Barbara','Edsger','Donald','Margaret','Tim'])[1 + (n % 10)] || ' ' || 'Surname' || (n % 500) ||
               CASE WHEN n % 1000 = 7 THEN ' Lovelace' ELSE '' END,
             (1 + (n % 9))::text || lpad(((n::bigint * 7919) % 10000000000)::text, 10, '0'),
             'user' || n || '@' || (ARRAY['example.com','mail.test','corp.example'])[1 + (n % 3)],
             now() - (n || ' seconds')::interval
        FROM (SELECT g AS n, CASE WHEN g <= 100000 THEN 1 ELSE 2 + (g % 5) END AS acc FROM generate_series(1, 150000) g) s`);
    // What autovacuum does after a bulk insert (PostgreSQL 13+ vacuums insert-only tables): visibility map + statistics.
    await db.query('VACUUM ANALYZE contacts');
    console.log(`seeded 150,000 contacts (100,000 in account 1) in ${Date.now() - seedStart} ms`);
    const [{ number: sampleNumber }] = (
      await db.query(`SELECT contact_number AS number FROM contacts WHERE account_id = 1 OFFSET 4242 LIMIT 1`)
    ).rows;

    const account = '1';
    const page = (label: string, query: Partial<ContactSearch>): Array<[string, string, unknown[]]> => {
      const plan = contactListSql(account, { page: 1, pageSize: 20, ...query });
      return plan.kind === 'combined'
        ? [[`${label}: page + total (one query)`, plan.sql, plan.params]]
        : [
            [`${label}: page`, plan.pageSql, plan.pageParams],
            [`${label}: total`, plan.countSql, plan.countParams],
          ];
    };
    const cases: Array<[string, string, unknown[]]> = [
      ...page('list, page 1', {}),
      ...page('list, page 500', { page: 500 }),
      ...page('exact phone', { phone: sampleNumber }),
      ...page('search name, rare (lovelace: 100 rows)', { search: 'lovelace' }),
      ...page('search name (surname42 : ~200 rows)', { search: 'surname42 ' }),
      ...page('search email (user4242@: 1 row)', { search: 'user4242@' }),
      ...page('search number (7 digits)', { search: sampleNumber.slice(3, 10) }),
      ...page('search very common (ada: 10,000 rows)', { search: 'ada' }),
      ...page('search very common, page 100', { search: 'ada', page: 100 }),
      ...page('search 2 characters, no match (no trigram)', { search: 'xq' }),
      ...page('search 2 characters, 10,000 matches', { search: 'ad' }),
    ];
    for (const [label, sql, params] of cases) {
      await db.query(sql, params); // warm
      const times: number[] = [];
      let plan = '';
      for (let i = 0; i < 5; i++) {
        const rows = (await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params)).rows.map(
          (r) => r['QUERY PLAN'] as string,
        );
        times.push(Number(/Execution Time: ([\d.]+)/.exec(rows.join('\n'))![1]));
        plan = rows
          .filter((r) => /Scan|Sort|Limit|Aggregate|BitmapOr/.test(r))
          .map((r) =>
            r
              .trim()
              .replace(/\s+\(cost=[^)]*\)/, '')
              .replace(/ \(actual time=[^)]*\)/, ''),
          )
          .slice(0, 6)
          .join(' | ');
      }
      times.sort((x, y) => x - y);
      console.log(
        `${label.padEnd(64)} median ${times[2].toFixed(2).padStart(7)} ms  max ${times[4].toFixed(2).padStart(7)} ms   ${plan}`,
      );
    }
  } finally {
    await db.end().catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    await services.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
