import { loadConfig } from '@switchboard/core';
import { contactListItem, contactListPage, contactListSql } from '@switchboard/contacts';
import Fastify from 'fastify';
import { Pool } from 'pg';

/**
 * The fair baseline of the read benchmark (issue 22): GET /v2/contacts of one account (BARE_ACCOUNT_ID) answered by
 * bare Fastify + `pg` with the API's pool size, running the API's own SQL (contactListSql, imported so the two cannot
 * drift) as plain unnamed queries, and the same response. No auth, no rate limit, no validation.
 */
const config = loadConfig(process.env);
const pool = new Pool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE });
const accountId = process.env.BARE_ACCOUNT_ID ?? '1';
const app = Fastify({ logger: false });

app.get<{ Querystring: { page?: string; pageSize?: string } }>('/v2/contacts', async (request) => {
  const page = Number(request.query.page ?? 1);
  const pageSize = Number(request.query.pageSize ?? 20);
  const plan = contactListSql(accountId, { page, pageSize });
  if (plan.kind !== 'combined') throw new Error('the bare server answers the unfiltered list only');
  const { contacts, total } = contactListPage((await pool.query(plan.sql, plan.params)).rows);
  return { success: true, data: { contacts: contacts.map(contactListItem), page, pageSize, total } };
});
app.get('/health', async () => ({ ok: true }));

app.listen({ port: Number(process.env.PORT ?? 3997), host: '127.0.0.1' }).catch((error) => {
  console.error(error);
  process.exit(1);
});
// a clean exit on the bench's SIGTERM, so that `--cpu-prof` (BENCH_NODE_ARGS) writes this process's profile too
process.once('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))));
