/**
 * The Temporal live suite: the automation workflow on a real Temporal server, with stub activities that record
 * their calls. Part of `npm test` (project `temporal`): the jest global setup starts a Temporal dev server
 * (scripts/temporal-server.ts) and exports its address; TEMPORAL_ADDRESS points the suite at another server instead.
 * Without any server (no `temporal` binary and no `go` to build it) it says why and skips.
 *
 * Each workflow's history is exported from the server after it closes and replayed at once with the current
 * workflow code; with RECORD_TEMPORAL_HISTORIES=1 it is also written to test/fixtures/temporal-histories/, whose
 * files workflows/recorded-histories.spec.ts replays on every run (a workflow change that breaks running
 * workflows fails there, without a server).
 *
 * Env: TEMPORAL_ADDRESS (host:port), TEMPORAL_NAMESPACE (default `default`).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { RunState } from '@switchboard/engine';
import type {
  AutomationActivities,
  PerformEffectInput,
  PerformEffectResult,
  RecordRunStateInput,
} from '../../workflows/activities';
import type { AutomationWorkflowInput } from '../../workflows/automation.workflow';
import { automationWorkflowOptions } from '../../workflows/bundle';
import { queryRunState, signalReply, startAutomationRun, type AutomationWorkflowHandle } from '../../workflows/client';
import { workflowIdForRun } from '../../workflows/ids';
import { customerPayload, delayDefinition, replyDefinition } from '../fixtures/automation-scenarios';
import { bundleAutomationWorkflowsForReplay, replayHistory } from '../helpers/temporal-replay';

const address = process.env.TEMPORAL_ADDRESS?.trim() || process.env.SWITCHBOARD_TEST_TEMPORAL_ADDRESS;
const namespace = process.env.TEMPORAL_NAMESPACE?.trim() || 'default';
export const RECORDED_HISTORIES_DIR = join(__dirname, '..', 'fixtures', 'temporal-histories');

if (!address) {
  process.stdout.write(
    `\nTemporal live suite skipped: ${process.env.SWITCHBOARD_TEST_TEMPORAL_UNAVAILABLE ?? 'no Temporal server (TEMPORAL_ADDRESS is not set)'}\n\n`,
  );
}
const describeLive = address ? describe : describe.skip;

describeLive(`Temporal live suite (${address ?? 'no server'}, namespace ${namespace})`, () => {
  const taskQueue = `switchboard-live-${process.pid}-${Date.now()}`;
  const performed: PerformEffectInput[] = [];
  const recorded: RecordRunStateInput[] = [];
  const outcomesByKey = new Map<string, PerformEffectResult>();
  /** Runs whose sends take 1.5 s (a reply can arrive while the message is being sent). */
  const slowRuns = new Set<string>();

  /** Stub activities, idempotent by idempotencyKey like the real ones must be. */
  const activities: AutomationActivities = {
    async performEffect(input) {
      const seen = outcomesByKey.get(input.idempotencyKey);
      if (seen) return seen;
      if (slowRuns.has(input.runId)) await new Promise((r) => setTimeout(r, 1500));
      performed.push(input);
      const outcome: PerformEffectResult = {
        ok: true,
        result: { messageId: `wamid.live.${input.runId}.${input.seq}` },
      };
      outcomesByKey.set(input.idempotencyKey, outcome);
      return outcome;
    },
    async recordRunState(input) {
      recorded.push(input);
    },
  };

  let nativeConnection: NativeConnection | undefined;
  let connection: Connection | undefined;
  let client: Client;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;

  beforeAll(async () => {
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // already installed
    }
    nativeConnection = await NativeConnection.connect({ address });
    worker = await Worker.create({
      connection: nativeConnection,
      namespace,
      taskQueue,
      activities,
      ...automationWorkflowOptions(),
    });
    running = worker.run();
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace });
  }, 120_000);

  afterAll(async () => {
    if (worker && worker.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close();
    await nativeConnection?.close();
  }, 60_000);

  const inputFor = (definition: AutomationWorkflowInput['definition']): AutomationWorkflowInput => ({
    runId: randomUUID(),
    accountId: '42',
    definition,
    version: 1,
    payload: customerPayload,
    contact: { phone: customerPayload.customer.phone, name: customerPayload.customer.name },
  });
  const sentBy = (runId: string) =>
    performed
      .filter((p) => p.runId === runId)
      .map((p) => (p.effect.type === 'send_template' ? p.effect.templateName : p.effect.type));
  const outcomes = (state: RunState) => state.history.map((h) => `${h.nodeId}:${h.outcome}`);

  let replayBundle: WorkflowBundle | undefined;
  /** Exports the closed execution's history, replays it with the current code, and records it when asked to. */
  async function exportAndReplay(name: string, handle: AutomationWorkflowHandle, result: RunState) {
    const history = JSON.parse(historyToJSON(await handle.fetchHistory()));
    replayBundle ??= await bundleAutomationWorkflowsForReplay();
    const commands = await replayHistory(replayBundle, history, handle.workflowId);
    expect(commands.at(-1)).toEqual({ kind: 'result', result: JSON.parse(JSON.stringify(result)) });
    if (process.env.RECORD_TEMPORAL_HISTORIES === '1') {
      mkdirSync(RECORDED_HISTORIES_DIR, { recursive: true });
      writeFileSync(join(RECORDED_HISTORIES_DIR, `${name}.json`), `${JSON.stringify(history, null, 1)}\n`);
    }
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('reply path: send → wait_for_reply → signal "yes" → condition → send → end', async () => {
    const input = inputFor(replyDefinition('60s'));
    const { handle } = await startAutomationRun(client, input, { taskQueue });
    expect(handle.workflowId).toBe(workflowIdForRun(input.runId));
    const waiting = await until('the run to wait for a reply', async () => {
      const state = await queryRunState(client, input.runId);
      return state.waitingFor?.kind === 'reply' ? state : undefined;
    });
    expect(waiting.waitingFor).toMatchObject({ nodeId: 'wait', timeoutMs: 60_000 });

    expect(
      await signalReply(client, input.runId, { reply: { text: 'Yes', messageId: `wamid.in.${input.runId}` } }),
    ).toBe(true);
    const state = await handle.result();
    expect(state.status).toBe('completed');
    expect(outcomes(state)).toEqual([
      'ask:completed',
      'wait:branch:1',
      'check:rule:0',
      'vip_thanks:completed',
      'done:end',
    ]);
    await exportAndReplay('reply-path', handle, state);
    expect(sentBy(input.runId)).toEqual(['order_confirm', 'vip_thanks']);
    const idempotencyKeys = performed.filter((p) => p.runId === input.runId).map((p) => p.idempotencyKey);
    expect(idempotencyKeys).toEqual([`run:${input.runId}:step:1`, `run:${input.runId}:step:4`]);
    const states = recorded.filter((r) => r.runId === input.runId).map((r) => r.state.status);
    expect(states.at(-1)).toBe('completed');

    // The execution is closed: a late reply is nobody's, and a retried start does not run it again.
    expect(await signalReply(client, input.runId, { reply: { text: 'yes again' } })).toBe(false);
    const again = await startAutomationRun(client, input, { taskQueue });
    expect(again.alreadyClosed).toBe(true);
    expect(sentBy(input.runId)).toHaveLength(2);
  }, 60_000);

  it('a reply that arrives while the message before the wait is being sent is kept and taken by the wait', async () => {
    const input = inputFor(replyDefinition('60s'));
    slowRuns.add(input.runId);
    const { handle } = await startAutomationRun(client, input, { taskQueue });
    await until('the send to be in progress', async () =>
      (await queryRunState(client, input.runId)).waitingFor?.kind === 'effect' ? true : undefined,
    );
    expect(
      await signalReply(client, input.runId, { reply: { text: 'yes', messageId: `wamid.early.${input.runId}` } }),
    ).toBe(true);
    const state = await handle.result();
    expect(outcomes(state)).toEqual([
      'ask:completed',
      'wait:branch:1',
      'check:rule:0',
      'vip_thanks:completed',
      'done:end',
    ]);
    expect(state.consumedReplyIds).toContain(`wamid.early.${input.runId}`);
    await exportAndReplay('reply-during-send', handle, state);
  }, 60_000);

  it('timeout path: no reply → the timeout branch after the wait', async () => {
    const input = inputFor(replyDefinition(2));
    const startedAt = Date.now();
    const { handle } = await startAutomationRun(client, input, { taskQueue });
    const state = await handle.result();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2000);
    expect(outcomes(state)).toEqual(['ask:completed', 'wait:timeout', 'reminder:completed', 'done:end']);
    await exportAndReplay('timeout-path', handle, state);
    expect(sentBy(input.runId)).toEqual(['order_confirm', 'order_reminder']);
  }, 60_000);

  it('delay path: delay 1s → send → end; a retried start while running joins the same execution', async () => {
    const input = inputFor(delayDefinition(1));
    const startedAt = Date.now();
    const first = await startAutomationRun(client, input, { taskQueue });
    const second = await startAutomationRun(client, input, { taskQueue });
    expect(second.alreadyClosed).toBe(false);
    const [a, b] = await Promise.all([first.handle.describe(), second.handle.describe()]);
    expect(b.runId).toBe(a.runId);
    const state = await first.handle.result();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(outcomes(state)).toEqual(['pause:timer_fired', 'follow_up:completed', 'done:end']);
    await exportAndReplay('delay-path', first.handle, state);
    expect(sentBy(input.runId)).toEqual(['follow_up']);
  }, 60_000);
});

