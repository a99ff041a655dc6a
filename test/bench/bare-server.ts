import { runListPage, runListSql } from '@switchboard/automations';
import { campaignReportRow, campaignReportSql, campaignView } from '@switchboard/campaigns';
import { contactListItem, contactListPage, contactListSql } from '@switchboard/contacts';
import { loadConfig } from '@switchboard/core';
import { templateListItem, templateListPage, templateListSql } from '@switchboard/templates';
import Fastify from 'fastify';
import { Pool } from 'pg';

/**
 * The fair baseline of the read benchmark (issue 22): four reads of one account (BARE_ACCOUNT_ID) answered by bare
 * Fastify + `pg` with the API's pool size, running the API's own SQL (imported from the libraries, so the two cannot
 * drift) as plain unnamed queries, and shaping the same response with the API's own functions. No auth, no rate
 * limit, no validation: the query string is taken as it comes.
 */
const config = loadConfig(process.env);
const pool = new Pool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE });
const accountId = process.env.BARE_ACCOUNT_ID ?? '1';
const app = Fastify({ logger: false });
const rows = async (plan: { sql: string; params: unknown[] }) => (await pool.query(plan.sql, plan.params)).rows;

type PageQuery = { Querystring: { page?: string; pageSize?: string } };

app.get<PageQuery>('/v2/contacts', async (request) => {
  const page = Number(request.query.page ?? 1);
  const pageSize = Number(request.query.pageSize ?? 20);
  const plan = contactListSql(accountId, { page, pageSize });
  if (plan.kind !== 'combined') throw new Error('the bare server answers the unfiltered list only');
  const { contacts, total } = contactListPage(await rows(plan));
  return { success: true, data: { contacts: contacts.map(contactListItem), page, pageSize, total } };
});

app.get<PageQuery>('/v2/templates', async (request) => {
  const page = Number(request.query.page ?? 1);
  const pageSize = Number(request.query.pageSize ?? 50);
  const { templates, total } = templateListPage(await rows(templateListSql(accountId, { page, pageSize })));
  return { success: true, data: { templates: templates.map(templateListItem), page, pageSize, total } };
});

const messagingIds = new Map<string, string>();
app.get<{ Params: { id: string } }>('/v2/campaigns/:id', async (request, reply) => {
  const found = campaignReportRow(await rows(campaignReportSql(accountId, request.params.id)));
  if (!found) return reply.code(404).send({ message: 'Campaign not found' });
  // as the API (AccountsService.messagingPhoneIds): a number's messaging_phone_id is read once, then remembered
  const phoneId = String(found.campaign.phone_number_id);
  if (!messagingIds.has(phoneId)) {
    const { rows } = await pool.query(`SELECT messaging_phone_id FROM phone_numbers WHERE id = $1`, [phoneId]);
    messagingIds.set(phoneId, rows[0]?.messaging_phone_id ?? '');
  }
  const campaign = { ...found.campaign, messaging_phone_id: messagingIds.get(phoneId)! };
  return { success: true, data: campaignView(campaign, found.progress) };
});

app.get<PageQuery & { Params: { id: string } }>('/v1/workflows/:id/runs', async (request, reply) => {
  const query = { page: Number(request.query.page ?? 1), pageSize: Number(request.query.pageSize ?? 20) };
  const answer = runListPage(await rows(runListSql(accountId, request.params.id, query)), query);
  if (!answer) return reply.code(404).send({ message: 'Workflow not found' });
  return { success: true, ...answer };
});

app.get('/health', async () => ({ ok: true }));

app.listen({ port: Number(process.env.PORT ?? 3997), host: '127.0.0.1' }).catch((error) => {
  console.error(error);
  process.exit(1);
});
// a clean exit on the bench's SIGTERM, so that `--cpu-prof` (BENCH_NODE_ARGS) writes this process's profile too
process.once('SIGTERM', () => void app.close().then(() => pool.end().then(() => process.exit(0))));
