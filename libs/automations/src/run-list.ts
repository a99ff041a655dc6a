import { isoOrNull } from '@switchboard/core';
import type { QueryPlan } from '@switchboard/core/database';
import type { WorkflowRunStatus } from './entities';

/** One run of GET /v1/workflows/{id}/runs, as the API answers it. */
export interface RunListItem {
  runId: string;
  status: WorkflowRunStatus;
  workflowVersion: number;
  currentNodeId: string | null;
  contactPhone: string | null;
  error: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  finishedAt: string | null;
}

/**
 * The SQL of GET /v1/workflows/{id}/runs (exported for test/bench/bare-server.ts, which runs it against the API):
 * the workflow (no row when it is not the account's), the number of its runs and the page, newest first, in one round
 * trip; a single row with a null `run_id` when the page is empty. Runs are those of the account's workflow row (a run
 * always has its workflow's account), so without a status filter the count is an index-only scan of
 * workflow_runs_workflow_idx. Only the columns the answer needs: a run's `state` (history, context) is read for its
 * error message alone. `workflowId` must be a valid id (parseId). With `total: false` the count is left out (the
 * caller remembers a long list's total: RememberedRunTotals).
 */
export function runListSql(
  accountId: string,
  workflowId: string,
  query: { page: number; pageSize: number; status?: WorkflowRunStatus },
  options: { total: boolean } = { total: true },
): QueryPlan {
  const params: unknown[] = [workflowId, accountId, query.pageSize, (query.page - 1) * query.pageSize];
  let filter = '';
  if (query.status) {
    params.push(query.status);
    filter = `AND r.status = $${params.length}`;
  }
  const runs = `workflow_runs r WHERE r.workflow_id = w.id ${filter}`;
  const counted = options.total ? `CROSS JOIN LATERAL (SELECT count(*)::int AS total FROM ${runs}) counted` : '';
  return {
    sql: `SELECT ${options.total ? 'counted.total, ' : ''}page.*
            FROM workflows w
           ${counted}
            LEFT JOIN LATERAL (SELECT r.id AS run_id, r.status, r.workflow_version, r.current_node_id, r.contact_phone,
                                      r.state -> 'error' ->> 'message' AS error, r.created_at, r.updated_at, r.finished_at
                                 FROM ${runs} ORDER BY r.created_at DESC, r.id DESC LIMIT $3 OFFSET $4) page ON true
           WHERE w.id = $1 AND w.account_id = $2 AND w.archived_at IS NULL
           ORDER BY page.created_at DESC, page.run_id DESC`,
    params,
    ...(query.status ? {} : { name: options.total ? 'workflow_runs_list_newest' : 'workflow_runs_page_newest' }),
  };
}

/**
 * The answer from runListSql's rows (without `success`), or null when the workflow is not the account's; `total`
 * when the rows were read without it.
 */
export function runListPage(
  rows: Array<Record<string, unknown>>,
  query: { page: number; pageSize: number },
  total = rows.length ? Number(rows[0].total) : 0,
): { data: RunListItem[]; pagination: { page: number; pageSize: number; total: number; totalPages: number } } | null {
  if (!rows.length) return null;
  return {
    data: rows
      .filter((r) => r.run_id !== null)
      .map((r) => ({
        runId: r.run_id as string,
        status: r.status as WorkflowRunStatus,
        workflowVersion: r.workflow_version as number,
        currentNodeId: r.current_node_id as string | null,
        contactPhone: r.contact_phone as string | null,
        error: (r.error as string | null) ?? null,
        createdAt: isoOrNull(r.created_at),
        updatedAt: isoOrNull(r.updated_at),
        finishedAt: isoOrNull(r.finished_at),
      })),
    pagination: { page: query.page, pageSize: query.pageSize, total, totalPages: Math.ceil(total / query.pageSize) },
  };
}
