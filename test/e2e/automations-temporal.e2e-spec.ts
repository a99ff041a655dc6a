/**
 * The Temporal driver inside the real API, without a Temporal server: TEMPORAL_ADDRESS points at a closed port
 * (so the app selects the Temporal driver and /health/ready reports it down), then a fake `@temporalio/client`
 * Client is injected (TemporalClientService.useClient) to observe starts and signals. The worker-side
 * recordRunState runs against this test's real database. The live path is test/temporal/automation.live-spec.ts.
 */
import {
  AUTOMATION_DRIVER,
  TemporalActivities,
  TemporalAutomationDriver,
  TemporalClientService,
  WorkflowRunsService,
  type AutomationActivities,
} from '@switchboard/automations';
import { advance, start, type RunState, type WorkflowDefinition } from '@switchboard/engine';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { workflowIdForRun } from '../../workflows/ids';
import { createWorkflow } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

jest.setTimeout(30_000);

const waitDefinition = (timeout = '1d'): WorkflowDefinition => ({
  trigger: { type: 'webhook' },
  startNodeId: 'wait',
  nodes: [
    {
      id: 'wait',
      type: 'wait_for_reply',
      timeout,
      branches: [{ match: { type: 'keyword', keywords: ['yes'] }, next: 'done' }],
      onTimeout: 'done',
    },
    { id: 'done', type: 'end' },
  ],
});

interface StartCall {
  workflowType: string;
  options: any;
  /** The run row as a separate connection saw it when start was called (only committed data is visible). */
  rowSeen: { status: string; workflow_version: number } | null;
}

