/**
 * The Cloud API client against the in-process sandbox, over real HTTP (no HTTP mocking).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, Sandbox } from '../../../apps/sandbox/src/sandbox';
import { statusesOf, WebhookReceiver } from '../../../apps/sandbox/src/testing/webhook-receiver';
import {
  answerLost,
  classifyCloudApiError,
  CloudApiClient,
  CloudApiError,
  CloudApiErrorCode,
  CreateTemplateRequest,
  parseWebhook,
  verifySignature,
} from './index';

const APP_SECRET = 'test-app-secret';
const PHONE = '109000000000001';
const WABA = '209000000000001';
const CUSTOMER = '4915112345678';

let sandbox: Sandbox;
let receiver: WebhookReceiver;
let client: CloudApiClient;
let baseUrl: string;

async function control(path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${baseUrl}/_sandbox/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.json();
}

async function expectCloudError(p: Promise<unknown>): Promise<CloudApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CloudApiError);
    return err as CloudApiError;
  }
  throw new Error('expected a CloudApiError, the call succeeded');
}

const greeting: CreateTemplateRequest = {
  name: 'order_update',
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['A-1'] } },
    { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.', example: { body_text: [['Ann', 'A-1']] } },
    { type: 'FOOTER', text: 'Switchboard' },
    { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Thanks' }] },
  ],
};

async function approvedTemplate(t: CreateTemplateRequest = greeting): Promise<string> {
  const created = await client.createTemplate(t);
  await control('templates/review', { name: t.name, status: 'APPROVED' });
  return created.id;
}

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
});

afterAll(async () => {
  await receiver.stop();
});

beforeEach(async () => {
  receiver.clear();
  sandbox = createSandbox({
    quiet: true,
    webhookUrl: receiver.url,
    appSecret: APP_SECRET,
    statusDelaysMs: { sent: 20, delivered: 120, read: 220 }, // far enough apart that arrival order is stable on a busy machine
    tickMs: 10,
    templateReviewDelayMs: 50,
    phoneNumbers: { [PHONE]: { wabaId: WABA, displayPhoneNumber: '15550001111' } },
  });
  baseUrl = await sandbox.listen(0);
  client = new CloudApiClient({
    baseUrl,
    apiVersion: 'v21.0',
    accessToken: 'test-token',
    phoneNumberId: PHONE,
    businessAccountId: WABA,
  });
});

afterEach(async () => {
  await sandbox.close();
});

describe('messages', () => {
  it('sends a session text inside the customer-care window and gets a wamid', async () => {
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    const res = await client.sendText(`+${CUSTOMER}`, 'Hello there');
    expect(res.messaging_product).toBe('whatsapp');
    expect(res.contacts).toEqual([{ input: `+${CUSTOMER}`, wa_id: CUSTOMER }]);
    expect(res.messages[0].id).toMatch(/^wamid\./);

    const log = await control(`messages?to=${CUSTOMER}&phone_number_id=${PHONE}`);
    expect(log.data).toHaveLength(1);
    expect(log.data[0].wamid).toBe(res.messages[0].id);
    expect(log.data[0].payload).toMatchObject({ type: 'text', text: { body: 'Hello there' }, to: `+${CUSTOMER}` });
  });

  it('sends media by link, with caption and filename', async () => {
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    await client.sendMedia(CUSTOMER, 'image', 'https://example.com/a.png', { caption: 'look' });
    await client.sendMedia(CUSTOMER, 'video', 'https://example.com/a.mp4');
    await client.sendMedia(CUSTOMER, 'document', 'https://example.com/a.pdf', {
      caption: 'invoice',
      filename: 'invoice.pdf',
    });
    const log = await control(`messages?to=${CUSTOMER}`);
    expect(log.data.map((m: any) => m.type)).toEqual(['image', 'video', 'document']);
    expect(log.data[2].payload.document).toEqual({
      link: 'https://example.com/a.pdf',
      caption: 'invoice',
      filename: 'invoice.pdf',
    });
  });

  it('sends interactive button, cta_url and flow messages', async () => {
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    await client.sendButtons(CUSTOMER, {
      body: 'Pick one',
      footer: 'f',
      buttons: [
        { id: 'yes', title: 'Yes' },
        { id: 'no', title: 'No' },
      ],
    });
    await client.sendCtaUrl(CUSTOMER, { body: 'See the offer', displayText: 'Open', url: 'https://example.com/offer' });
    const flow = await client.createFlow({ name: 'signup', categories: ['SIGN_UP'] });
    await client.uploadFlowJson(flow.id, {
      version: '6.0',
      screens: [{ id: 'WELCOME', layout: { type: 'SingleColumnLayout', children: [] } }],
    });
    await client.publishFlow(flow.id);
    await client.sendFlow(CUSTOMER, {
      body: 'Sign up',
      flowId: flow.id,
      flowCta: 'Start',
      flowToken: 'tok-1',
      screen: 'WELCOME',
    });
    const log = await control(`messages?to=${CUSTOMER}`);
    expect(log.data.map((m: any) => m.payload.interactive.type)).toEqual(['button', 'cta_url', 'flow']);
    expect(log.data[2].payload.interactive.action.parameters).toMatchObject({
      flow_message_version: '3',
      flow_id: flow.id,
      flow_token: 'tok-1',
      flow_action_payload: { screen: 'WELCOME' },
    });
  });

  it('sends an approved template with parameters (no window needed)', async () => {
    await approvedTemplate();
    const res = await client.sendTemplate(CUSTOMER, 'order_update', 'en_US', [
      { type: 'header', parameters: [{ type: 'text', text: 'A-7' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ann' },
          { type: 'text', text: 'A-7' },
        ],
      },
    ]);
    expect(res.messages[0].id).toMatch(/^wamid\./);
  });

  it('marks a message as read', async () => {
    const inbound = await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    await expect(client.markAsRead(inbound.wamid)).resolves.toEqual({ success: true });
  });

  it('emits sent, delivered and read status webhooks in order, signed', async () => {
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    const { messages } = await client.sendText(CUSTOMER, 'track me');
    const wamid = messages[0].id;
    const hooks = await receiver.waitFor((w) => statusesOf(w).some((s) => s.id === wamid), 3);
    expect(hooks.flatMap(statusesOf).map((s) => s.status)).toEqual(['sent', 'delivered', 'read']);
    for (const h of hooks) {
      expect(verifySignature(h.rawBody, h.headers['x-hub-signature-256'] as string, APP_SECRET)).toBe(true);
      expect(h.body.entry[0].id).toBe(WABA);
      expect(h.body.entry[0].changes[0].value.metadata).toEqual({
        display_phone_number: '15550001111',
        phone_number_id: PHONE,
      });
    }
    const events = hooks.flatMap((h) => parseWebhook(h.body));
    expect(events.map((e) => e.kind === 'status' && e.status)).toEqual(['sent', 'delivered', 'read']);
    expect(events[0]).toMatchObject({ kind: 'status', wamid, recipientId: CUSTOMER, phoneNumberId: PHONE });
  });

  it('reports undeliverable recipients (ending in 0000) with a failed status 131026', async () => {
    await approvedTemplate();
    const to = '4915100000000';
    const { messages } = await client.sendTemplate(to, 'order_update', 'en_US', [
      { type: 'header', parameters: [{ type: 'text', text: 'A-7' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ann' },
          { type: 'text', text: 'A-7' },
        ],
      },
    ]);
    const [failed] = await receiver.waitFor((w) =>
      statusesOf(w).some((s) => s.id === messages[0].id && s.status === 'failed'),
    );
    const [ev] = parseWebhook(failed.body);
    expect(ev).toMatchObject({
      kind: 'status',
      status: 'failed',
      errors: [{ code: CloudApiErrorCode.MessageUndeliverable }],
    });
    const all = receiver.received.flatMap(statusesOf).filter((s) => s.id === messages[0].id);
    expect(all.map((s) => s.status)).toEqual(['sent', 'failed']);
  });
});

describe('errors', () => {
  /** Like Meta: the send is accepted (a wamid), the closed window comes as a `failed` status with error 131047, never `sent`. */
  async function failedForClosedWindow(wamid: string) {
    const [hook] = await receiver.waitFor((w) => statusesOf(w).some((s) => s.id === wamid));
    const statuses = receiver.received.flatMap(statusesOf).filter((s) => s.id === wamid);
    expect(statuses.map((s) => s.status)).toEqual(['failed']);
    expect(statusesOf(hook).find((s) => s.id === wamid)).toMatchObject({
      status: 'failed',
      errors: [
        {
          code: CloudApiErrorCode.ReEngagement,
          title: 'Re-engagement message',
          error_data: { details: expect.stringContaining('24 hours') },
        },
      ],
    });
  }

  it('131047 when the customer-care window is closed: accepted, then a failed status', async () => {
    const res = await client.sendText(CUSTOMER, 'out of the blue');
    expect(res.messages[0].id).toMatch(/^wamid\./);
    await failedForClosedWindow(res.messages[0].id);
  });

  it('131047 when the last inbound message is older than 24 hours', async () => {
    await control('inbound', {
      from: CUSTOMER,
      phone_number_id: PHONE,
      text: 'old',
      timestamp: Math.floor(Date.now() / 1000) - 25 * 3600,
    });
    const res = await client.sendText(CUSTOMER, 'late');
    await failedForClosedWindow(res.messages[0].id);
  });

  it('130429 when the per-number rate is exceeded (2/s, 5 quick sends)', async () => {
    await control('config', { messagesPerSecond: { [PHONE]: 2 } });
    await approvedTemplate({
      name: 'ping',
      language: 'en',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'ping' }],
    });
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => client.sendTemplate(CUSTOMER, 'ping', 'en')));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const rejected = results
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => r.reason as CloudApiError);
    expect(ok).toHaveLength(2);
    expect(rejected).toHaveLength(3);
    for (const err of rejected) {
      expect(err).toBeInstanceOf(CloudApiError);
      expect(err.code).toBe(CloudApiErrorCode.Throughput);
      expect(err.httpStatus).toBe(400); // Meta answers 130429 with HTTP 400
      expect(err.retryable).toBe(true);
      expect(err.retryAfterMs).toBe(1000);
      expect(classifyCloudApiError(err)).toEqual({ class: 'throughput', retryable: true, retryAfterMs: 1000 });
    }
    // still limited a moment later (the window is one second, not one tick) ...
    await new Promise((r) => setTimeout(r, 300));
    expect((await expectCloudError(client.sendTemplate(CUSTOMER, 'ping', 'en'))).code).toBe(130429);
    // ... and the window slides: a second after the first sends the number may send again
    await new Promise((r) => setTimeout(r, 750));
    await expect(client.sendTemplate(CUSTOMER, 'ping', 'en')).resolves.toBeDefined();
  });

  it('sends refused for other reasons do not use up the throughput', async () => {
    await control('config', { messagesPerSecond: { [PHONE]: 2 } });
    for (let i = 0; i < 4; i++)
      expect((await expectCloudError(client.sendTemplate(CUSTOMER, 'no_such_template', 'en'))).code).toBe(132001);
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    await client.sendText(CUSTOMER, 'one');
    await client.sendText(CUSTOMER, 'two');
    expect((await expectCloudError(client.sendText(CUSTOMER, 'three'))).code).toBe(130429);
  });

  it('131056 when the (opt-in) pair rate limit is hit, per recipient', async () => {
    await control('config', { pairRateLimit: { messages: 1, windowMs: 6000 } });
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    await control('inbound', { from: '4915199999999', phone_number_id: PHONE, text: 'hi' });
    await client.sendText(CUSTOMER, 'one');
    const err = await expectCloudError(client.sendText(CUSTOMER, 'two'));
    expect(err.code).toBe(CloudApiErrorCode.PairRateLimit);
    expect(classifyCloudApiError(err)).toEqual({ class: 'pair_rate', retryable: true, retryAfterMs: 6000 });
    await expect(client.sendText('4915199999999', 'other recipient')).resolves.toBeDefined();
  });

  it('132000 when template parameters do not match', async () => {
    await approvedTemplate();
    const err = await expectCloudError(
      client.sendTemplate(CUSTOMER, 'order_update', 'en_US', [
        { type: 'header', parameters: [{ type: 'text', text: 'A-7' }] },
        { type: 'body', parameters: [{ type: 'text', text: 'Ann' }] },
      ]),
    );
    expect(err.code).toBe(CloudApiErrorCode.ParameterMismatch);
    expect(err.details).toContain('(1) does not match the expected number of params (2)');
    expect(classifyCloudApiError(err).class).toBe('template');
  });

  it('132018 when a text parameter has a line break, a tab or more than 4 spaces in a row (as Meta)', async () => {
    await approvedTemplate();
    for (const text of ['Ann\nLee', 'Ann\tLee', 'Ann     Lee']) {
      const err = await expectCloudError(
        client.sendTemplate(CUSTOMER, 'order_update', 'en_US', [
          { type: 'header', parameters: [{ type: 'text', text: 'A-7' }] },
          {
            type: 'body',
            parameters: [
              { type: 'text', text },
              { type: 'text', text: 'Tue' },
            ],
          },
        ]),
      );
      expect(err.code).toBe(132018);
      expect(err.details).toContain('Param text cannot have new-line/tab characters or more than 4 consecutive spaces');
    }
  });

  it('132001 for a missing template, an unapproved one, or a wrong language', async () => {
    let err = await expectCloudError(client.sendTemplate(CUSTOMER, 'nope', 'en_US'));
    expect(err.code).toBe(CloudApiErrorCode.TemplateMissing);
    expect(err.httpStatus).toBe(404);
    await client.createTemplate({
      name: 'manual_pending',
      language: 'en',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'x' }],
    });
    err = await expectCloudError(client.sendTemplate(CUSTOMER, 'manual_pending', 'en'));
    expect(err.code).toBe(132001);
    expect(err.details).toContain('PENDING');
    await approvedTemplate();
    err = await expectCloudError(client.sendTemplate(CUSTOMER, 'order_update', 'de'));
    expect(err.code).toBe(132001);
  });

  it('190 without a token, and for a token the sandbox is told is expired', async () => {
    const noToken = new CloudApiClient({ ...client.connection, accessToken: '' });
    let err = await expectCloudError(noToken.sendText(CUSTOMER, 'x'));
    expect(err.code).toBe(CloudApiErrorCode.AccessToken);
    expect(err.httpStatus).toBe(401);
    expect(err.type).toBe('OAuthException');
    expect(classifyCloudApiError(err)).toEqual({ class: 'auth', retryable: false, retryAfterMs: undefined });
    await control('config', { invalidTokens: ['expired-token'] });
    err = await expectCloudError(
      new CloudApiClient({ ...client.connection, accessToken: 'expired-token' }).listTemplates(),
    );
    expect(err.code).toBe(190);
    expect(err.subcode).toBe(463);
  });

  it('100 Invalid parameter with details for a malformed message', async () => {
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' });
    const err = await expectCloudError(
      client.sendButtons(CUSTOMER, {
        body: 'too many',
        buttons: [1, 2, 3, 4].map((i) => ({ id: `b${i}`, title: `B${i}` })),
      }),
    );
    expect(err.code).toBe(CloudApiErrorCode.InvalidParameter);
    expect(err.details).toContain('1 to 3 buttons');
    expect(err.retryable).toBe(false);
    expect(err.fbtraceId).toBeTruthy();
  });

  it('network errors and timeouts are retryable CloudApiErrors', async () => {
    const down = new CloudApiClient({ ...client.connection, baseUrl: 'http://127.0.0.1:1' });
    const err = await expectCloudError(down.sendText(CUSTOMER, 'x'));
    expect(err.kind).toBe('network');
    expect(err.retryable).toBe(true);
    expect(classifyCloudApiError(err).class).toBe('transient');
    expect(answerLost(err)).toBe(false); // no connection: nothing went out
  });

  it('a connection closed after the request went out is connection_lost: the platform may have the message', async () => {
    await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hi' }); // the window is open
    await control('config', { droppedAnswers: 1 });
    const err = await expectCloudError(client.sendText(CUSTOMER, 'dropped'));
    expect(err.kind).toBe('connection_lost');
    expect(err.message).toMatch(/^Cloud API connection lost before its answer: /);
    expect(err.retryable).toBe(true);
    expect(answerLost(err)).toBe(true);
    const logged = (await control('messages')).data as Array<{ payload: any }>;
    expect(logged.filter((m) => m.payload.text?.body === 'dropped')).toHaveLength(1); // the platform took it
  });

  it('a platform that never answers is a retryable timeout after timeoutMs', async () => {
    const silent = createServer(() => undefined); // accepts the request, never responds
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = new CloudApiClient(
        { ...client.connection, baseUrl: `http://127.0.0.1:${port}` },
        { timeoutMs: 200 },
      );
      const started = Date.now();
      const err = await expectCloudError(slow.sendText(CUSTOMER, 'x'));
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe(`Cloud API request timed out after 200 ms: POST ${PHONE}/messages`);
      expect(err.retryable).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a transient template GET failure (control) is retryable', async () => {
    const id = await approvedTemplate();
    await control('templates/fail', { name: 'order_update' });
    const err = await expectCloudError(client.getTemplate(id));
    expect(err.code).toBe(2);
    expect(err.httpStatus).toBe(503);
    expect(err.retryable).toBe(true);
    await control('templates/fail', { name: 'order_update', fail: false });
    await expect(client.getTemplate(id)).resolves.toMatchObject({ id, status: 'APPROVED' });
  });
});

