import { WorkflowRunsService } from '@switchboard/automations';
import { createWorkflow, describeEachDriver, driverEnv, waitFor } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** Many runs waiting for replies at once, on both drivers: each resumes on its own branch, once. */
describeEachDriver('Runs waiting for replies at once', (driver) => {
  // Sized for the suite's time budget. Temporal: every run is a workflow execution with its activities on the one
  // dev server of the test run (SQLite). Measured here (2 busy cores): 100 runs 11 s, 1,000 runs 164 s (90 s until all
  // wait, 74 s until all resumed), where the embedded driver takes ~12 s for 1,000. 300 keeps `npm test` short and
  // still has hundreds of concurrent waits and signals; TEMPORAL_WAITING_RUNS=1000 runs the full size.
  const RUNS = driver === 'temporal' ? Number(process.env.TEMPORAL_WAITING_RUNS ?? 300) : 1000;
  if (driver === 'temporal' && RUNS < 1000) {
    process.stdout.write(
      `\nTemporal: ${RUNS} waiting runs instead of 1,000 (1,000 take ~160 s on the SQLite dev server here; TEMPORAL_WAITING_RUNS=1000 for the full size)\n`,
    );
  }
  let t: TestApp;
  let account: TestAccount;
  let runs: WorkflowRunsService;

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...driverEnv(driver),
        RATE_LIMIT_PER_MINUTE: '100000',
        DATABASE_POOL_SIZE: '10',
        AUTOMATION_MAX_BACKLOG_MS: '0', // 1,000 webhooks at once: no 429 backpressure here (automations-backpressure)
      },
      { worker: true },
    );
    account = await t.createAccount();
    runs = t.worker!.get(WorkflowRunsService);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  const replyDefinition = {
    trigger: { type: 'webhook' },
    startNodeId: 'ask',
    nodes: [
      {
        id: 'ask',
        type: 'wait_for_reply',
        timeout: '1h',
        branches: [
          { match: { type: 'button', payload: 'CANCEL' }, next: 'cancelled' },
          { match: { type: 'keyword', keywords: ['yes', 'confirm'] }, next: 'confirmed' },
        ],
        onTimeout: 'timed_out',
      },
      { id: 'confirmed', type: 'end' },
      { id: 'cancelled', type: 'end' },
      { id: 'timed_out', type: 'end' },
    ],
  };

  it(`${RUNS.toLocaleString('en')} runs waiting for replies at once all resume on their own branch`, async () => {
    const wf = await createWorkflow(t, account.token, replyDefinition);
    const phones = Array.from({ length: RUNS }, (_, i) => `4477009${String(10000 + i)}`);
    const inBatches = async <T>(items: string[], fn: (phone: string, i: number) => Promise<T>) => {
      const out: T[] = [];
      for (let i = 0; i < items.length; i += 100)
        out.push(...(await Promise.all(items.slice(i, i + 100).map((p, j) => fn(p, i + j)))));
      return out;
    };
    const startedAt = Date.now();
    const started = await inBatches(phones, (phone) => t.http.post(`/webhook/workflow/${wf.identifier}`, { phone }));
    expect(started.every((r) => r.status === 200)).toBe(true);
    const count = async (where: string) =>
      (await t.db.query(`SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1 AND ${where}`, [wf.id]))[0]
        .n;
    await waitFor(async () => (await count(`waiting_kind = 'reply'`)) === RUNS, 90_000, `${RUNS} waiting runs`);
    const waitingAt = Date.now();
    const delivered = await inBatches(phones, (phone, i) =>
      runs.deliverReply(
        account.accountId,
        account.messagingPhoneId,
        phone,
        i % 2 ? { text: 'yes', messageId: `m${i}` } : { buttonPayload: 'CANCEL', messageId: `m${i}` },
      ),
    );
    expect(delivered.every((ids) => ids.length === 1)).toBe(true);
    await waitFor(async () => (await count(`status = 'completed'`)) === RUNS, 90_000, `${RUNS} completed runs`);
    process.stdout.write(
      `\n${driver}: ${RUNS} runs waiting after ${((waitingAt - startedAt) / 1000).toFixed(1)} s, all resumed and completed ${((Date.now() - waitingAt) / 1000).toFixed(1)} s later\n`,
    );
    const rows = await t.db.query(
      `SELECT contact_phone, current_node_id, state FROM workflow_runs WHERE workflow_id = $1`,
      [wf.id],
    );
    expect(rows).toHaveLength(RUNS);
    for (const row of rows) {
      const i = phones.indexOf(row.contact_phone);
      expect({ i, node: row.current_node_id, steps: row.state.history.length }).toEqual({
        i,
        node: i % 2 ? 'confirmed' : 'cancelled',
        steps: 2,
      });
    }
  }, 240_000);
});
