/**
 * The sandbox itself over real HTTP: Graph API conventions, control API, webhook delivery,
 * batching and caps. (The typed client's view is in libs/whatsapp/src/cloud-api.client.spec.ts.)
 */
import { createHmac } from 'node:crypto';
import { createSandbox, Sandbox } from './sandbox';
import { RateLimiter } from './state';
import { statusesOf, WebhookReceiver } from './testing/webhook-receiver';

const SECRET = 'spec-secret';
const PHONE = '100200300';
const WABA = '900800700';

let sandbox: Sandbox;
let receiver: WebhookReceiver;
let url: string;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, {
    method,
    headers: {
      ...(path.startsWith('/_sandbox') ? {} : { authorization: 'Bearer t' }),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const text = (to: string, body = 'hi') => ({ messaging_product: 'whatsapp', to, type: 'text', text: { body } });

/** The status webhooks of one message, once `count` of them arrived (the sandbox emits them after their delays). */
async function statusesFor(wamid: string, count: number) {
  const deadline = Date.now() + 2000;
  for (;;) {
    await sandbox.flush();
    const statuses = receiver.received.flatMap(statusesOf).filter((s) => s.id === wamid);
    if (statuses.length >= count || Date.now() > deadline) return statuses;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Outside the 24-hour window Meta accepts the send (200, a wamid) and reports a `failed` status with 131047, never `sent`. */
async function expectWindowClosed(phone: string, to: string) {
  const res = await call('POST', `/v21.0/${phone}/messages`, text(to));
  expect(res.status).toBe(200);
  const wamid = res.body.messages[0].id;
  const statuses = await statusesFor(wamid, 1);
  expect(statuses.map((s) => [s.status, (s.errors as any)?.[0]?.code])).toEqual([['failed', 131047]]);
  return statuses[0];
}

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
});
afterAll(() => receiver.stop());

beforeEach(async () => {
  receiver.clear();
  sandbox = createSandbox({
    quiet: true,
    webhookUrl: receiver.url,
    appSecret: SECRET,
    statusDelaysMs: { sent: 10, delivered: 20, read: 30 },
    tickMs: 5,
    templateReviewDelayMs: 20,
    phoneNumbers: { [PHONE]: { wabaId: WABA } },
  });
  url = await sandbox.listen(0);
});
afterEach(() => sandbox.close());

describe('Graph API conventions', () => {
  it("requires a bearer token: 190 / 401 in Meta's error shape", async () => {
    const res = await call('POST', `/v21.0/${PHONE}/messages`, text('4911111'), { authorization: '' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { message: expect.any(String), type: 'OAuthException', code: 190, fbtrace_id: expect.any(String) },
    });
  });

  it('accepts any vN.N version and refuses others', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    expect((await call('POST', `/v19.0/${PHONE}/messages`, text('4911111'))).status).toBe(200);
    const bad = await call('POST', `/latest/${PHONE}/messages`, text('4911111'));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(2500);
    expect((await call('GET', '/v21.0/a/b/c/d')).body.error.code).toBe(2500);
  });

  it('serves unversioned paths like the Graph API (the default version)', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    const sent = await call('POST', `/${PHONE}/messages`, text('4911111'));
    expect(sent.status).toBe(200);
    expect(sent.body.messages[0].id).toMatch(/^wamid\./);
    expect((await call('GET', `/${PHONE}`)).body).toMatchObject({ id: PHONE, platform_type: 'CLOUD_API' });
    expect((await call('GET', `/${WABA}/message_templates?limit=1`)).status).toBe(200);
  });

  it('honours fields= on GETs: id plus the named fields, per item in lists', async () => {
    expect((await call('GET', `/v21.0/${PHONE}?fields=display_phone_number,quality_rating`)).body).toEqual({
      id: PHONE,
      display_phone_number: expect.any(String),
      quality_rating: 'GREEN',
    });
    await call('POST', `/v21.0/${WABA}/message_templates`, {
      name: 'fields_probe',
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Hello' }],
    });
    const list = (await call('GET', `/v21.0/${WABA}/message_templates?fields=name,status`)).body;
    expect(list.data).toEqual([
      { id: expect.any(String), name: 'fields_probe', status: expect.stringMatching(/^(PENDING|APPROVED)$/) },
    ]);
    expect(list.paging).toBeDefined();
  });

  it('validation errors are 100 with error_data.details', async () => {
    const res = await call('POST', `/v21.0/${PHONE}/messages`, {
      messaging_product: 'whatsapp',
      to: '4911111',
      type: 'text',
      text: {},
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 100,
      type: 'OAuthException',
      error_data: { messaging_product: 'whatsapp', details: 'text.body is required' },
    });
    expect(
      (await call('POST', `/v21.0/${PHONE}/messages`, { to: '4911111', text: { body: 'x' } })).body.error.code,
    ).toBe(100);
    expect(
      (await call('POST', `/v21.0/${PHONE}/messages`, { ...text('4911111'), type: 'carrier_pigeon' })).body.error.code,
    ).toBe(100);
  });

  it("accepts flow.json as Meta's multipart upload and as a JSON body", async () => {
    const flow = (await call('POST', `/v21.0/${WABA}/flows`, { name: 'f', categories: ['OTHER'] })).body;
    const form = new FormData();
    form.set('name', 'flow.json');
    form.set('asset_type', 'FLOW_JSON');
    form.set('file', new Blob(['{"version":"6.0","screens":[{"id":"A","layout":{}}]}']), 'flow.json');
    const multipart = await fetch(`${url}/v21.0/${flow.id}/assets`, {
      method: 'POST',
      headers: { authorization: 'Bearer t' },
      body: form,
    });
    expect(await multipart.json()).toEqual({ success: true, validation_errors: [] });
    const json = await call('POST', `/v21.0/${flow.id}/assets`, {
      name: 'flow.json',
      asset_type: 'FLOW_JSON',
      file: { version: '6.0' },
    });
    expect(json.body.validation_errors).toEqual([
      expect.objectContaining({ message: "The property 'screens' is required." }),
    ]);
    const flows = (await call('GET', '/_sandbox/flows')).body.data;
    expect(flows[0].flow_json).toBe('{"version":"6.0"}');
  });
});

