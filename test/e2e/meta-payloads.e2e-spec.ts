import { computeSignature } from '@switchboard/whatsapp';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebhookReceiver } from '../../apps/sandbox/src/testing/webhook-receiver';
import { eventually } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * Every real payload collected in test/fixtures/meta/ (each file names its source) goes through the signed webhook
 * endpoint, and what was stored and called back is checked against the file's `expect`:
 * - messages: the stored inbound row (kind, body, content kept in payload), its contact, whether the 24-hour window
 *   opened and the outbound message was marked replied, and the `replied` callback (type, text, content);
 * - statuses: the outbound message's status and error; templates: status or category; others: stored, not acted upon.
 */
interface Fixture {
  source: string;
  payload: any;
  expect: {
    customer?: string;
    stored?: Record<string, unknown> & { payload?: Record<string, unknown> };
    contact?: { contact_number?: string | null; whatsapp_user_id?: string; has_number?: boolean };
    window?: boolean;
    replied?: boolean;
    callback?: Record<string, unknown>;
    status?: Record<string, unknown>;
    template?: { id: string; status?: string; rejected_reason?: string; category?: string; previous_category?: string };
    ignored?: boolean;
  };
}

const DIR = join(__dirname, '..', 'fixtures', 'meta');
const FIXTURES = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({
    name: file.replace(/\.json$/, ''),
    fixture: JSON.parse(readFileSync(join(DIR, file), 'utf8')) as Fixture,
  }));
const FIXTURE_PHONE_ID = '106540352242922';
const FIXTURE_CUSTOMER = '16505551234';

