import type { TestApp } from './test-app';

/** A minimal valid webhook workflow: start → end. */
export function simpleDefinition(extra: Record<string, unknown> = {}) {
  return {
    trigger: { type: 'webhook' },
    startNodeId: 'done',
    nodes: [{ id: 'done', type: 'end' }],
    ...extra,
  };
}

export async function createWorkflow(t: TestApp, token: string, definition: Record<string, unknown>, name = 'Test workflow', isActive = true) {
  const res = await t.http.post('/v1/workflows', { mode: 'create', name, isActive, ...definition }, { token });
  if (res.status !== 200) throw new Error(`create workflow failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; name: string; isActive: boolean; version: number; identifier: string; webhookUrl: string };
}

/** Polls until `check` returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** GET /v1/workflow-runs/{runId} until the run has one of `statuses`. */
export async function waitForRun(t: TestApp, token: string, runId: string, statuses: string[], timeoutMs = 10_000) {
  let last: any;
  try {
    return await waitFor(async () => {
      const res = await t.http.get(`/v1/workflow-runs/${runId}`, { token });
      last = res.body;
      return res.status === 200 && statuses.includes(res.body.data.status) ? res.body.data : undefined;
    }, timeoutMs, `run ${runId} to be ${statuses.join('/')}`);
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}
