import type { ChildProcess } from 'node:child_process';
import { createWorkflow, waitForRun } from '../helpers/automations';
import { mcpPost } from '../helpers/mcp';
import { eventually } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

/**
 * Backpressure of the inbound workflow webhook: while the runs it accepted wait too long to start (no worker here at
 * first), it holds a request up to a second for them to start, then answers 429 with Retry-After and creates nothing;
 * once a worker has started them, it accepts again.
 */
describe('Inbound workflow webhook backpressure (AUTOMATION_MAX_BACKLOG_MS)', () => {
  let t: TestApp;
  let account: TestAccount;
  let worker: ChildProcess | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    // API only, embedded driver: runs stay pending until the worker process below starts them
    // the API's own rate limit is not what this tests: waitForRun polls every 25 ms until the run completes
    t = await startTestApp({
      AUTOMATION_MAX_BACKLOG_MS: '1000',
      TEMPORAL_ADDRESS: '',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    account = await t.createAccount();
  }, 60_000);
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await t?.close();
  });

  const runCount = async (workflowId: number) =>
    (await t.db.query(`SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1`, [workflowId]))[0]
      .n as number;

  /** A workflow whose first accepted run has waited longer than the limit (no worker starts it). */
  const overTheLimit = async () => {
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'done',
      nodes: [{ id: 'done', type: 'end' }],
    });
    const first = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: 1 });
    expect(first.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    return { wf, first };
  };

  it('a run pending for over 10 minutes is stuck, not backlog: it does not hold or refuse anybody', async () => {
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'done',
      nodes: [{ id: 'done', type: 'end' }],
    });
    const stuck = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: 'stuck' });
    expect(stuck.status).toBe(200);
    // e.g. its Temporal execution was terminated before its first step: only the recovery sweep touches it now
    await t.db.query(`UPDATE workflow_runs SET updated_at = now() - interval '11 minutes' WHERE id = $1`, [
      stuck.body.runId,
    ]);
    await new Promise((resolve) => setTimeout(resolve, 600)); // the last reading of the backlog is out of date
    try {
      const postedAt = Date.now();
      const next = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: 'next' });
      expect(next.status).toBe(200);
      expect(Date.now() - postedAt).toBeLessThan(500); // not held
    } finally {
      await t.db.query(`UPDATE workflow_runs SET status = 'completed' WHERE workflow_id = $1`, [wf.id]);
    }
  });

  it('a request that finds the backlog over the limit is held while it drains, then accepted', async () => {
    const { wf, first } = await overTheLimit();
    // a worker would start it during the hold; here it is marked started directly
    const drained = new Promise((resolve) => setTimeout(resolve, 400)).then(() =>
      t.db.query(`UPDATE workflow_runs SET status = 'completed' WHERE id = $1`, [first.body.runId]),
    );
    const postedAt = Date.now();
    const held = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: 2 });
    const heldMs = Date.now() - postedAt;
    await drained;
    expect(held.status).toBe(200); // still over the limit at the end of the hold, it would have been a 429
    expect(heldMs).toBeGreaterThanOrEqual(350); // held until the backlog drained
    expect(await runCount(wf.id)).toBe(2);
    // no pending run left behind for the next test
    await t.db.query(`UPDATE workflow_runs SET status = 'completed' WHERE workflow_id = $1`, [wf.id]);
  }, 60_000);

  it('429 + Retry-After while the oldest accepted run has waited over the limit (after the hold); 200 again once it started', async () => {
    const { wf, first } = await overTheLimit();

    const postedAt = Date.now();
    const refused = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: 2 });
    expect(refused.status).toBe(429);
    expect(Date.now() - postedAt).toBeGreaterThanOrEqual(950); // held first, for BACKLOG_HOLD_MS
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({
      statusCode: 429,
      message: expect.stringMatching(
        /^Too many runs waiting to start \(the oldest for \d+ s\); retry after 1 seconds$/,
      ),
    });
    expect(await runCount(wf.id)).toBe(1); // nothing created
    // an agent's start_workflow (MCP) meets the same backpressure
    const viaMcp = await mcpPost(
      t.url,
      { authorization: account.token },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'start_workflow', arguments: { workflow_id: wf.id, payload: { order: 2 } } },
      },
    );
    expect(((await viaMcp.json()) as any).result).toMatchObject({
      isError: true,
      structuredContent: {
        error: expect.stringMatching(
          /^Too many runs waiting to start \(the oldest for \d+ s\); retry after 1 seconds$/,
        ),
        status: 429,
        retryAfterSeconds: 1,
      },
    });
    expect(await runCount(wf.id)).toBe(1);
    // validation still comes first: a malformed request is a 400, not a 429
    const malformed = await t.http.post(
      `/webhook/workflow/${wf.identifier}`,
      { order: 2 },
      {
        headers: { 'idempotency-key': 'é' },
      },
    );
    expect(malformed.status).toBe(400);

    worker = startWorkerProcess(t, logs, 5, { TEMPORAL_ADDRESS: '' });
    await waitForRun(t, account.token, first.body.runId, ['completed'], 60_000).catch((error) => {
      throw new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);
    });
    const accepted = await eventually(
      async () => {
        const res = await t.http.post(
          `/webhook/workflow/${wf.identifier}`,
          { order: 3 },
          {
            headers: { 'idempotency-key': 'order-3' },
          },
        );
        return res.status === 200 ? res : null;
      },
      10_000,
      'the webhook accepting again',
    );
    await waitForRun(t, account.token, accepted.body.runId, ['completed'], 30_000);
    expect(await runCount(wf.id)).toBe(2);
  }, 120_000);
});