describe('Real WhatsApp payloads (test/fixtures/meta)', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: WebhookReceiver;
  let phoneRowId: string;
  let seq = 0;

  beforeAll(async () => {
    t = await startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }, { worker: true });
    account = await t.createAccount();
    receiver = new WebhookReceiver();
    await receiver.start();
    [{ id: phoneRowId }] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  it('holds every kind the brief names, each file with its source', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(35);
    for (const { name, fixture } of FIXTURES) {
      expect([name, typeof fixture.source, fixture.source.length > 10]).toEqual([name, 'string', true]);
      expect(fixture.payload.object).toBe('whatsapp_business_account');
    }
    const types = new Set(
      FIXTURES.flatMap(({ fixture }) =>
        fixture.payload.entry.flatMap((e: any) =>
          e.changes.flatMap((c: any) => (c.value.messages ?? []).map((m: any) => m.type)),
        ),
      ),
    );
    for (const type of [
      'text',
      'image',
      'audio',
      'video',
      'document',
      'sticker',
      'location',
      'contacts',
      'interactive',
      'button',
      'reaction',
      'order',
      'system',
      'unsupported',
      'revoke',
      'edit',
    ]) {
      expect([type, types.has(type)]).toEqual([type, true]);
    }
  });

  /** Posts the body as Meta would: the exact bytes, signed with the app secret. */
  async function deliver(body: string): Promise<string> {
    const res = await t.http.request('POST', '/webhooks/whatsapp', {
      body,
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': computeSignature(Buffer.from(body), t.config.WHATSAPP_APP_SECRET),
      },
    });
    expect(res.status).toBe(200);
    return String(res.body.eventId);
  }

  async function processed(eventId: string) {
    return eventually(
      async () => {
        const [row] = await t.db.query('SELECT processed_at, error FROM platform_webhook_events WHERE id = $1', [
          eventId,
        ]);
        return row?.processed_at ? row : null;
      },
      20_000,
      `webhook ${eventId} processed`,
    );
  }

  /** Our message to the customer, sent a minute before `before` (the collected message's own time) when given. */
  async function outbound(recipient: string, wamid: string, before?: string) {
    const [row] = await t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, wamid, callback_url, callback_events, created_at)
       VALUES ($1, $2, 'outbound', $3, 'text', 'accepted', $4, $5, '{replied,sent,delivered,read,failed}',
               COALESCE(to_timestamp($6::float8) - interval '1 minute', now())) RETURNING id`,
      [account.accountId, phoneRowId, recipient, wamid, receiver.url, before ?? null],
    );
    return String(row.id);
  }

  it.each(FIXTURES.map(({ name, fixture }) => [name, fixture] as const))('%s', async (name, fixture) => {
    const customer =
      fixture.expect.customer ?? `4915${String(Date.now() % 1e7).padStart(7, '0')}${String((seq++ % 90) + 10)}`;
    // re-targeted at this account's number and a fresh customer; the rest stays byte for byte as collected
    const retarget = (json: unknown) =>
      JSON.stringify(json)
        .split(FIXTURE_PHONE_ID)
        .join(account.messagingPhoneId)
        .split(FIXTURE_CUSTOMER)
        .join(customer);
    const body = retarget(fixture.payload);
    const payload = JSON.parse(body);
    const value = payload.entry[0].changes[0].value;
    const message = value.messages?.[0];
    const status = value.statuses?.[0];
    const ex: Fixture['expect'] = JSON.parse(retarget(fixture.expect));
    const inboundCount = async () =>
      (
        await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'inbound'`, [
          account.accountId,
        ])
      )[0].n;
    const inboundBefore = await inboundCount();

    const ourMessage =
      message && ex.stored
        ? await outbound(customer, `wamid.OUT-${name}`, message.timestamp)
        : status
          ? await outbound(customer, status.id)
          : null;
    if (ex.template) {
      await t.db.query(
        `INSERT INTO templates (account_id, phone_number_id, platform_template_id, name, language, category, status, components, platform_components)
         VALUES ($1, $2, $3, $4, 'en_US', 'UTILITY', 'PENDING', '[]', '[]')`,
        [account.accountId, phoneRowId, ex.template.id, `order_update_${ex.template.id}`],
      );
    }

    const event = await processed(await deliver(body));
    expect(event.error).toBeNull();

    if (ex.stored) {
      const [row] = await t.db.query(
        `SELECT m.kind, m.body, m.recipient, m.direction, m.status, m.context_wamid, m.payload, c.contact_number, c.whatsapp_user_id
           FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id WHERE m.wamid = $1`,
        [message.id],
      );
      expect(row).toBeDefined();
      const { payload: storedPayload, ...columns } = ex.stored;
      expect(row).toMatchObject({ direction: 'inbound', status: 'received', recipient: customer, ...columns });
      if (storedPayload) expect(row.payload).toMatchObject(storedPayload);
      // bound to a contact of this account: by number, or by the business-scoped user id
      if (ex.contact?.whatsapp_user_id) expect(row.whatsapp_user_id).toBe(ex.contact.whatsapp_user_id);
      if (ex.contact && 'contact_number' in ex.contact) expect(row.contact_number).toBe(ex.contact.contact_number);
      else expect(row.contact_number).toBe(customer);

      const windows = await t.db.query('SELECT 1 FROM customer_windows WHERE phone_number_id = $1 AND customer = $2', [
        phoneRowId,
        customer,
      ]);
      expect(['window opened', windows.length === 1]).toEqual(['window opened', ex.window]);
      const [{ replied_at }] = await t.db.query('SELECT replied_at FROM messages WHERE id = $1', [ourMessage]);
      expect(['replied', replied_at !== null]).toEqual(['replied', ex.replied]);

      const callbacks = () =>
        receiver.received.filter((w) => w.body?.messageId === ourMessage && w.body?.message !== undefined);
      if (ex.callback) {
        await eventually(async () => callbacks().length > 0, 10_000, 'replied callback');
        expect(callbacks()[0].body).toMatchObject({
          senderPhoneNumber: customer,
          messageId: ourMessage,
          ...ex.callback,
        });
      } else {
        await new Promise((r) => setTimeout(r, 300));
        expect(callbacks()).toEqual([]);
      }
    }

    if (ex.status) {
      const [row] = await t.db.query(
        'SELECT status, error_code, error_title, error_message FROM messages WHERE id = $1',
        [ourMessage],
      );
      expect(row).toMatchObject(ex.status);
      await eventually(
        async () =>
          receiver.received.some((w) => w.body?.messageId === ourMessage && w.body?.status === ex.status!.status),
        10_000,
        'status callback',
      );
    }

    if (ex.template) {
      const [row] = await t.db.query(
        'SELECT status, rejected_reason, category, previous_category FROM templates WHERE platform_template_id = $1',
        [ex.template.id],
      );
      const { id: _id, ...expected } = ex.template;
      expect(row).toMatchObject(expected);
    }

    if (ex.ignored)
      expect(await inboundCount()).toBe(inboundBefore); // stored in platform_webhook_events only
    else if (ex.stored) expect(await inboundCount()).toBe(inboundBefore + 1);
  });

  it('a redelivered payload is stored once and called back once', async () => {
    const { fixture } = FIXTURES.find((f) => f.name === 'message-location')!;
    const customer = '4915199887766';
    const body = JSON.stringify(fixture.payload)
      .split(FIXTURE_PHONE_ID)
      .join(account.messagingPhoneId)
      .split(FIXTURE_CUSTOMER)
      .join(customer)
      .split('wamid.HBgLMTY1')
      .join('wamid.AGAIN');
    const ours = await outbound(
      customer,
      'wamid.OUT-again',
      JSON.parse(body).entry[0].changes[0].value.messages[0].timestamp,
    );
    await processed(await deliver(body));
    await processed(await deliver(body));
    const wamid = JSON.parse(body).entry[0].changes[0].value.messages[0].id;
    expect(await t.db.query('SELECT 1 FROM messages WHERE wamid = $1', [wamid])).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter((w) => w.body?.messageId === ours && w.body?.message !== undefined)).toHaveLength(
      1,
    );
  });
});