describe('webhooks', () => {
  it('signs the exact raw body with the app secret', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    const [hook] = await receiver.waitFor(() => true);
    const expected = 'sha256=' + createHmac('sha256', SECRET).update(hook.rawBody).digest('hex');
    expect(hook.headers['x-hub-signature-256']).toBe(expected);
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.body.object).toBe('whatsapp_business_account');
    const log = (await call('GET', '/_sandbox/webhooks')).body.data;
    expect(log).toEqual([
      expect.objectContaining({ field: 'messages', statusCode: 200, error: null, signature: expected }),
    ]);
  });

  it("serialises bodies as Meta does: non-ASCII as \\uXXXX, '/' as '\\/'", async () => {
    await call('POST', '/_sandbox/inbound', {
      from: '4911111',
      phone_number_id: PHONE,
      text: 'Grüße 👋 https://example.com/a',
    });
    const [hook] = await receiver.waitFor(() => true);
    const raw = hook.rawBody.toString('latin1');
    expect(raw).toContain('Gr\\u00fc\\u00dfe \\ud83d\\udc4b https:\\/\\/example.com\\/a');
    expect(/[^\x00-\x7f]/.test(raw)).toBe(false);
    expect(hook.body.entry[0].changes[0].value.messages[0].text.body).toBe('Grüße 👋 https://example.com/a');
    // a receiver that re-serialised the parsed body would check other bytes
    expect(Buffer.from(JSON.stringify(hook.body)).equals(hook.rawBody)).toBe(false);
  });

  it('entry id is a numeric WABA id, also for a number the sandbox has no WABA for', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: '555000111', text: 'hi' });
    const [hook] = await receiver.waitFor(() => true);
    expect(hook.body.entry[0].id).toMatch(/^\d{15}$/);
  });

  it('a receiver that is down or failing is logged, not fatal', async () => {
    receiver.status = 500;
    const res = await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    expect(res.body.webhook).toEqual({ statusCode: 500, error: 'HTTP 500' });
    await call('POST', '/_sandbox/config', { webhookUrl: 'http://127.0.0.1:1/nowhere' });
    const down = await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'again' });
    expect(down.status).toBe(200);
    expect(down.body.webhook.statusCode).toBeNull();
    expect(down.body.webhook.error).toBeTruthy();
    const stats = (await call('GET', '/_sandbox/stats')).body;
    expect(stats.webhooksFailed).toBe(2);
    expect(stats.rejected).toEqual({}); // only Graph API refusals are counted
    // and the sandbox keeps working
    expect((await call('POST', `/v21.0/${PHONE}/messages`, text('4911111'))).status).toBe(200);
  });

  it('with webhookRetries, a failed delivery is tried again (doubling delays) until the receiver takes it', async () => {
    let attempts = 0;
    receiver.answer = () => (++attempts <= 2 ? 503 : 200);
    await call('POST', '/_sandbox/config', { webhookRetries: 3, webhookRetryDelayMs: 20 });
    const res = await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    expect(res.body.webhook).toEqual({ statusCode: 200, error: null });
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((w) => w.rawBody.toString()))).toHaveProperty('size', 1); // the same body
    expect((await call('GET', '/_sandbox/stats')).body).toMatchObject({ webhooksFailed: 2, webhooksDelivered: 1 });

    // out of retries: the last failure is the answer
    receiver.answer = () => 500;
    const failed = await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'again' });
    expect(failed.body.webhook).toEqual({ statusCode: 500, error: 'HTTP 500' });
    expect(receiver.received).toHaveLength(3 + 4);
  });

  it('batches statuses of one number into one webhook when configured, or turns them off', async () => {
    // a ticker that does not fire during the test: flush() ticks by hand, deterministically
    await call('POST', '/_sandbox/config', {
      tickMs: 60_000,
      statusBatchSize: 50,
      statusDelaysMs: { sent: 30, delivered: 60, read: null },
    });
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    receiver.clear();
    const wamids = [];
    for (let i = 0; i < 10; i++)
      wamids.push((await call('POST', `/v21.0/${PHONE}/messages`, text('4911111', `m${i}`))).body.messages[0].id);
    await new Promise((r) => setTimeout(r, 150));
    await sandbox.flush(); // all 10 "sent" are due: one webhook
    await sandbox.flush(); // then all 10 "delivered": one webhook
    const statuses = receiver.received.flatMap(statusesOf);
    expect(
      statuses
        .filter((s) => s.status === 'sent')
        .map((s) => s.id)
        .sort(),
    ).toEqual([...wamids].sort());
    expect(statuses.filter((s) => s.status === 'delivered')).toHaveLength(10);
    expect(statuses.filter((s) => s.status === 'read')).toHaveLength(0); // read: null
    expect(receiver.received).toHaveLength(2); // batched: 10 statuses per webhook

    await call('POST', '/_sandbox/config', { statusWebhooks: false });
    receiver.clear();
    await call('POST', `/v21.0/${PHONE}/messages`, text('4911111'));
    await new Promise((r) => setTimeout(r, 100));
    await sandbox.flush();
    expect(receiver.received).toHaveLength(0);
  });

  it('manual_ templates wait for the reviewer; the control API decides and the webhook is sent', async () => {
    const created = (
      await call('POST', `/v21.0/${WABA}/message_templates`, {
        name: 'manual_offer',
        language: 'en',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: 'Offer' }],
      })
    ).body;
    await new Promise((r) => setTimeout(r, 60));
    expect((await call('GET', `/v21.0/${created.id}`)).body.status).toBe('PENDING');
    const review = await call('POST', '/_sandbox/templates/review', {
      name: 'manual_offer',
      status: 'REJECTED',
      reason: 'SCAM',
    });
    expect(review.body.templates[0]).toMatchObject({
      status: 'REJECTED',
      rejected_reason: 'SCAM',
      webhook: { statusCode: 200 },
    });
    const [hook] = await receiver.waitFor((w) => w.body.entry[0].changes[0].field === 'message_template_status_update');
    expect(hook.body.entry[0].changes[0].value).toMatchObject({
      event: 'REJECTED',
      reason: 'SCAM',
      message_template_name: 'manual_offer',
    });
    expect((await call('GET', '/_sandbox/templates')).body.data[0]).toMatchObject({
      name: 'manual_offer',
      status: 'REJECTED',
      waba_id: WABA,
    });
  });
});

