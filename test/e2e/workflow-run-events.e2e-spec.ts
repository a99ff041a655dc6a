import { WorkflowRunsService } from '@switchboard/automations';
import { createWorkflow, waitForRun } from '../helpers/automations';
import { startTestApp, TestApp } from '../helpers/test-app';

/** Watching runs (docs/console.md): Server-Sent Events backed by Redis pub/sub, history timestamps, account scoping. */
describe('Run events and history details', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
  });
  afterAll(() => t.close());

  const definition = {
    trigger: { type: 'webhook' },
    startNodeId: 'pause',
    nodes: [
      { id: 'pause', type: 'delay', duration: '2s', next: 'call' }, // long enough for a stream opened after the start
      {
        id: 'call',
        type: 'http_request',
        method: 'GET',
        url: 'http://127.0.0.1:1/unreachable',
        next: 'done',
        onError: 'done',
      },
      { id: 'done', type: 'end' },
    ],
  };

  /** A test run of a new workflow of `definition`; its id. */
  async function startTestRun(token: string, phone: string): Promise<string> {
    const wf = await createWorkflow(t, token, definition);
    const started = await t.http.post(`/v1/workflows/${wf.id}/test-runs`, { payload: { phone } }, { token });
    return started.body.data.runId;
  }

  /** Reads SSE `run` events until one satisfies `until` (or the timeout). */
  async function readEvents(path: string, token: string, until: (run: any) => boolean, timeoutMs = 10_000) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const response = await fetch(`${t.url}${path}`, {
      headers: { authorization: token, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const runs: any[] = [];
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const reader = response.body!.getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += new TextDecoder().decode(value);
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!/^event: run$/m.test(block)) continue;
          const run = JSON.parse(
            block
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6))
              .join('\n'),
          );
          runs.push(run);
          if (until(run)) return runs;
        }
      }
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    return runs;
  }

  it('streams the run now and after each step until it completes; history entries carry times and effect details', async () => {
    const account = await t.createAccount();
    const runId = await startTestRun(account.token, '+15550004444');
    const runs = await readEvents(`/v1/workflow-runs/${runId}/events`, account.token, (r) => r.status === 'completed');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[runs.length - 1].status).toBe('completed');
    expect(runs[runs.length - 1].history.map((h: any) => [h.nodeId, h.outcome])).toEqual([
      ['pause', 'timer_fired'],
      ['call', 'on_error'],
      ['done', 'end'],
    ]);

    const run = await waitForRun(t, account.token, runId, ['completed']);
    for (const entry of run.history)
      expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(Date.parse(run.createdAt) - 1000);
    expect(Date.parse(run.history[1].at) - Date.parse(run.history[0].at)).toBeLessThan(5000);
    const call = run.history.find((h: any) => h.nodeId === 'call');
    expect(call.detail.input).toMatchObject({ method: 'GET', url: 'http://127.0.0.1:1/unreachable' });
    expect(call.detail.error.message).toEqual(expect.any(String));
  });

  it("a step taken between the stream's first read and its subscription is still sent (the run is read again once listening)", async () => {
    const account = await t.createAccount();
    const runId = await startTestRun(account.token, '+15550004445');
    const done = await waitForRun(t, account.token, runId, ['completed']);
    // The stream's first read returns the run as it was before its last steps: as if they were taken right after it.
    const runs = t.app.get(WorkflowRunsService);
    const real = runs.getRun.bind(runs);
    const spy = jest.spyOn(runs, 'getRun').mockImplementationOnce(async (accountId, id) => ({
      ...(await real(accountId, id)),
      status: 'waiting',
      finishedAt: null,
      history: [],
    }));
    try {
      const seen = await readEvents(
        `/v1/workflow-runs/${runId}/events`,
        account.token,
        (r) => r.status === 'completed',
        3000,
      );
      expect(seen.map((r) => r.status)).toEqual(['waiting', 'completed']);
      expect(seen[1].history).toEqual(done.history);
    } finally {
      spy.mockRestore();
    }
  });

  it("another account's run: 404 for its events and for a sandbox reply", async () => {
    const owner = await t.createAccount();
    const intruder = await t.createAccount();
    const runId = await startTestRun(owner.token, '+15550005555');
    const events = await t.http.get(`/v1/workflow-runs/${runId}/events`, { token: intruder.token });
    expect(events.status).toBe(404);
    expect(events.body.message).toBe('Workflow run not found');
    const reply = await t.http.post(
      `/v1/workflow-runs/${runId}/sandbox-reply`,
      { text: 'yes' },
      { token: intruder.token },
    );
    expect(reply.status).toBe(404);
    const badReply = await t.http.post(`/v1/workflow-runs/${runId}/sandbox-reply`, {}, { token: owner.token });
    expect(badReply.status).toBe(400);
  });
});
