import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  AutomationsWorkerModule,
  type AutomationActivities,
  EmbeddedDriver,
  WorkflowRunsService,
  type SendSessionMessageInput,
  type SendTemplateInput,
  type TriggerCampaignInput,
} from '@switchboard/automations';
import { ConfigModule, LiveEventsModule, QueueModule, RedisModule } from '@switchboard/core';
import { DatabaseModule } from '@switchboard/core/database';
import { createWorkflow, seedTemplate, waitFor, waitForRun } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

jest.setTimeout(30_000);

const calls: Array<{ kind: string; input: any }> = [];
let holdSessionMessages = false;
const held: Array<() => void> = [];

/** Replaces the platform's activities (AUTOMATION_ACTIVITIES) to see exactly what the driver asks for. */
@Injectable()
class RecordingActivities implements AutomationActivities {
  async sendTemplate(input: SendTemplateInput) {
    calls.push({ kind: 'sendTemplate', input });
    return { messageId: `wamid.${input.idempotencyKey}` };
  }
  async sendSessionMessage(input: SendSessionMessageInput) {
    calls.push({ kind: 'sendSessionMessage', input });
    if (holdSessionMessages) await new Promise<void>((resolve) => held.push(resolve));
    return { messageId: 'wamid.session' };
  }
  async triggerCampaign(input: TriggerCampaignInput) {
    calls.push({ kind: 'triggerCampaign', input });
    throw new Error('campaign 7 is paused');
  }
  async httpRequest(): Promise<never> {
    throw new Error('http_request is not used in these workflows');
  }
  async updateContact(): Promise<never> {
    throw new Error('update_contact is not used in these workflows');
  }
}