describe('phone number', () => {
  it('reads the connected number', async () => {
    await expect(client.getPhoneNumber()).resolves.toMatchObject({
      id: PHONE,
      display_phone_number: '15550001111',
      verified_name: expect.any(String),
      quality_rating: 'GREEN',
      throughput: { level: 'STANDARD' },
    });
  });
});

describe('templates', () => {
  it('create -> automatic review -> signed message_template_status_update webhook', async () => {
    const created = await client.createTemplate(greeting);
    expect(created).toEqual({ id: expect.any(String), status: 'PENDING', category: 'UTILITY' });
    const [hook] = await receiver.waitFor(
      (w) => w.body?.entry?.[0]?.changes?.[0]?.field === 'message_template_status_update',
    );
    expect(verifySignature(hook.rawBody, hook.headers['x-hub-signature-256'] as string, APP_SECRET)).toBe(true);
    expect(verifySignature(hook.rawBody, hook.headers['x-hub-signature-256'] as string, 'other-secret')).toBe(false);
    expect(hook.body.entry[0].id).toBe(WABA);
    expect(hook.body.entry[0].changes[0].value).toMatchObject({
      event: 'APPROVED',
      message_template_id: Number(created.id),
      message_template_name: 'order_update',
      message_template_language: 'en_US',
    });
    expect(parseWebhook(hook.body)).toEqual([
      expect.objectContaining({
        kind: 'template_status',
        templateId: created.id,
        templateName: 'order_update',
        event: 'APPROVED',
      }),
    ]);
    await expect(client.getTemplate(created.id)).resolves.toMatchObject({ status: 'APPROVED', name: 'order_update' });
  });

  it('names starting with reject_ are REJECTED with a reason', async () => {
    const created = await client.createTemplate({ ...greeting, name: 'reject_me' });
    const [hook] = await receiver.waitFor(
      (w) => w.body?.entry?.[0]?.changes?.[0]?.value?.message_template_name === 'reject_me',
    );
    expect(hook.body.entry[0].changes[0].value).toMatchObject({ event: 'REJECTED', reason: 'INVALID_FORMAT' });
    await expect(client.getTemplate(created.id)).resolves.toMatchObject({
      status: 'REJECTED',
      rejected_reason: 'INVALID_FORMAT',
    });
  });

  it("rejects a duplicate name + language with Meta's error", async () => {
    await client.createTemplate(greeting);
    const err = await expectCloudError(client.createTemplate(greeting));
    expect(err.code).toBe(100);
    expect(err.subcode).toBe(2388024);
    expect(err.userTitle).toBe('Message template already exists');
    await expect(client.createTemplate({ ...greeting, language: 'de' })).resolves.toMatchObject({ status: 'PENDING' });
  });

  it('validates the create shape (100 with details)', async () => {
    const err = await expectCloudError(
      client.createTemplate({
        name: 'vars',
        language: 'en',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: 'Hi {{1}}' }],
      }),
    );
    expect(err.code).toBe(100);
    expect(err.details).toContain('example');
  });

  it('lists with name filter and paging, edits (back to PENDING) and deletes', async () => {
    for (const n of ['alpha_one', 'alpha_two', 'alpha_three', 'beta_one']) {
      await client.createTemplate({
        name: n,
        language: 'en',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: n }],
      });
    }
    const page1 = await client.listTemplates({ name: 'alpha', limit: 2 });
    expect(page1.data.map((t) => t.name)).toEqual(['alpha_one', 'alpha_two']);
    expect(page1.paging?.next).toBeTruthy();
    const page2 = await client.listTemplates({ name: 'alpha', limit: 2, after: page1.paging!.cursors!.after });
    expect(page2.data.map((t) => t.name)).toEqual(['alpha_three']);
    expect(page2.paging?.next).toBeUndefined();
    expect((await client.listAllTemplates()).map((t) => t.name).sort()).toEqual([
      'alpha_one',
      'alpha_three',
      'alpha_two',
      'beta_one',
    ]);

    await control('templates/review', { name: 'beta_one', status: 'APPROVED' });
    const beta = (await client.listTemplates({ name: 'beta_one' })).data[0];
    expect(beta.status).toBe('APPROVED');
    await expect(
      client.editTemplate(beta.id, { components: [{ type: 'BODY', text: 'beta, edited' }] }),
    ).resolves.toEqual({ success: true });
    expect(await client.getTemplate(beta.id)).toMatchObject({
      status: 'PENDING',
      components: [{ type: 'BODY', text: 'beta, edited' }],
    });
    await receiver.waitFor((w) => w.body?.entry?.[0]?.changes?.[0]?.value?.message_template_name === 'beta_one', 2);

    await expect(client.deleteTemplate('beta_one')).resolves.toEqual({ success: true });
    expect((await client.listTemplates({ name: 'beta_one' })).data).toEqual([]);
    const err = await expectCloudError(client.getTemplate(beta.id));
    expect(err.code).toBe(100);
    expect((await expectCloudError(client.deleteTemplate('beta_one'))).code).toBe(100);
  });
});