describe('Temporal driver in the API (fake Temporal client)', () => {
  let t: TestApp;
  let account: TestAccount;
  let observer: PgClient;
  const starts: StartCall[] = [];
  const signals: Array<{ workflowId: string; name: string; event: any }> = [];
  const closed = new Set<string>();
  let failStart: Error | null = null;
  let failSignal: Error | null = null;
  let healthy = true;

  const fakeClient = {
    connection: {
      ensureConnected: async () => {
        if (!healthy) throw new Error('14 UNAVAILABLE: No connection established');
      },
    },
    workflow: {
      start: async (workflowType: string, options: any) => {
        const { rows } = await observer.query(`SELECT status, workflow_version FROM workflow_runs WHERE id = $1`, [
          options.args[0].runId,
        ]);
        starts.push({ workflowType, options, rowSeen: rows[0] ?? null });
        if (failStart) throw failStart;
        return { workflowId: options.workflowId };
      },
      getHandle: (workflowId: string) => ({
        workflowId,
        signal: async (name: string, event: unknown) => {
          if (closed.has(workflowId)) throw new WorkflowNotFoundError('workflow not found', workflowId, undefined);
          if (failSignal) throw failSignal;
          signals.push({ workflowId, name, event });
        },
      }),
    },
  };

  beforeAll(async () => {
    t = await startTestApp({
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      TEMPORAL_TASK_QUEUE: 'sb-test-queue',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    account = await t.createAccount();
    observer = new PgClient({ connectionString: t.config.DATABASE_URL });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
    await t?.close();
  });

  const webhook = (identifier: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http.post(`/webhook/workflow/${identifier}`, body, { headers });
  const runRow = async (runId: string) => (await t.db.query(`SELECT * FROM workflow_runs WHERE id = $1`, [runId]))[0];

  it('selects the Temporal driver; /health/ready reports it down while Temporal is unreachable', async () => {
    expect(t.app.get(AUTOMATION_DRIVER).kind).toBe('temporal');
    const res = await t.http.get('/health/ready');
    expect(res.status).toBe(503);
    expect(res.body.error.workflowEngine).toMatchObject({ status: 'down', driver: 'temporal' });
    expect(res.body.info.postgres.status).toBe('up');
  });

  it('/health/ready reports the Temporal connection up once it answers', async () => {
    t.app.get(TemporalClientService).useClient(fakeClient as never);
    const res = await t.http.get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.body.info.workflowEngine).toEqual({ status: 'up', driver: 'temporal' });
    healthy = false;
    const down = await t.http.get('/health/ready');
    healthy = true;
    expect(down.status).toBe(503);
    expect(down.body.error.workflowEngine).toMatchObject({
      status: 'down',
      driver: 'temporal',
      message: expect.stringContaining('UNAVAILABLE'),
    });
  });

  it('webhook: the run row is committed before the start; workflow id from the run id; pinned version; task queue', async () => {
    const wf = await createWorkflow(t, account.token, { ...waitDefinition() });
    const res = await webhook(wf.identifier, { customer: { phone: '+447700900123', name: 'Ada' }, order: 7 });
    expect(res.status).toBe(200);
    const runId = res.body.runId;
    const call = starts.find((s) => s.options.args[0].runId === runId)!;
    expect(call).toBeDefined();
    expect(call.rowSeen).toEqual({ status: 'pending', workflow_version: 1 });
    expect(call.workflowType).toBe('automationWorkflow');
    expect(call.options).toMatchObject({
      workflowId: workflowIdForRun(runId),
      taskQueue: 'sb-test-queue',
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    expect(call.options.args[0]).toEqual({
      runId,
      accountId: account.accountId,
      definition: waitDefinition(),
      version: 1,
      payload: { customer: { phone: '+447700900123', name: 'Ada' }, order: 7 },
      contact: { phone: '447700900123', name: 'Ada' },
      messagingPhoneId: null,
    });
  });

  it('an idempotent webhook retry returns the same run and joins the same execution (same workflow id)', async () => {
    const wf = await createWorkflow(t, account.token, { ...waitDefinition() });
    const first = await webhook(wf.identifier, { phone: '447700900200' }, { 'Idempotency-Key': 'order-200' });
    const again = await webhook(wf.identifier, { phone: '447700900200' }, { 'Idempotency-Key': 'order-200' });
    expect(again.body.runId).toBe(first.body.runId);
    const calls = starts.filter((s) => s.options.args[0].runId === first.body.runId);
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => c.options.workflowId)).toEqual([
      workflowIdForRun(first.body.runId),
      workflowIdForRun(first.body.runId),
    ]);
    expect(calls.every((c) => c.options.workflowIdConflictPolicy === 'USE_EXISTING')).toBe(true);
    expect(
      Number((await t.db.query(`SELECT count(*) FROM workflow_runs WHERE workflow_id = $1`, [wf.id]))[0].count),
    ).toBe(1);
  });

  it('a failed start leaves the row pending; the recovery sweep starts it later with the pinned version', async () => {
    const wf = await createWorkflow(t, account.token, { ...waitDefinition('1h') });
    failStart = new Error('14 UNAVAILABLE: connect ECONNREFUSED 127.0.0.1:7233');
    const res = await webhook(wf.identifier, { phone: '447700900300' });
    failStart = null;
    expect(res.status).toBe(200); // accepted: the row is the source of truth
    const runId = res.body.runId;
    expect(await runRow(runId)).toMatchObject({ status: 'pending', state: null });
    expect(starts.filter((s) => s.options.args[0].runId === runId)).toHaveLength(1);

    // The workflow changes meanwhile: the run keeps the version it was accepted with.
    const update = await t.http.post(
      '/v1/workflows',
      { mode: 'edit', id: wf.id, ...waitDefinition('2h') },
      { token: account.token },
    );
    expect(update.status).toBe(200);

    const driver = t.app.get(TemporalAutomationDriver);
    const counts = await driver.recoverPending(0);
    expect(counts.failed).toBe(0);
    const retried = starts.filter((s) => s.options.args[0].runId === runId);
    expect(retried).toHaveLength(2);
    expect(retried[1].options.workflowId).toBe(workflowIdForRun(runId));
    expect(retried[1].options.args[0]).toMatchObject({ version: 1, definition: waitDefinition('1h') });

    // Temporal still down: the sweep stops at the first failure and leaves the rows pending.
    failStart = new Error('14 UNAVAILABLE');
    const down = await driver.recoverPending(0);
    failStart = null;
    expect(down).toEqual({ started: 0, failed: 1 });
  });

  describe('recordRunState (worker activity) on the real run row', () => {
    const recorder = () => new TemporalActivities(t.db, {} as AutomationActivities);

    async function acceptedRun(phone: string) {
      const wf = await createWorkflow(t, account.token, { ...waitDefinition() });
      const res = await webhook(wf.identifier, { phone });
      return res.body.runId as string;
    }

    it('moves forward only: a lower seq is ignored, an equal one re-applies, a finished run is never un-finished', async () => {
      const runId = await acceptedRun('447700900400');
      const started = start(waitDefinition(), {
        payload: { phone: '447700900400' },
        contact: { phone: '447700900400' },
      });
      const waiting = started.state;
      expect(waiting.waitingFor?.kind).toBe('reply');
      const done = advance(waitDefinition(), waiting, {
        type: 'reply_received',
        seq: waiting.waitingFor!.seq,
        reply: { text: 'yes', messageId: 'wamid.r1' },
      }).state;
      expect(done.status).toBe('completed');
      const earlier: RunState = { ...waiting, seq: waiting.seq - 1, currentNodeId: 'earlier' };
      const activities = recorder();

      expect(await activities.record(runId, account.accountId, waiting)).toBe(true);
      const view = await t.http.get(`/v1/workflow-runs/${runId}`, { token: account.token });
      expect(view.body.data).toMatchObject({
        status: 'waiting',
        currentNodeId: 'wait',
        waitingFor: { kind: 'reply', nodeId: 'wait' },
        finishedAt: null,
      });
      expect(view.body.data.waitingFor.until).toEqual(expect.any(String));

      expect(await activities.record(runId, account.accountId, earlier)).toBe(false); // a late, older state
      expect(await activities.record(runId, account.accountId, waiting)).toBe(true); // a retried activity: same state again
      expect(await activities.record(runId, '999999', done)).toBe(false); // another account's row: untouched

      await activities.recordRunState({ runId, accountId: account.accountId, state: done });
      const finished = (await t.http.get(`/v1/workflow-runs/${runId}`, { token: account.token })).body.data;
      expect(finished).toMatchObject({
        status: 'completed',
        waitingFor: null,
        reply: { text: 'yes', messageId: 'wamid.r1' },
      });
      expect(finished.finishedAt).toEqual(expect.any(String));
      expect(finished.history.map((h: any) => `${h.nodeId}:${h.outcome}`)).toEqual(
        done.history.map((h) => `${h.nodeId}:${h.outcome}`),
      );

      expect(await activities.record(runId, account.accountId, waiting)).toBe(false); // never un-finish
      expect(await activities.record(runId, account.accountId, { ...waiting, seq: done.seq + 5 })).toBe(false);
      expect(await activities.record(runId, account.accountId, done)).toBe(false);
      expect((await runRow(runId)).status).toBe('completed');
      expect((await t.http.get(`/v1/workflow-runs/${runId}`, { token: account.token })).body.data.finishedAt).toBe(
        finished.finishedAt,
      );
    });

    it('deliverReply signals the contact’s active Temporal runs with the messageId; closed executions are skipped', async () => {
      const runId = await acceptedRun('447700900500');
      const other = await acceptedRun('447700900500');
      const state = start(waitDefinition(), {
        payload: { phone: '447700900500' },
        contact: { phone: '447700900500' },
      }).state;
      const activities = recorder();
      await activities.record(runId, account.accountId, state);
      await activities.record(other, account.accountId, state);
      closed.add(workflowIdForRun(other));

      const runs = t.app.get(WorkflowRunsService);
      const delivered = await runs.deliverReply(account.accountId, null, '+44 7700 900500', {
        text: 'yes',
        messageId: 'wamid.in.1',
      });
      expect(delivered).toEqual([runId]);
      expect(signals).toContainEqual({
        workflowId: workflowIdForRun(runId),
        name: 'reply',
        event: { reply: { text: 'yes', messageId: 'wamid.in.1' } },
      });
      // Still pending (no step recorded yet) or another contact: not signalled.
      expect(await runs.deliverReply(account.accountId, null, '447700900400', { text: 'yes' })).toEqual([]);
    });

    it('a reply Temporal could not be told of fails the inbound job (which retries), instead of being dropped', async () => {
      const runId = await acceptedRun('447700900600');
      const state = start(waitDefinition(), {
        payload: { phone: '447700900600' },
        contact: { phone: '447700900600' },
      }).state;
      await recorder().record(runId, account.accountId, state);
      const runs = t.app.get(WorkflowRunsService);
      const reply = { text: 'yes', messageId: 'wamid.in.unavailable' };
      failSignal = new Error('14 UNAVAILABLE: No connection established');
      try {
        await expect(runs.deliverReply(account.accountId, null, '447700900600', reply)).rejects.toThrow(
          '14 UNAVAILABLE',
        );
      } finally {
        failSignal = null;
      }
      expect(signals.filter((s) => s.workflowId === workflowIdForRun(runId))).toEqual([]);
      // the retry, once Temporal answers
      expect(await runs.deliverReply(account.accountId, null, '447700900600', reply)).toEqual([runId]);
      expect(signals.filter((s) => s.workflowId === workflowIdForRun(runId))).toEqual([
        { workflowId: workflowIdForRun(runId), name: 'reply', event: { reply } },
      ]);
    });
  });
});