/**
 * The same server, driven through the real application: API + worker booted with TEMPORAL_ADDRESS (so both select
 * the Temporal driver), a webhook accepted by the API, the workflow run by the app's Temporal worker with the real
 * activities (an SSRF-guarded http_request to a local receiver), progress recorded into workflow_runs, and a reply
 * delivered through WorkflowRunsService.deliverReply (the `reply` signal).
 */
describeLive('Temporal driver through the app (webhook → run → reply)', () => {
  // Loaded only when the suite runs (a skipped describe still executes its body): the app is heavy to import.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const load = () => ({
    ...(require('../helpers/test-app') as typeof import('../helpers/test-app')),
    ...(require('../helpers/automations') as typeof import('../helpers/automations')),
    ...(require('@switchboard/automations') as typeof import('@switchboard/automations')),
  });
  /* eslint-enable @typescript-eslint/no-require-imports */
  let m: ReturnType<typeof load>;
  const http = require('node:http') as typeof import('node:http');

  let t: Awaited<ReturnType<ReturnType<typeof load>['startTestApp']>>;
  let receiver: import('node:http').Server;
  let receiverUrl: string;
  const received: Array<{ url?: string; key?: string | string[] }> = [];

  beforeAll(async () => {
    m = load();
    receiver = http.createServer((req, res) => {
      received.push({ url: req.url, key: req.headers['idempotency-key'] });
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      // /big: an answer near the 1 MiB cap (AUTOMATION_HTTP_MAX_RESPONSE_BYTES)
      const items = req.url === '/big' ? Array.from({ length: 32_000 }, (_, i) => ({ id: i, sku: `SKU-${i}` })) : [];
      res.end(JSON.stringify({ tier: 'gold', items }));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    t = await m.startTestApp(
      {
        TEMPORAL_ADDRESS: address!,
        TEMPORAL_NAMESPACE: namespace,
        TEMPORAL_TASK_QUEUE: `switchboard-live-app-${process.pid}-${Date.now()}`,
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
      },
      { worker: true },
    );
    const worker = t.worker!.get(m.TemporalAutomationWorker);
    await until('the app worker to run', async () => (worker.isRunning ? true : undefined), 60_000);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  }, 60_000);

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('webhook → http_request → wait_for_reply → reply → end, visible in GET /v1/workflow-runs/{id}', async () => {
    expect(t.app.get(m.AUTOMATION_DRIVER).kind).toBe('temporal');
    expect(t.worker!.get(m.AUTOMATION_DRIVER).kind).toBe('temporal');
    const ready = await t.http.get('/health/ready');
    expect(ready.body.info.workflowEngine).toEqual({ status: 'up', driver: 'temporal', workers: 1 });

    const account = await t.createAccount();
    const wf = await m.createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'lookup',
      nodes: [
        {
          id: 'lookup',
          type: 'http_request',
          method: 'POST',
          url: `${receiverUrl}/tier`,
          body: { phone: '{{contact.phone}}' },
          saveAs: 'crm',
          next: 'wait',
        },
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout: 60,
          branches: [{ match: { type: 'keyword', keywords: ['yes'] }, next: 'done' }],
          onTimeout: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const res = await t.http.post(
      `/webhook/workflow/${wf.identifier}`,
      { customer: { phone: '+447700900901', name: 'Ada' } },
      { headers: { 'Idempotency-Key': 'live-1' } },
    );
    expect(res.status).toBe(200);
    const runId = res.body.runId;
    const retry = await t.http.post(
      `/webhook/workflow/${wf.identifier}`,
      { customer: { phone: '+447700900901', name: 'Ada' } },
      { headers: { 'Idempotency-Key': 'live-1' } },
    );
    expect(retry.body.runId).toBe(runId);

    const waiting = await m.waitForRun(t, account.token, runId, ['waiting'], 30_000);
    expect(waiting).toMatchObject({
      currentNodeId: 'wait',
      waitingFor: { kind: 'reply', nodeId: 'wait' },
      vars: { crm: { status: 200, body: { tier: 'gold' } } },
    });
    expect(received.filter((r) => r.url === '/tier').map((r) => r.key)).toEqual([`run:${runId}:step:1`]);

    const delivered = await t
      .worker!.get(m.WorkflowRunsService)
      .deliverReply(account.accountId, null, '447700900901', { text: 'Yes', messageId: `wamid.live.${runId}` });
    expect(delivered).toEqual([runId]);
    const done = await m.waitForRun(t, account.token, runId, ['completed', 'failed'], 30_000);
    expect(done.status).toBe('completed');
    expect(done.history.map((h: { nodeId: string; outcome: string }) => `${h.nodeId}:${h.outcome}`)).toEqual([
      'lookup:completed',
      'wait:branch:0',
      'done:end',
    ]);
    expect(done.finishedAt).toEqual(expect.any(String));
  }, 90_000);

  /** A new account's run of a workflow that waits an hour for any reply, once it waits. */
  async function waitingForAnHour(phone: string) {
    const account = await t.createAccount();
    const wf = await m.createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'wait',
      nodes: [
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout: 3600,
          branches: [{ match: { type: 'any' }, next: 'done' }],
          onTimeout: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const runId: string = (await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone })).body.runId;
    await m.waitForRun(t, account.token, runId, ['waiting'], 30_000);
    return { account, wf, runId };
  }

  it('an HTTP answer near 1 MiB saved in vars goes through (Temporal takes payloads up to 2 MB)', async () => {
    const account = await t.createAccount();
    const wf = await m.createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'lookup',
      nodes: [
        { id: 'lookup', type: 'http_request', method: 'GET', url: `${receiverUrl}/big`, saveAs: 'crm', next: 'check' },
        {
          id: 'check',
          type: 'condition',
          rules: [{ left: '{{vars.crm.body.tier}}', operator: 'equals', right: 'gold', next: 'done' }],
          else: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const res = await t.http.post(`/webhook/workflow/${wf.identifier}`, {});
    const done = await m.waitForRun(t, account.token, res.body.runId, ['completed', 'failed'], 30_000);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.vars.crm.body).length).toBeGreaterThan(900_000);
    expect(done.vars.crm.body.items).toHaveLength(32_000);
    expect(done.history[0].detail.output.body).toMatchObject({ truncated: true });
  }, 60_000);

  it('a run whose execution is reset goes on: the recovery sweep does not fail it for the execution the reset closed', async () => {
    const { account, runId } = await waitingForAnHour('+447700900903');
    const client = await t.app.get(m.TemporalClientService).getClient();
    const handle = client.workflow.getHandle(workflowIdForRun(runId));
    const before = await handle.describe();
    const history = await handle.fetchHistory();
    const taskDone = history.events!.find((e) => e.workflowTaskCompletedEventAttributes)!;
    await client.workflowService.resetWorkflowExecution({
      namespace,
      workflowExecution: { workflowId: handle.workflowId, runId: before.runId },
      reason: 'operator reset',
      workflowTaskFinishEventId: taskDone.eventId,
      requestId: randomUUID(),
    });
    // the reset's closed execution is in the visibility store as terminated: the sweep sees it and leaves the run
    await until('the reset execution listed as terminated', async () => {
      for await (const e of client.workflow.list({
        query: `WorkflowId = '${handle.workflowId}' AND ExecutionStatus = 'Terminated'`,
      }))
        if (e.runId === before.runId) return true;
      return undefined;
    });
    expect(await t.worker!.get(m.TemporalAutomationDriver).reconcileClosed()).toBe(0);
    const delivered = await t
      .worker!.get(m.WorkflowRunsService)
      .deliverReply(account.accountId, null, '447700900903', { text: 'hi', messageId: `wamid.reset.${runId}` });
    expect(delivered).toEqual([runId]);
    expect((await m.waitForRun(t, account.token, runId, ['completed', 'failed'], 30_000)).status).toBe('completed');
  }, 90_000);

  it('a run whose execution an operator terminates is recorded failed by the recovery sweep, and leaves the waiting runs', async () => {
    const { account, wf, runId } = await waitingForAnHour('+447700900902');
    const client = await t.app.get(m.TemporalClientService).getClient();
    await client.workflow.getHandle(workflowIdForRun(runId)).terminate('stopped by an operator');

    const driver = t.worker!.get(m.TemporalAutomationDriver);
    // visibility is eventually consistent: the sweep finds the closed execution within a few seconds (the worker's
    // own sweep may find it first)
    await until('the terminated run recorded', async () => {
      await driver.reconcileClosed();
      const run = await t.http.get(`/v1/workflow-runs/${runId}`, { token: account.token });
      return run.body.data.status === 'failed' ? true : undefined;
    });
    const failed = await m.waitForRun(t, account.token, runId, ['failed'], 5_000);
    expect(failed).toMatchObject({
      status: 'failed',
      currentNodeId: 'wait',
      waitingFor: null,
      error: {
        code: 'execution_closed',
        message: 'its Temporal execution was terminated outside the workflow',
        nodeId: 'wait',
      },
    });
    expect(failed.finishedAt).toEqual(expect.any(String));
    const waiting = await t.http.get(`/v1/workflows/${wf.id}/runs?status=waiting`, { token: account.token });
    expect(waiting.body.data).toEqual([]);
    expect(await driver.reconcileClosed()).toBe(0); // recorded once
  }, 90_000);
});