describe('flows', () => {
  const goodFlow = {
    version: '6.0',
    screens: [{ id: 'WELCOME', terminal: true, layout: { type: 'SingleColumnLayout', children: [] } }],
  };

  it("create -> upload -> publish -> deprecate, with Meta's state rules", async () => {
    const { id } = await client.createFlow({ name: 'lead_form', categories: ['LEAD_GENERATION'] });
    expect(await client.getFlow(id)).toMatchObject({
      id,
      name: 'lead_form',
      status: 'DRAFT',
      categories: ['LEAD_GENERATION'],
      validation_errors: [],
    });

    // publishing without flow.json is refused
    expect((await expectCloudError(client.publishFlow(id))).code).toBe(CloudApiErrorCode.FlowPublishInvalidState);

    await expect(client.uploadFlowJson(id, goodFlow)).resolves.toEqual({ success: true, validation_errors: [] });
    await expect(client.publishFlow(id)).resolves.toEqual({ success: true });
    expect((await client.getFlow(id)).status).toBe('PUBLISHED');

    // published flows cannot be deleted, updated or published again
    expect((await expectCloudError(client.deleteFlow(id))).code).toBe(CloudApiErrorCode.FlowCantBeDeleted);
    expect((await expectCloudError(client.uploadFlowJson(id, goodFlow))).code).toBe(
      CloudApiErrorCode.FlowCantBeUpdated,
    );
    expect((await expectCloudError(client.publishFlow(id))).code).toBe(139002);

    await expect(client.deprecateFlow(id)).resolves.toEqual({ success: true });
    expect((await client.getFlow(id)).status).toBe('DEPRECATED');
    expect((await expectCloudError(client.deprecateFlow(id))).code).toBe(CloudApiErrorCode.FlowCantBeDeprecated);
    expect((await expectCloudError(client.deleteFlow(id))).code).toBe(139004);
  });

  it('reports validation errors and refuses to publish until fixed; drafts can be deleted', async () => {
    const { id } = await client.createFlow({ name: 'broken', categories: ['OTHER'] });
    let res = await client.uploadFlowJson(id, '{ not json');
    expect(res.success).toBe(true);
    expect(res.validation_errors[0]).toMatchObject({ error: 'INVALID_JSON' });

    res = await client.uploadFlowJson(id, { screens: [{ layout: {} }, { id: 'B' }] });
    expect(res.validation_errors.map((e) => e.message)).toEqual([
      "The property 'version' is required.",
      "The property 'id' is required in screens[0].",
      "The property 'layout' is required in screens[1].",
    ]);
    expect((await client.getFlow(id)).validation_errors).toHaveLength(3);
    const err = await expectCloudError(client.publishFlow(id));
    expect(err.code).toBe(139002);
    expect(err.details).toContain('validation error');

    await expect(client.deleteFlow(id)).resolves.toEqual({ success: true });
    expect((await expectCloudError(client.getFlow(id))).code).toBe(100);
  });

  it('flow names are unique per WABA', async () => {
    await client.createFlow({ name: 'same', categories: ['SURVEY'] });
    const err = await expectCloudError(client.createFlow({ name: 'same', categories: ['SURVEY'] }));
    expect(err.code).toBe(100);
    expect(err.details).toBe('Flow name is not unique');
  });
});

