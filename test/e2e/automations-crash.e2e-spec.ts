import type { ChildProcess } from 'node:child_process';
import { createWorkflow, describeEachDriver, driverEnv, waitFor, waitForTemporalPollers } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

/**
 * Runs survive a killed worker: SIGKILL while they wait on a delay; the next worker process finishes every one, once.
 * Embedded: the timers are delayed BullMQ jobs (and the recovery sweep); Temporal: server-side timers, the next
 * worker replays each workflow from its history.
 */
describeEachDriver('Automations survive a killed worker', (driver) => {
  let t: TestApp;
  let account: TestAccount;
  const workers: ChildProcess[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ ...driverEnv(driver), RATE_LIMIT_PER_MINUTE: '100000' }); // API only: the worker runs as child processes
    account = await t.createAccount();
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await t.close();
  });

  it('50 runs waiting on a delay when the worker is SIGKILLed all complete under the next worker, each once', async () => {
    const RUNS = 50;
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'pause',
      nodes: [
        // long enough that all 50 are recorded waiting before the first timer fires, even on a loaded machine
        { id: 'pause', type: 'delay', duration: '10s', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    const count = async (where: string) =>
      (await t.db.query(`SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1 AND ${where}`, [wf.id]))[0]
        .n as number;

    const first = startWorkerProcess(t, logs);
    workers.push(first);
    if (driver === 'temporal') await waitForTemporalPollers(t, 1, 30_000);
    for (let i = 0; i < RUNS; i++) {
      const res = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: i });
      expect(res.status).toBe(200);
    }
    try {
      await waitFor(
        async () => (await count(`waiting_kind = 'timer'`)) === RUNS,
        30_000,
        `${RUNS} runs waiting on their delay`,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);
    }
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect(await count(`status = 'completed'`)).toBe(0);

    workers.push(startWorkerProcess(t, logs));
    try {
      await waitFor(async () => (await count(`status = 'completed'`)) === RUNS, 60_000, `${RUNS} completed runs`);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);
    }
    const runs = await t.db.query(`SELECT state FROM workflow_runs WHERE workflow_id = $1`, [wf.id]);
    expect(runs).toHaveLength(RUNS);
    for (const { state } of runs) {
      const steps = (typeof state === 'string' ? JSON.parse(state) : state).history.map(
        (h: { nodeId: string }) => h.nodeId,
      );
      expect(steps).toEqual(['pause', 'done']);
    }
    if (driver === 'temporal') {
      // One execution per run, closed once: each workflow completed exactly once on the server.
      const { Connection, Client } = await import('@temporalio/client');
      const connection = await Connection.connect({ address: t.config.TEMPORAL_ADDRESS });
      try {
        const client = new Client({ connection, namespace: t.config.TEMPORAL_NAMESPACE });
        const ids = (await t.db.query(`SELECT id FROM workflow_runs WHERE workflow_id = $1`, [wf.id])).map(
          (r: { id: string }) => r.id,
        );
        // The row says completed once the last activity recorded it; the execution closes on the next workflow task.
        const statuses = async () =>
          (
            await Promise.all(ids.map((id: string) => client.workflow.getHandle(`automation-run-${id}`).describe()))
          ).map((d) => d.status.name);
        await waitFor(
          async () => (await statuses()).every((s) => s === 'COMPLETED'),
          15_000,
          'every execution closed',
        ).catch(() => undefined);
        expect(await statuses()).toEqual(ids.map(() => 'COMPLETED'));
      } finally {
        await connection.close();
      }
    }
  }, 120_000);
});
