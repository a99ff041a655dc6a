/**
 * Smoke test: two popular Node clients of the Cloud API, pointed at the sandbox, make the calls apps make most —
 * send a text and a template, upload media and read it back (metadata and bytes), list templates, read and update the
 * business profile — and get Meta's documented answers. (Dev dependencies of the test suite only.)
 */
import { WhatsAppClient } from '@kapso/whatsapp-cloud-api';
import { WhatsAppAPI } from 'whatsapp-api-js';
import { Language, Template, Text } from 'whatsapp-api-js/messages';
import { createSandbox, Sandbox } from './sandbox';
import { WebhookReceiver } from './testing/webhook-receiver';

const PHONE = '109000000000001';
const WABA = '209000000000001';
const CUSTOMER = '4915112345678';
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5b0000000049454e44ae426082',
  'hex',
);

let sandbox: Sandbox;
let receiver: WebhookReceiver;
let url: string;

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sandbox = createSandbox({
    quiet: true,
    webhookUrl: receiver.url,
    appSecret: 's',
    templateReviewDelayMs: 10,
    phoneNumbers: { [PHONE]: { wabaId: WABA } },
  });
  url = await sandbox.listen(0);
  // the customer wrote first: the 24-hour window is open
  await fetch(`${url}/_sandbox/inbound`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ from: CUSTOMER, phone_number_id: PHONE, text: 'hi' }),
  });
  const created = await fetch(`${url}/v24.0/${WABA}/message_templates`, {
    method: 'POST',
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'order_ready',
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Your order is ready.' }],
    }),
  });
  expect(created.status).toBe(200);
  await new Promise((r) => setTimeout(r, 50));
  await sandbox.flush();
});
afterAll(async () => {
  await sandbox.close();
  await receiver.stop();
});

const sent = async (to: string) =>
  (
    (await (await fetch(`${url}/_sandbox/messages?to=${to}`)).json()) as {
      data: Array<{ wamid: string; payload: any }>;
    }
  ).data;

describe('@kapso/whatsapp-cloud-api against the sandbox', () => {
  const client = () => new WhatsAppClient({ accessToken: 'sandbox-token', baseUrl: url, graphVersion: 'v24.0' });

  it('sends a text and a template; the answers carry Meta ids', async () => {
    const text = await client().messages.sendText({ phoneNumberId: PHONE, to: CUSTOMER, body: 'Hello from kapso' });
    expect(text.messages[0].id).toMatch(/^wamid\./);
    expect(text.contacts[0]).toMatchObject({ input: CUSTOMER, wa_id: CUSTOMER });
    const template = await client().messages.sendTemplate({
      phoneNumberId: PHONE,
      to: CUSTOMER,
      template: { name: 'order_ready', language: { code: 'en_US' } },
    });
    expect(template.messages[0]).toMatchObject({ id: expect.stringMatching(/^wamid\./), message_status: 'accepted' });
    const log = await sent(CUSTOMER);
    expect(log.map((m) => m.wamid)).toEqual(expect.arrayContaining([text.messages[0].id, template.messages[0].id]));
  });

  it('uploads media, reads its metadata and downloads the same bytes, deletes it', async () => {
    const uploaded = await client().media.upload({
      phoneNumberId: PHONE,
      type: 'image/png',
      file: new Blob([PNG], { type: 'image/png' }),
      fileName: 'dot.png',
    });
    expect(uploaded.id).toMatch(/^\d+$/);
    const meta = await client().media.get({ mediaId: uploaded.id });
    expect(meta).toMatchObject({
      messaging_product: 'whatsapp',
      mime_type: 'image/png',
      file_size: PNG.length,
      id: uploaded.id,
      url: expect.stringContaining('/whatsapp_business/attachments/'),
    });
    const bytes = await client().media.download({ mediaId: uploaded.id, auth: 'always' });
    expect(Buffer.from(bytes as ArrayBuffer).equals(PNG)).toBe(true);
    await client().media.delete({ mediaId: uploaded.id });
    await expect(client().media.get({ mediaId: uploaded.id })).rejects.toThrow();
  });

  it('lists templates and reads one by id', async () => {
    const list = await client().templates.list({ businessAccountId: WABA, limit: 10 });
    const found = list.data.find((t: any) => t.name === 'order_ready') as any;
    expect(found).toMatchObject({ name: 'order_ready', language: 'en_US', category: 'UTILITY', status: 'APPROVED' });
    const one = await client().templates.get({ businessAccountId: WABA, templateId: found.id });
    expect(one).toMatchObject({ id: found.id, name: 'order_ready' });
  });

  it('reads and updates the business profile', async () => {
    expect(
      await client().phoneNumbers.businessProfile.update({
        phoneNumberId: PHONE,
        about: 'Fresh bread daily',
        websites: ['https://example.com'],
        vertical: 'RETAIL',
      }),
    ).toMatchObject({ success: true });
    const profile = await client().phoneNumbers.businessProfile.get({
      phoneNumberId: PHONE,
      fields: 'about,websites,vertical',
    });
    expect(profile.data[0]).toMatchObject({
      about: 'Fresh bread daily',
      websites: ['https://example.com'],
      vertical: 'RETAIL',
      messaging_product: 'whatsapp',
    });
  });
});

describe('whatsapp-api-js against the sandbox', () => {
  /** The library calls https://graph.facebook.com; its fetch ponyfill sends those calls to the sandbox. */
  const api = () =>
    new WhatsAppAPI({
      token: 'sandbox-token',
      v: 'v24.0',
      secure: false,
      ponyfill: {
        fetch: (input: string | URL | Request, init?: RequestInit) =>
          fetch(String(input).replace('https://graph.facebook.com', url), init),
      },
    });

  it('sends a text and a template', async () => {
    const text = (await api().sendMessage(PHONE, CUSTOMER, new Text('Hello from whatsapp-api-js'))) as {
      messages?: Array<{ id: string }>;
    };
    expect(text.messages?.[0].id).toMatch(/^wamid\./);
    const template = (await api().sendMessage(PHONE, CUSTOMER, new Template('order_ready', new Language('en_US')))) as {
      messages?: Array<{ id: string }>;
    };
    expect(template.messages?.[0].id).toMatch(/^wamid\./);
    const log = await sent(CUSTOMER);
    expect(log.find((m) => m.wamid === template.messages?.[0].id)?.payload).toMatchObject({
      type: 'template',
      template: { name: 'order_ready', language: { code: 'en_US' } },
    });
  });

  it('uploads media, retrieves it and fetches the bytes', async () => {
    const form = new FormData();
    form.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');
    const uploaded = (await api().uploadMedia(PHONE, form)) as { id: string };
    expect(uploaded.id).toMatch(/^\d+$/);
    const meta = (await api().retrieveMedia(uploaded.id)) as unknown as {
      url: string;
      mime_type: string;
      file_size: number;
      sha256: string;
    };
    expect(meta).toMatchObject({
      messaging_product: 'whatsapp',
      mime_type: 'image/png',
      file_size: PNG.length,
      id: uploaded.id,
    });
    const res = await api().fetchMedia(meta.url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
  });
});
