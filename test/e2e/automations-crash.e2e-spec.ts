import type { ChildProcess } from 'node:child_process';
import { createWorkflow, waitFor } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

/** Runs survive a killed worker: SIGKILL while they wait on a delay; the next worker process finishes every one. */
describe('Automations survive a killed worker (embedded driver)', () => {
  let t: TestApp;
  let account: TestAccount;
  const workers: ChildProcess[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }); // API only: the worker runs as child processes
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
        { id: 'pause', type: 'delay', duration: '3s', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    const count = async (where: string) => (await t.db.query(`SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1 AND ${where}`, [wf.id]))[0].n as number;

    const first = startWorkerProcess(t, logs);
    workers.push(first);
    for (let i = 0; i < RUNS; i++) {
      const res = await t.http.post(`/webhook/workflow/${wf.identifier}`, { order: i });
      expect(res.status).toBe(200);
    }
    try {
      await waitFor(async () => (await count(`waiting_kind = 'timer'`)) === RUNS, 30_000, `${RUNS} runs waiting on their delay`);
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
    for (const { state } of runs) {
      const steps = (typeof state === 'string' ? JSON.parse(state) : state).history.map((h: { nodeId: string }) => h.nodeId);
      expect(steps).toEqual(['pause', 'done']);
    }
  }, 120_000);
});
