import type { QueryPlan } from '@switchboard/core/database';
import type { Template } from './template.entity';
import { DEFAULT_PAGE_SIZE, type ListTemplatesQuery } from './templates.dto';

/** What a GET /v2/templates item is made of (templateListItem); MCP's list also wants the preview text. */
export type TemplateListRow = Pick<
  Template,
  'name' | 'category' | 'language' | 'status' | 'variables' | 'rejectedReason' | 'updatedAt'
> & { preview?: string };

const LIST_COLUMNS = `name, category, language, status, variables, rejected_reason AS "rejectedReason", updated_at AS "updatedAt"`;

/**
 * A template's preview, as `templatePreview` (libs/mcp) makes it from the components: the texts of its HEADER, BODY and
 * FOOTER, in order, one per line. Made in SQL for a list, so that a page of 50 templates does not send and parse 50
 * component documents for one line each.
 */
const PREVIEW_COLUMN = `COALESCE((SELECT string_agg(c ->> 'text', E'\\n' ORDER BY n)
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(platform_components) = 'array' THEN platform_components ELSE '[]' END)
         WITH ORDINALITY AS e(c, n)
   WHERE upper(c ->> 'type') IN ('HEADER', 'BODY', 'FOOTER') AND jsonb_typeof(c -> 'text') = 'string'), '') AS preview`;

/**
 * The SQL of GET /v2/templates (exported for test/bench/bare-server.ts, which runs it against the API): the page,
 * newest first, and the total in one round trip; one row per template, each with the total (a single row of nulls
 * and the total when the page is empty). `status` is exact, `search` a case-sensitive substring of the name, lowered
 * (names are lower case). `name` is set when the text never varies, so it can be a named prepared statement.
 */
export function templateListSql(
  accountId: string,
  query: ListTemplatesQuery,
  options: { preview?: boolean; phoneRowIds?: string[] } = {},
): QueryPlan {
  const where = ['account_id = $1'];
  const params: unknown[] = [accountId];
  if (options.phoneRowIds) {
    params.push(options.phoneRowIds);
    where.push(`phone_number_id = ANY($${params.length}::bigint[])`);
  }
  if (query.status) {
    params.push(query.status);
    where.push(`status = $${params.length}`);
  }
  if (query.search) {
    params.push(query.search.toLowerCase());
    where.push(`strpos(name, $${params.length}) > 0`);
  }
  const filter = where.join(' AND ');
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  params.push(pageSize, ((query.page ?? 1) - 1) * pageSize);
  const columns = options.preview ? `${LIST_COLUMNS}, ${PREVIEW_COLUMN}` : LIST_COLUMNS;
  return {
    sql: `SELECT page.*, counted.total
            FROM (SELECT count(*)::int AS total FROM templates WHERE ${filter}) counted
            LEFT JOIN LATERAL (SELECT id, created_at, ${columns} FROM templates WHERE ${filter}
                                ORDER BY created_at DESC, id DESC LIMIT $${params.length - 1} OFFSET $${params.length}) page ON true
           ORDER BY page.created_at DESC, page.id DESC`,
    params,
    ...(query.status || query.search || options.phoneRowIds
      ? {}
      : { name: options.preview ? 'templates_list_newest_preview' : 'templates_list_newest' }),
  };
}

/** The page and total of templateListSql's rows. */
export function templateListPage(rows: Array<Record<string, unknown>>): {
  templates: TemplateListRow[];
  total: number;
} {
  const total = Number(rows[0]?.total ?? 0);
  return {
    templates: rows
      .filter((r) => r.id !== null)
      // eslint-disable-next-line @typescript-eslint/no-unused-vars
      .map(({ id, created_at, total: _, ...r }) => r as unknown as TemplateListRow),
    total,
  };
}
