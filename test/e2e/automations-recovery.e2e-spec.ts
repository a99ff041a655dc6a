import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AutomationQueue, EmbeddedDriver, type DriveItem } from '@switchboard/automations';
import { REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { createWorkflow, waitFor } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

jest.setTimeout(30_000);

/** Runs survive worker restarts and lost queue jobs (the state is in Postgres; the sweep re-creates jobs). */
describe('Embedded driver recovery', () => {
  let t: TestApp;
  let account: TestAccount;
  let queue: AutomationQueue;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    account = await t.createAccount();
    queue = t.app.get(AutomationQueue);
  });
  let restarted: INestApplicationContext | undefined;
  afterAll(async () => {
    await restarted?.close(); // t.close() closes the worker it started (already closed here: closing twice is harmless)
    await t.close();
  });

  async function restartWorker(between: () => Promise<void> = async () => {}) {
    await (restarted ?? t.worker!).close();
    await between();
    restarted = await NestFactory.createApplicationContext(WorkerModule.forRoot(t.config), {
      logger: ['error', 'warn'],
    });
    return restarted;
  }

  const delayWorkflow = (duration: number) =>
    createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'pause',
      nodes: [
        { id: 'pause', type: 'delay', duration, next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });

  const statuses = async (workflowId: number) =>
    (
      await t.db.query(`SELECT status, count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1 GROUP BY status`, [
        workflowId,
      ])
    ).reduce(
      (acc: Record<string, number>, row: { status: string; n: number }) => ({ ...acc, [row.status]: row.n }),
      {},
    );

  const startRuns = async (identifier: string, n: number) => {
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) => t.http.post(`/webhook/workflow/${identifier}`, { i })),
    );
    return answers.map((a) => a.body.runId as string);
  };

  it('runs waiting on a delay complete after the worker is closed and a new one started', async () => {
    const wf = await delayWorkflow(4); // long enough for all 10 to be seen waiting on a slow machine
    await startRuns(wf.identifier, 10);
    await waitFor(async () => (await statuses(wf.id)).waiting === 10, 10_000, '10 waiting runs');
    await restartWorker(() => new Promise((resolve) => setTimeout(resolve, 300)));
    await waitFor(async () => (await statuses(wf.id)).completed === 10, 10_000, '10 completed runs');
  });

  it('timers whose jobs were lost fire at worker start when wake_at has passed, and pending runs start', async () => {
    const wf = await delayWorkflow(3); // long enough for all 5 to be seen waiting on a slow machine
    await startRuns(wf.identifier, 5);
    await waitFor(async () => (await statuses(wf.id)).waiting === 5, 10_000, '5 waiting runs');
    let pendingRun = '';
    await restartWorker(async () => {
      // With no worker: a new run is accepted (pending), then Redis loses every job (flush, failover).
      [pendingRun] = await startRuns(wf.identifier, 1);
      await queue.queue.obliterate({ force: true });
      expect(await queue.queue.getJobCounts('delayed', 'wait')).toEqual({ delayed: 0, wait: 0 });
      await new Promise((resolve) => setTimeout(resolve, 3200)); // past wake_at
    });
    await waitFor(async () => (await statuses(wf.id)).completed === 6, 10_000, '6 completed runs');
    const [row] = await t.db.query('SELECT status, state FROM workflow_runs WHERE id = $1', [pendingRun]);
    expect(row.status).toBe('completed');
    expect(row.state.history.map((h: any) => h.outcome)).toEqual(['timer_fired', 'end']);
  });

  it('the sweep is idempotent: deterministic job ids make repeated enqueues no-ops', async () => {
    const wf = await delayWorkflow(3600);
    await startRuns(wf.identifier, 4);
    await waitFor(async () => (await statuses(wf.id)).waiting === 4, 10_000, '4 waiting runs');
    const driver = (restarted ?? t.worker!).get(EmbeddedDriver);
    const before = await queue.queue.getJobCounts('delayed');
    await driver.recover();
    await driver.recover();
    expect(await queue.queue.getJobCounts('delayed')).toEqual(before);
    const ids = (await queue.queue.getDelayed()).map((j) => j.id);
    const [run] = await t.db.query(`SELECT id FROM workflow_runs WHERE workflow_id = $1 LIMIT 1`, [wf.id]);
    expect(ids).toContain(`${run.id}:1:timer`);
  });

  it('the periodic sweep leaves future timers alone and fires overdue ones whose job is lost', async () => {
    const wf = await delayWorkflow(3600);
    const [runId] = await startRuns(wf.identifier, 1);
    await waitFor(async () => (await statuses(wf.id)).waiting === 1, 10_000, 'a waiting run');
    const driver = (restarted ?? t.worker!).get(EmbeddedDriver);
    await queue.queue.obliterate({ force: true });
    expect(await driver.recover({ full: false })).toEqual({ started: 0, resumed: 0, timers: 0 });
    await t.db.query(`UPDATE workflow_runs SET wake_at = now() - interval '10 seconds' WHERE id = $1`, [runId]);
    expect(await driver.recover({ full: false })).toEqual({ started: 0, resumed: 0, timers: 1 });
    await waitFor(async () => (await statuses(wf.id)).completed === 1, 10_000, 'the overdue run to complete');
  });

  it('a worker closed a second time (t.close() does so after a restart) leaves its ended Redis connection alone', async () => {
    await restartWorker(); // the worker t started is closed by now (by this or an earlier restart)
    const redis = t.worker!.get<Redis>(REDIS);
    expect(redis.status).toBe('end');
    // disconnecting an ended connection again armed ioredis' 2-s timer on its closed socket: the process lived on
    const disconnect = jest.spyOn(redis, 'disconnect');
    await t.worker!.close();
    expect(disconnect).not.toHaveBeenCalled();
  });

  /** webhook → delay → http_request (unreachable: its failure takes onError) → end */
  const delayThenCallWorkflow = () =>
    createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'pause',
      nodes: [
        { id: 'pause', type: 'delay', duration: 3600, next: 'call' },
        { id: 'call', type: 'http_request', method: 'GET', url: 'http://127.0.0.1:1/x', next: 'done', onError: 'done' },
        { id: 'done', type: 'end' },
      ],
    });

  it("one run whose step cannot be taken fails only its own job, not the others' taken in the same transaction", async () => {
    const good = await delayThenCallWorkflow();
    const bad = await delayThenCallWorkflow();
    const [goodRun] = await startRuns(good.identifier, 1);
    const [badRun] = await startRuns(bad.identifier, 1);
    await waitFor(
      async () => (await statuses(good.id)).waiting === 1 && (await statuses(bad.id)).waiting === 1,
      10_000,
      'both runs waiting on their delay',
    );
    // the engine cannot take a step of a run whose pinned definition has no nodes (published versions never change,
    // and the driver keeps those it has read: the run is pinned to a broken version it has not read yet)
    await t.db.query(`INSERT INTO workflow_versions (workflow_id, version, definition) VALUES ($1, 99, '{}')`, [
      bad.id,
    ]);
    await t.db.query(`UPDATE workflow_runs SET workflow_version = 99 WHERE id = $1`, [badRun]);
    const driver = (restarted ?? t.worker!).get(EmbeddedDriver);
    const fired = { kind: 'event' as const, event: { type: 'timer_fired' as const, seq: 1 } };
    await expect(
      driver.driveMany([
        { runId: goodRun, input: fired },
        { runId: badRun, input: fired },
      ]),
    ).rejects.toThrow();
    const rows = await t.db.query(`SELECT id, status FROM workflow_runs WHERE id = ANY($1::uuid[])`, [
      [goodRun, badRun],
    ]);
    expect(Object.fromEntries(rows.map((r: any) => [r.id, r.status]))).toEqual({
      [goodRun]: 'completed',
      [badRun]: 'waiting',
    });
  });

  it('runs start with their pinned definitions when the definitions the driver keeps are full', async () => {
    const kept = await delayWorkflow(3600);
    const unread = await delayWorkflow(3600);
    await startRuns(kept.identifier, 1);
    await waitFor(async () => (await statuses(kept.id)).waiting === 1, 10_000, 'a run waiting on its delay');
    const driver = (restarted ?? t.worker!).get(EmbeddedDriver);
    const definitions = (driver as unknown as { definitions: Map<string, unknown> }).definitions;
    expect(definitions.has(`${kept.id}:1`)).toBe(true); // read by the step of the run above
    for (let i = 0; definitions.size < 500; i++) definitions.set(`other:${i}`, {});
    // a pending run of each workflow, started in one step: reading the unread one empties the full cache
    const runs = [randomUUID(), randomUUID()];
    await t.db.query(
      `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, payload)
       VALUES ($1, $3, $4, 1, 'pending', '{}'), ($2, $3, $5, 1, 'pending', '{}')`,
      [...runs, account.accountId, kept.id, unread.id],
    );
    await driver.driveMany(runs.map((runId) => ({ runId, input: { kind: 'start' as const } })));
    const rows = await t.db.query(`SELECT id, status FROM workflow_runs WHERE id = ANY($1::uuid[])`, [runs]);
    expect(Object.fromEntries(rows.map((r: any) => [r.id, r.status]))).toEqual({
      [runs[0]]: 'waiting',
      [runs[1]]: 'waiting',
    });
  });

  it("when recording an effect's outcome fails once, the step is tried again in the same job and the run goes on", async () => {
    const wf = await delayThenCallWorkflow();
    const [runId] = await startRuns(wf.identifier, 1);
    await waitFor(async () => (await statuses(wf.id)).waiting === 1, 10_000, 'a run waiting on its delay');
    const driver = (restarted ?? t.worker!).get(EmbeddedDriver);
    const steps = driver as unknown as { decideAndPersist(items: DriveItem[]): Promise<unknown> };
    const real = steps.decideAndPersist.bind(driver);
    let refused = 0;
    const spy = jest.spyOn(steps, 'decideAndPersist').mockImplementation(async (items) => {
      const input = items[0].input;
      if (input.kind === 'event' && input.event.type === 'effect_failed' && refused++ === 0)
        throw new Error('connection terminated unexpectedly');
      return real(items);
    });
    try {
      await driver.drive(runId, { kind: 'event', event: { type: 'timer_fired', seq: 1 } });
    } finally {
      spy.mockRestore();
    }
    expect(refused).toBe(2); // refused once, recorded on the second try
    const [run] = await t.db.query(`SELECT status, state FROM workflow_runs WHERE id = $1`, [runId]);
    expect(run.status).toBe('completed');
    expect(run.state.history.map((h: any) => [h.nodeId, h.outcome])).toEqual([
      ['pause', 'timer_fired'],
      ['call', 'on_error'],
      ['done', 'end'],
    ]);
  });

  it('a timer that cannot be queued after its step is committed fails no job; the sweep adds it once overdue', async () => {
    const wf = await delayWorkflow(1);
    const worker = restarted ?? t.worker!;
    const workerQueue = worker.get(AutomationQueue);
    const spy = jest.spyOn(workerQueue, 'timers').mockRejectedValueOnce(new Error('Redis is away'));
    let runId: string;
    try {
      [runId] = await startRuns(wf.identifier, 1);
      await waitFor(async () => (await statuses(wf.id)).waiting === 1, 10_000, 'a run waiting on its delay');
      await waitFor(async () => spy.mock.calls.length > 0, 5_000, 'the refused timer');
    } finally {
      spy.mockRestore();
    }
    expect(await queue.queue.getJob(`${runId}:1:timer`)).toBeUndefined();
    expect(await queue.queue.getJob(`${runId}:0:start`)).toBeUndefined(); // the start job did not fail (no retry)
    await t.db.query(`UPDATE workflow_runs SET wake_at = now() - interval '10 seconds' WHERE id = $1`, [runId]);
    expect(await worker.get(EmbeddedDriver).recover({ full: false })).toMatchObject({ timers: 1 });
    await waitFor(async () => (await statuses(wf.id)).completed === 1, 10_000, 'the run to complete');
  });
});
