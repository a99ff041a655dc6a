import { AutomationQueue, EmbeddedDriver, WorkflowRunsService, type DriveItem } from '@switchboard/automations';
import { createWorkflow, waitFor } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * Embedded driver: a customer's reply that arrives while the run still performs the step before its wait_for_reply is
 * kept and taken by that wait (as the Temporal workflow buffers it); a delay in between drops it. The step "in
 * progress" is made deterministic: it is committed without its effect performed (what a worker leaves while it
 * performs it), the reply is delivered through WorkflowRunsService, then the effect's outcome is recorded.
 */
describe('Embedded driver: replies that come before the wait', () => {
  let t: TestApp;
  let account: TestAccount;
  let driver: EmbeddedDriver;
  let phoneSeq = 0;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    account = await t.createAccount();
    driver = t.worker!.get(EmbeddedDriver);
  });
  afterAll(() => t.close());

  /** webhook → delay → http_request (unreachable: its failure takes onError) → [delay →] wait_for_reply → end */
  const workflow = (delayBeforeWait: boolean) =>
    createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'pause',
      nodes: [
        { id: 'pause', type: 'delay', duration: 3600, next: 'call' },
        {
          id: 'call',
          type: 'http_request',
          method: 'GET',
          url: 'http://127.0.0.1:1/x',
          next: delayBeforeWait ? 'breath' : 'wait',
          onError: delayBeforeWait ? 'breath' : 'wait',
        },
        ...(delayBeforeWait ? [{ id: 'breath', type: 'delay', duration: 1, next: 'wait' }] : []),
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout: '1h',
          branches: [{ match: { type: 'keyword', keywords: ['yes'] }, next: 'yes' }],
          onTimeout: 'timed_out',
        },
        { id: 'yes', type: 'end' },
        { id: 'timed_out', type: 'end' },
      ],
    });

  const row = async (runId: string) =>
    (
      await t.db.query(`SELECT status, waiting_kind, pending_replies, state FROM workflow_runs WHERE id = $1`, [runId])
    )[0];

  /** A run of `wf` for a new phone, committed at its http_request step with the effect not performed yet. */
  async function runPerformingItsStep(identifier: string) {
    const phone = `1555000${String(7000 + ++phoneSeq)}`;
    const { runId } = (await t.http.post(`/webhook/workflow/${identifier}`, { phone: `+${phone}` })).body;
    await waitFor(async () => (await row(runId))?.status === 'waiting', 10_000, 'the run on its delay');
    const steps = driver as unknown as { decideAndPersist(items: DriveItem[]): Promise<unknown> };
    await steps.decideAndPersist([{ runId, input: { kind: 'event', event: { type: 'timer_fired', seq: 1 } } }]);
    expect(await row(runId)).toMatchObject({ status: 'running', waiting_kind: 'effect' });
    return { runId, phone };
  }

  async function replyAsCustomer(runId: string, phone: string, text: string, messageId: string) {
    const delivered = await t.app
      .get(WorkflowRunsService)
      .deliverReply(account.accountId, null, phone, { text, messageId });
    expect(delivered).toEqual([runId]);
  }

  /** A reply kept while the run performs its step, then the step's outcome recorded; the run's id. */
  async function replyKeptThenStepDone(delayBeforeWait: boolean, text: string, messageId: string) {
    const wf = await workflow(delayBeforeWait);
    const { runId, phone } = await runPerformingItsStep(wf.identifier);
    await replyAsCustomer(runId, phone, text, messageId);
    await waitFor(async () => (await row(runId)).pending_replies, 10_000, 'the reply to be kept');
    await driver.drive(runId, { kind: 'resume' });
    return runId;
  }

  it('is kept while the step is performed, then taken by the wait: the run completes on the reply branch', async () => {
    const wf = await workflow(false);
    const { runId, phone } = await runPerformingItsStep(wf.identifier);
    await replyAsCustomer(runId, phone, 'Yes', 'wamid.early.1');
    const kept = await waitFor(async () => (await row(runId)).pending_replies, 10_000, 'the reply to be kept');
    expect(kept).toEqual([{ text: 'Yes', messageId: 'wamid.early.1' }]);
    expect((await row(runId)).status).toBe('running');

    await driver.drive(runId, { kind: 'resume' }); // the step's effect is performed; its outcome recorded
    const done = await row(runId);
    expect(done).toMatchObject({ status: 'completed', pending_replies: null });
    expect(done.state.history.map((h: any) => [h.nodeId, h.outcome])).toEqual([
      ['pause', 'timer_fired'],
      ['call', 'on_error'],
      ['wait', 'branch:0'],
      ['yes', 'end'],
    ]);
    expect(done.state.history[2].detail).toEqual({ reply: { text: 'Yes', messageId: 'wamid.early.1' } });
    expect(done.state.consumedReplyIds).toContain('wamid.early.1');
    // no timeout job was left for the wait the kept reply ended
    const timers = await t.app.get(AutomationQueue).queue.getDelayed();
    expect(timers.map((j) => j.id)).not.toContain(`${runId}:3:timer`);
  });

  it('a reply the wait does not take is dropped, and the run waits for the next one', async () => {
    const runId = await replyKeptThenStepDone(false, 'maybe', 'wamid.early.2');
    expect(await row(runId)).toMatchObject({ status: 'waiting', waiting_kind: 'reply', pending_replies: null });
  });

  it('a delay between the step and the wait drops the kept reply (the engine ignores replies during a delay)', async () => {
    const runId = await replyKeptThenStepDone(true, 'yes', 'wamid.early.3');
    expect(await row(runId)).toMatchObject({ status: 'waiting', waiting_kind: 'timer', pending_replies: null });
    await waitFor(async () => (await row(runId)).waiting_kind === 'reply', 10_000, 'the wait after the delay');
    expect((await row(runId)).status).toBe('waiting');
    // a reply of the step before the delay, handled only now, is not taken by the wait after it either
    const late = { text: 'yes', messageId: 'wamid.early.5' };
    await driver.drive(runId, { kind: 'early-reply', event: { type: 'reply_received', reply: late, seq: 2 } });
    expect(await row(runId)).toMatchObject({ status: 'waiting', waiting_kind: 'reply' });
  });

  it('two replies that came together, both for one wait: the first answers it, the second the next reply wait', async () => {
    // wait → http_request (unreachable: its failure takes onError) → wait → end, as Temporal buffers the second reply
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'first',
      nodes: [
        {
          id: 'first',
          type: 'wait_for_reply',
          timeout: '1h',
          branches: [{ match: { type: 'any' }, next: 'call' }],
          onTimeout: 'timed_out',
        },
        {
          id: 'call',
          type: 'http_request',
          method: 'GET',
          url: 'http://127.0.0.1:1/x',
          next: 'second',
          onError: 'second',
        },
        {
          id: 'second',
          type: 'wait_for_reply',
          timeout: '1h',
          branches: [{ match: { type: 'any' }, next: 'done' }],
          onTimeout: 'timed_out',
        },
        { id: 'done', type: 'end' },
        { id: 'timed_out', type: 'end' },
      ],
    });
    const phone = `1555000${String(7000 + ++phoneSeq)}`;
    const { runId } = (await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: `+${phone}` })).body;
    await waitFor(async () => (await row(runId))?.waiting_kind === 'reply', 10_000, 'the first wait');
    const seq = (await row(runId)).state.waitingFor.seq;
    // one webhook, two customer messages: both are found waiting at this wait, and handled one after the other
    for (const [text, messageId] of [
      ['first answer', 'wamid.together.1'],
      ['second answer', 'wamid.together.2'],
    ])
      await driver.drive(runId, { kind: 'event', event: { type: 'reply_received', reply: { text, messageId }, seq } });
    const done = await waitFor(
      async () => ((await row(runId)).status === 'completed' ? row(runId) : null),
      10_000,
      'the run completed by the second reply',
    );
    expect(done.state.history.map((h: any) => [h.nodeId, h.outcome])).toEqual([
      ['first', 'branch:0'],
      ['call', 'on_error'],
      ['second', 'branch:0'],
      ['done', 'end'],
    ]);
    expect(done.state.history[2].detail).toEqual({ reply: { text: 'second answer', messageId: 'wamid.together.2' } });
  });

  it('a reply queued during the step but handled once the run already waits for it is taken by that wait', async () => {
    const wf = await workflow(false);
    const { runId } = await runPerformingItsStep(wf.identifier);
    await driver.drive(runId, { kind: 'resume' });
    expect(await row(runId)).toMatchObject({ status: 'waiting', waiting_kind: 'reply' });
    const reply = { text: 'yes', messageId: 'wamid.early.4' };
    await driver.drive(runId, { kind: 'early-reply', event: { type: 'reply_received', reply, seq: 2 } });
    expect(await row(runId)).toMatchObject({ status: 'completed' });
  });
});