describe('Activities provided by another module (AUTOMATION_ACTIVITIES)', () => {
  let t: TestApp;
  let account: TestAccount;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    account = await t.createAccount();
    await seedTemplate(t, account, 'order_confirm');
    @Module({
      imports: [
        ConfigModule.forRoot(t.config),
        DatabaseModule.forRoot(),
        RedisModule,
        LiveEventsModule,
        QueueModule.forRoot(),
        AutomationsWorkerModule.forRoot({ activities: RecordingActivities }),
      ],
    })
    class CustomWorkerModule {}
    worker = await NestFactory.createApplicationContext(CustomWorkerModule, { logger: ['error'] });
  });
  afterAll(async () => {
    held.forEach((release) => release());
    await worker.close();
    await t.close();
  });

  it('calls the activities with the effect, the account and the step idempotency key; results and errors flow back', async () => {
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'send',
      nodes: [
        {
          id: 'send',
          type: 'send_template',
          templateName: 'order_confirm',
          to: '{{contact.phone}}',
          variables: { zeta: '{{payload.order}}', alpha: 'A', custom1: '{{payload.missing | default: "n/a"}}' },
          next: 'campaign',
        },
        { id: 'campaign', type: 'trigger_campaign', campaignId: 7, next: 'done', onError: 'failed_campaign' },
        { id: 'failed_campaign', type: 'end' },
        { id: 'done', type: 'end' },
      ],
    });
    const { runId } = (
      await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: '+1 555 000 3333', order: 'A-9' })
    ).body;
    const run = await waitForRun(t, account.token, runId, ['completed', 'failed']);
    expect(run).toMatchObject({
      status: 'completed',
      currentNodeId: 'failed_campaign',
      vars: { lastError: { nodeId: 'campaign', message: 'campaign 7 is paused' } },
    });

    const send = calls.find((c) => c.kind === 'sendTemplate' && c.input.runId === runId)!;
    expect(send.input).toEqual({
      accountId: account.accountId,
      runId,
      seq: 1,
      idempotencyKey: `run:${runId}:step:1`,
      messagingPhoneId: null,
      nodeId: 'send',
      to: '15550003333',
      templateName: 'order_confirm',
      variables: { zeta: 'A-9', alpha: 'A', custom1: 'n/a' },
    });
    expect(Object.keys(send.input.variables)).toEqual(['zeta', 'alpha', 'custom1']);
    const campaign = calls.find((c) => c.kind === 'triggerCampaign' && c.input.runId === runId)!;
    expect(campaign.input).toMatchObject({
      seq: 2,
      idempotencyKey: `run:${runId}:step:2`,
      campaignId: '7',
      contact: { phoneNumber: '15550003333' },
    });
  });

  /** A run of a hello → end workflow whose send is held in the activity (released by emptying `held`). */
  async function runHeldInItsFirstSend(phone: string): Promise<string> {
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'hello',
      nodes: [
        { id: 'hello', type: 'send_session_message', text: 'Hello {{payload.name}}', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    holdSessionMessages = true;
    const { runId } = (await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone, name: 'Eve' })).body;
    await waitFor(async () => held.length === 1, 5000, 'the first send to start');
    return runId;
  }

  it('a second start of a run whose step is being performed (a retried webhook, a start queued twice) performs nothing', async () => {
    const runId = await runHeldInItsFirstSend('15550004445');
    await worker.get(EmbeddedDriver).drive(runId, { kind: 'start' });
    await new Promise((r) => setTimeout(r, 300));
    expect(held).toHaveLength(1);
    holdSessionMessages = false;
    held.splice(0).forEach((release) => release());
    await waitForRun(t, account.token, runId, ['completed']);
    expect(calls.filter((c) => c.kind === 'sendSessionMessage' && c.input.runId === runId)).toHaveLength(1);
  });

  it('re-performing a pending effect after a crash uses the same idempotency key, and advances once', async () => {
    const runId = await runHeldInItsFirstSend('15550004444');
    // As if the worker died mid-send and the recovery re-drove the run (twice, concurrently).
    const driver = worker.get(EmbeddedDriver);
    const redrives = [driver.drive(runId, { kind: 'resume' }), driver.drive(runId, { kind: 'resume' })];
    await waitFor(async () => held.length === 3, 5000, 'the re-performed sends');
    holdSessionMessages = false;
    held.splice(0).forEach((release) => release());
    await Promise.all(redrives);
    const run = await waitForRun(t, account.token, runId, ['completed']);
    const sends = calls.filter((c) => c.kind === 'sendSessionMessage' && c.input.runId === runId);
    expect(sends.map((c) => c.input.idempotencyKey)).toEqual([
      `run:${runId}:step:1`,
      `run:${runId}:step:1`,
      `run:${runId}:step:1`,
    ]);
    expect(sends[0].input).toMatchObject({ to: '15550004444', text: 'Hello Eve' });
    expect(run.history).toEqual([
      {
        seq: 1,
        nodeId: 'hello',
        type: 'send_session_message',
        outcome: 'completed',
        at: expect.any(String),
        detail: expect.objectContaining({ input: expect.objectContaining({ text: 'Hello Eve' }) }),
      },
      { seq: 2, nodeId: 'done', type: 'end', outcome: 'end', at: expect.any(String) },
    ]);
  });

  it('a run whose payload names no phone is bound to the recipient of its first message, so replies reach it', async () => {
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'ask',
      nodes: [
        {
          id: 'ask',
          type: 'send_session_message',
          to: '{{payload.customer.mobile}}',
          text: 'Still interested?',
          buttons: [{ text: 'Yes', payload: 'YES' }],
          next: 'wait',
        },
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout: '1d',
          branches: [{ match: { type: 'button', payload: 'YES' }, next: 'done' }],
          onTimeout: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const { runId } = (
      await t.http.post(`/webhook/workflow/${wf.identifier}`, { customer: { mobile: '+44 7700 900777' } })
    ).body;
    await waitForRun(t, account.token, runId, ['waiting']);
    const [row] = await t.db.query('SELECT contact_phone FROM workflow_runs WHERE id = $1', [runId]);
    expect(row.contact_phone).toBe('447700900777');
    expect(
      await worker
        .get(WorkflowRunsService)
        .deliverReply(account.accountId, null, '447700900777', { buttonPayload: 'YES', messageId: 'w1' }),
    ).toEqual([runId]);
    const run = await waitForRun(t, account.token, runId, ['completed']);
    expect(run.history.map((h: any) => h.outcome)).toEqual(['completed', 'branch:0', 'end']);
  });
});