describe('template review', () => {
  it('an edit is reviewed in its own time: the review scheduled by the create does not approve it early', async () => {
    await call('POST', '/_sandbox/config', { templateReviewDelayMs: 1000 });
    const created = (
      await call('POST', `/v21.0/${WABA}/message_templates`, {
        name: 'offer_edit',
        language: 'en',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: 'Offer' }],
      })
    ).body;
    await new Promise((r) => setTimeout(r, 600));
    await call('POST', `/v21.0/${created.id}`, { components: [{ type: 'BODY', text: 'Offer, edited' }] });
    await new Promise((r) => setTimeout(r, 600)); // the create's review was due 200 ms ago, the edit's in 400 ms
    expect((await call('GET', `/v21.0/${created.id}`)).body.status).toBe('PENDING');
    await new Promise((r) => setTimeout(r, 800));
    expect((await call('GET', `/v21.0/${created.id}`)).body.status).toBe('APPROVED');
  });
});

describe('control API', () => {
  it('reads sent messages by recipient and number, newest last, with the payload', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    await call('POST', '/_sandbox/inbound', { from: '4922222', phone_number_id: 'other', text: 'hi' });
    await call('POST', `/v21.0/${PHONE}/messages`, text('4911111', 'one'));
    await call('POST', `/v21.0/other/messages`, text('4922222', 'two'));
    await call('POST', `/v21.0/${PHONE}/messages`, text('+49 111 11', 'three'));
    const mine = (await call('GET', `/_sandbox/messages?to=4911111&phone_number_id=${PHONE}`)).body.data;
    expect(mine.map((m: any) => m.payload.text.body)).toEqual(['one', 'three']);
    expect(mine[0]).toMatchObject({
      wamid: expect.stringMatching(/^wamid\./),
      to: '4911111',
      phone_number_id: PHONE,
      type: 'text',
    });
    expect((await call('GET', '/_sandbox/messages')).body.data).toHaveLength(3);
  });

  it('caps the sent-message log', async () => {
    await call('POST', '/_sandbox/config', { messageLogLimit: 3, statusWebhooks: false, defaultMessagesPerSecond: 0 });
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    for (let i = 0; i < 7; i++) await call('POST', `/v21.0/${PHONE}/messages`, text('4911111', `m${i}`));
    const data = (await call('GET', '/_sandbox/messages')).body.data;
    expect(data.map((m: any) => m.payload.text.body)).toEqual(['m4', 'm5', 'm6']);
    expect((await call('GET', '/_sandbox/stats')).body.accepted).toBe(7);
    await call('POST', `/v21.0/${PHONE}/messages`, text('4933333'));
    expect((await call('GET', '/_sandbox/stats')).body.rejected).toEqual({ 131047: 1 });
  });

  it('messageLogPayloads: false logs the envelope of each message without its body', async () => {
    await call('POST', '/_sandbox/config', { messageLogPayloads: false, statusWebhooks: false });
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    await call('POST', `/v21.0/${PHONE}/messages`, text('4911111', 'one'));
    const [m] = (await call('GET', '/_sandbox/messages')).body.data;
    expect(m).toEqual({
      wamid: expect.stringMatching(/^wamid\./),
      phone_number_id: PHONE,
      to: '4911111',
      type: 'text',
      acceptedAt: expect.any(String),
    });
    expect((await call('POST', '/_sandbox/config', { messageLogPayloads: 'no' })).status).toBe(400);
  });

  it('validates config and resets state', async () => {
    expect((await call('POST', '/_sandbox/config', { nope: 1 })).status).toBe(400);
    expect((await call('POST', '/_sandbox/config', { statusBatchSize: 'x' })).status).toBe(400);
    const cfg = (await call('POST', '/_sandbox/config', { messagesPerSecond: { a: 5 }, statusDelaysMs: { read: 999 } }))
      .body;
    expect(cfg.messagesPerSecond).toEqual({ a: 5 });
    expect(cfg.statusDelaysMs).toEqual({ sent: 10, delivered: 20, read: 999 });
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    await call('POST', `/v21.0/${PHONE}/messages`, text('4911111'));
    await call('POST', '/_sandbox/reset', {});
    expect((await call('GET', '/_sandbox/messages')).body.data).toEqual([]);
    // the window is gone too
    await expectWindowClosed(PHONE, '4911111');
    expect((await call('GET', '/_sandbox/config')).body.statusDelaysMs.read).toBe(999);
    await call('POST', '/_sandbox/reset', { config: true });
    expect((await call('GET', '/_sandbox/config')).body.statusDelaysMs.read).toBe(30);
  });

  it('inbound requires from, phone_number_id and one content', async () => {
    expect((await call('POST', '/_sandbox/inbound', { phone_number_id: PHONE, text: 'x' })).status).toBe(400);
    expect((await call('POST', '/_sandbox/inbound', { from: '49', phone_number_id: PHONE })).status).toBe(400);
  });

  it('a window opened on one number does not open it on another', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    await expectWindowClosed('another', '4911111');
  });

  it('131047 as Meta: 200 with a wamid, then one failed status webhook carrying the error', async () => {
    const failed = await expectWindowClosed(PHONE, '4977777');
    expect(failed).toMatchObject({
      status: 'failed',
      recipient_id: '4977777',
      errors: [
        {
          code: 131047,
          title: 'Re-engagement message',
          message: 'Re-engagement message',
          error_data: { details: expect.stringContaining('24 hours') },
        },
      ],
    });
    expect(failed.conversation).toBeUndefined();
    expect(failed.pricing).toBeUndefined();
  });

  it('statuses as from v24.0: pricing without a conversation object', async () => {
    await call('POST', '/_sandbox/inbound', { from: '4911111', phone_number_id: PHONE, text: 'hi' });
    const res = await call('POST', `/v21.0/${PHONE}/messages`, text('4911111'));
    const statuses = await statusesFor(res.body.messages[0].id, 3);
    const sent = statuses.find((s) => s.status === 'sent')!;
    expect(sent).toEqual({
      id: res.body.messages[0].id,
      status: 'sent',
      timestamp: expect.stringMatching(/^\d+$/),
      recipient_id: '4911111',
      pricing: { billable: true, pricing_model: 'PMP', category: 'service', type: 'free_customer_service' },
    });
  });
});