describe('inbound via the control API', () => {
  it('delivers text, button, interactive and nfm_reply messages as signed webhooks', async () => {
    const text = await control('inbound', { from: CUSTOMER, phone_number_id: PHONE, text: 'hello', name: 'Ann' });
    expect(text.webhook).toEqual({ statusCode: 200, error: null });
    await control('inbound', {
      from: CUSTOMER,
      phone_number_id: PHONE,
      button: { payload: 'STOP', text: 'Stop' },
      context_message_id: 'wamid.ctx1',
    });
    await control('inbound', {
      from: CUSTOMER,
      phone_number_id: PHONE,
      interactive: { button_reply: { id: 'yes', title: 'Yes' } },
    });
    await control('inbound', {
      from: CUSTOMER,
      phone_number_id: PHONE,
      interactive: {
        type: 'nfm_reply',
        nfm_reply: { response_json: { flow_token: 'tok-1', email: 'a@b.c' }, body: 'Sent', name: 'flow' },
      },
    });
    const hooks = await receiver.waitFor((w) => Boolean(w.body?.entry?.[0]?.changes?.[0]?.value?.messages), 4);
    for (const h of hooks)
      expect(verifySignature(h.rawBody, h.headers['x-hub-signature-256'] as string, APP_SECRET)).toBe(true);
    const events = hooks.flatMap((h) => parseWebhook(h.body));
    expect(events[0]).toMatchObject({
      kind: 'message',
      wamid: text.wamid,
      from: CUSTOMER,
      type: 'text',
      text: 'hello',
      profileName: 'Ann',
      phoneNumberId: PHONE,
    });
    expect(events[1]).toMatchObject({
      type: 'button',
      buttonPayload: 'STOP',
      buttonText: 'Stop',
      contextWamid: 'wamid.ctx1',
    });
    expect(events[2]).toMatchObject({
      type: 'interactive',
      interactiveType: 'button_reply',
      buttonPayload: 'yes',
      buttonText: 'Yes',
    });
    expect(events[3]).toMatchObject({
      type: 'interactive',
      interactiveType: 'nfm_reply',
      flowResponse: { flow_token: 'tok-1', email: 'a@b.c' },
    });
  });
});
