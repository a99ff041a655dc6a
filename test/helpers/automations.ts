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

export async function createWorkflow(
  t: TestApp,
  token: string,
  definition: Record<string, unknown>,
  name = 'Test workflow',
  isActive = true,
) {
  const res = await t.http.post('/v1/workflows', { mode: 'create', name, isActive, ...definition }, { token });
  if (res.status !== 200) throw new Error(`create workflow failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as {
    id: number;
    name: string;
    isActive: boolean;
    version: number;
    identifier: string;
    webhookUrl: string;
  };
}

/** Polls until `check` returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** GET /v1/workflow-runs/{runId} until the run has one of `statuses`. */
export async function waitForRun(t: TestApp, token: string, runId: string, statuses: string[], timeoutMs = 10_000) {
  let last: any;
  try {
    return await waitFor(
      async () => {
        const res = await t.http.get(`/v1/workflow-runs/${runId}`, { token });
        last = res.body;
        return res.status === 200 && statuses.includes(res.body.data.status) ? res.body.data : undefined;
      },
      timeoutMs,
      `run ${runId} to be ${statuses.join('/')}`,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}

/**
 * A template row for workflow definitions that name one (definitions are checked against the account's templates).
 * Inserted directly: these suites exercise automations, not the template review (see templates.e2e-spec.ts for that).
 */
export async function seedTemplate(
  t: TestApp,
  account: { accountId: string; messagingPhoneId: string },
  name: string,
  status = 'APPROVED',
) {
  await t.db.query(
    `INSERT INTO templates (account_id, phone_number_id, name, language, category, status, components, platform_components)
     SELECT $1, id, $3, 'en_US', 'UTILITY', $4, '[]', '[]' FROM phone_numbers WHERE messaging_phone_id = $2`,
    [account.accountId, account.messagingPhoneId, name, status],
  );
}

export type AutomationDriverName = 'embedded' | 'temporal';

/** The Temporal dev server of this jest run (test/helpers/global-setup.ts), or undefined with the reason. */
export function testTemporalAddress(): string | undefined {
  return process.env.SWITCHBOARD_TEST_TEMPORAL_ADDRESS || undefined;
}

/**
 * One describe per automation driver, same scenarios: embedded always, Temporal when the global setup started a
 * server (otherwise that half is skipped and the reason printed, e.g. no `temporal` binary and no `go`).
 */
export function describeEachDriver(title: string, body: (driver: AutomationDriverName) => void): void {
  for (const driver of ['embedded', 'temporal'] as const) {
    if (driver === 'temporal' && !testTemporalAddress()) {
      const reason = process.env.SWITCHBOARD_TEST_TEMPORAL_UNAVAILABLE ?? 'no Temporal server';
      process.stdout.write(`\n${title} on the Temporal driver skipped: ${reason}\n`);
      describe.skip(`${title} (temporal driver: ${reason})`, () => body(driver));
      continue;
    }
    describe(`${title} (${driver} driver)`, () => body(driver));
  }
}

/**
 * startTestApp environment selecting `driver`: Temporal gets the run's dev server and a task queue of its own
 * (test files share the server, not their runs).
 */
export function driverEnv(driver: AutomationDriverName): Record<string, string> {
  if (driver === 'embedded') return {};
  const address = testTemporalAddress();
  if (!address) throw new Error('no Temporal test server (see test/helpers/global-setup.ts)');
  return {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: `sbt-${process.pid}-${Math.random().toString(36).slice(2, 10)}`,
  };
}

/** Waits until `n` workers poll the test app's Temporal task queue (a worker process takes a few seconds to boot). */
export async function waitForTemporalPollers(t: TestApp, n: number, timeoutMs: number): Promise<void> {
  const { Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: t.config.TEMPORAL_ADDRESS });
  try {
    await waitFor(
      async () => {
        const res = await connection.workflowService.describeTaskQueue({
          namespace: t.config.TEMPORAL_NAMESPACE,
          taskQueue: { name: t.config.TEMPORAL_TASK_QUEUE },
          taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
        });
        return (res.pollers?.length ?? 0) >= n;
      },
      timeoutMs,
      `${n} Temporal worker(s) polling ${t.config.TEMPORAL_TASK_QUEUE}`,
    );
  } finally {
    await connection.close();
  }
}