describe('load shape', () => {
  it('2,000 unlimited sends with batched statuses: every status delivered, log capped', async () => {
    await call('POST', '/_sandbox/config', {
      defaultMessagesPerSecond: 0,
      enforceCustomerCareWindow: false,
      messageLogLimit: 500,
      statusBatchSize: 100,
      statusDelaysMs: { sent: 0, delivered: 0, read: null },
    });
    const n = 2000;
    for (let i = 0; i < n; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => call('POST', `/v21.0/${PHONE}/messages`, text(`49170${i + j}`))),
      );
    }
    await new Promise((r) => setTimeout(r, 50));
    await sandbox.flush();
    await sandbox.flush();
    const statuses = receiver.received.flatMap(statusesOf);
    expect(statuses.filter((s) => s.status === 'sent')).toHaveLength(n);
    expect(statuses.filter((s) => s.status === 'delivered')).toHaveLength(n);
    expect((await call('GET', '/_sandbox/messages')).body.data).toHaveLength(500);
    expect((await call('GET', '/_sandbox/stats')).body).toMatchObject({
      accepted: n,
      pendingStatuses: 0,
      pendingWebhooks: 0,
    });
  });
});

describe('RateLimiter (sliding 1 s window)', () => {
  it('allows `limit` per rolling second', () => {
    const r = new RateLimiter();
    expect([0, 10, 20].map((t) => r.tryTake('p', 2, t))).toEqual([true, true, false]);
    expect(r.tryTake('p', 2, 999)).toBe(false);
    expect(r.tryTake('p', 2, 1000)).toBe(true); // the send at t=0 left the window
    expect(r.tryTake('p', 2, 1005)).toBe(false);
    expect(r.tryTake('p', 2, 1010)).toBe(true);
    expect(r.tryTake('q', 2, 1010)).toBe(true); // per number
    expect(r.tryTake('p', 0, 1010)).toBe(true); // 0 = unlimited
  });
});

describe('CappedLog', () => {
  it('keeps the newest entries in order, also when the limit changes after wrapping', () => {
    const { CappedLog } = jest.requireActual('./state') as typeof import('./state');
    const log = new CappedLog<number>(3);
    [1, 2, 3, 4, 5].forEach((n) => log.add(n));
    expect(log.toArray()).toEqual([3, 4, 5]);
    log.limit = 5;
    [6, 7].forEach((n) => log.add(n));
    expect(log.toArray()).toEqual([3, 4, 5, 6, 7]);
    log.limit = 2;
    log.add(8);
    expect(log.toArray()).toEqual([7, 8]);
  });
});
