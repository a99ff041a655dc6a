import { computeSignature, CloudApiClient } from '@switchboard/whatsapp';
import type { Queue } from 'bullmq';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', `${name}.json`), 'utf8');

/** Meta's webhooks: verified over the raw body, stored, answered fast, processed idempotently by the worker. */
describe('Platform webhooks (/webhooks/whatsapp)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;

  beforeAll(async () => {
    t = await startTestApp({}, { worker: true });
    sandbox = await startTestSandbox(t, {
      statusDelaysMs: { sent: 20, delivered: 60, read: 120 },
      templateReviewDelayMs: 100,
    });
  });
  afterAll(async () => {
    await sandbox.close();
    await t.close();
  });
  beforeEach(async () => {
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });

  /** Posts a payload as Meta would, signed with the app secret (or `signature` when given). */
  const deliver = (body: string, signature = computeSignature(Buffer.from(body), t.config.WHATSAPP_APP_SECRET)) =>
    t.http.request('POST', '/webhooks/whatsapp', {
      body,
      headers: { 'content-type': 'application/json', ...(signature ? { 'x-hub-signature-256': signature } : {}) },
    });

  /** A fixture re-targeted at this test's phone number (and optionally another wamid / status / sender). */
  function payload(name: string, change: (value: any) => void = () => {}) {
    const body = JSON.parse(fixture(name));
    const value = body.entry[0].changes[0].value;
    if (value.metadata) value.metadata.phone_number_id = account.messagingPhoneId;
    change(value);
    return JSON.stringify(body);
  }

  async function storedOutbound(wamid: string | null, recipient = '15550001111', status = 'accepted') {
    const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
    const [row] = await t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, wamid) VALUES ($1, $2, 'outbound', $3, 'text', $5, $4) RETURNING id`,
      [account.accountId, phone.id, recipient, wamid, status],
    );
    return row.id as string;
  }

  const messageRow = async (id: string) => (await t.db.query('SELECT * FROM messages WHERE id = $1', [id]))[0];
  /** Waits until the worker has processed these stored events. */
  const processed = (eventIds: string[]) =>
    eventually(
      async () => {
        const [{ count }] = await t.db.query(
          'SELECT count(*) FROM platform_webhook_events WHERE id = ANY($1) AND processed_at IS NOT NULL',
          [eventIds],
        );
        return Number(count) === eventIds.length;
      },
      20_000,
      `${eventIds.length} webhooks processed`,
    );

  describe('GET verification handshake', () => {
    it('echoes hub.challenge for the right verify token', async () => {
      const res = await t.http.get(
        `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${t.config.WHATSAPP_VERIFY_TOKEN}&hub.challenge=1158201444`,
      );
      expect(res.status).toBe(200);
      expect(res.body).toBe(1158201444);
    });

    it('refuses a wrong verify token with 403', async () => {
      const res = await t.http.get('/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ message: 'Webhook verification failed' });
    });
  });

  describe('POST signature check', () => {
    it('answers 401 and stores nothing for a wrong or missing signature, another secret, or a tampered body', async () => {
      const before = Number((await t.db.query('SELECT count(*) FROM platform_webhook_events'))[0].count);
      const body = payload('message-text');
      for (const signature of ['sha256=' + '0'.repeat(64), '', computeSignature(Buffer.from(body), 'another-secret')]) {
        const res = await deliver(body, signature);
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ message: 'Invalid signature' });
      }
      // signed body, then one byte changed
      const tampered = await deliver(
        body.replace('"text"', '"text" '),
        computeSignature(Buffer.from(body), t.config.WHATSAPP_APP_SECRET),
      );
      expect(tampered.status).toBe(401);
      expect(Number((await t.db.query('SELECT count(*) FROM platform_webhook_events'))[0].count)).toBe(before);
    });

    it('accepts each Meta sample payload and stores it', async () => {
      for (const name of [
        'message-text',
        'message-button',
        'message-interactive-button-reply',
        'message-nfm-reply',
        'status-sent',
        'template-status-update',
        'account-update',
      ]) {
        const body = payload(
          name,
          (v) => v.messages && (v.messages[0].id = `wamid.fixture-${name}-${account.accountId}`),
        );
        const res = await deliver(body);
        expect(res.status).toBe(200);
        const [row] = await t.db.query('SELECT payload FROM platform_webhook_events WHERE id = $1', [res.body.eventId]);
        expect(row.payload).toEqual(JSON.parse(body)); // the body as received, whole
      }
    });

    it('verifies the raw bytes as Meta serialises them (\\uXXXX, \\/), not a re-serialisation', async () => {
      const wamid = `wamid.escaped-${account.accountId}`;
      const text = 'Grüße 👋 https://example.com/a';
      const body = payload('message-text', (v) => {
        v.messages[0].id = wamid;
        v.messages[0].text.body = text;
      });
      const metaBytes = body
        .replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
        .replace(/\//g, '\\/');
      expect(metaBytes).not.toBe(body);
      const signature = computeSignature(Buffer.from(metaBytes), t.config.WHATSAPP_APP_SECRET);
      // the signature of Meta's bytes does not fit the same JSON serialised otherwise
      expect((await deliver(body, signature)).status).toBe(401);
      const res = await deliver(metaBytes, signature);
      expect(res.status).toBe(200);
      await processed([res.body.eventId]);
      const [row] = await t.db.query('SELECT body FROM messages WHERE wamid = $1', [wamid]);
      expect(row.body).toBe(text);
    });

    it('the sandbox posts Meta-serialised bytes and they are accepted and stored as sent', async () => {
      const from = '4915166600011';
      await sandbox.control.post('/_sandbox/inbound', {
        from,
        phone_number_id: account.messagingPhoneId,
        text: 'Ça va? ✓ a/b',
      });
      const [hook] = (await sandbox.control.get('/_sandbox/webhooks?field=messages&limit=1')).body.data;
      expect(hook.statusCode).toBe(200);
      await eventually(
        async () =>
          (await t.db.query('SELECT body FROM messages WHERE recipient = $1', [from]))[0]?.body === 'Ça va? ✓ a/b',
        10_000,
        'stored',
      );
    });
  });

  describe('processing', () => {
    it('stores an inbound customer message once and opens the 24-hour window', async () => {
      const wamid = `wamid.inbound-${account.accountId}`;
      const body = payload('message-text', (v) => {
        v.messages[0].id = wamid;
        v.messages[0].from = '4915112345678';
        v.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
      });
      expect((await deliver(body)).status).toBe(200);
      expect((await deliver(body)).status).toBe(200); // Meta retries: same wamid

      const rows = await eventually(async () => {
        const found = await t.db.query(`SELECT * FROM messages WHERE wamid = $1`, [wamid]);
        return found.length ? found : null;
      });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        direction: 'inbound',
        recipient: '4915112345678',
        status: 'received',
        account_id: account.accountId,
      });
      const [window] = await t.db.query(
        `SELECT last_inbound_at FROM customer_windows w JOIN phone_numbers p ON p.id = w.phone_number_id WHERE p.messaging_phone_id = $1 AND w.customer = $2`,
        [account.messagingPhoneId, '4915112345678'],
      );
      expect(Date.now() - new Date(window.last_inbound_at).getTime()).toBeLessThan(60_000);
    });

    it('a Mexican customer whose WhatsApp id keeps the 1 after 52 writes first: their message goes to the contact stored without it', async () => {
      const contact = await t.http.post(
        '/contacts/create-contact',
        { contact_number: '+52 55 1234 5678', name: 'Luz' },
        { token: account.token },
      );
      expect(contact.status).toBe(200);
      const wamid = `wamid.mexico-${account.accountId}`;
      const res = await deliver(
        payload('message-text', (v) => {
          v.contacts[0].wa_id = '5215512345678';
          v.messages[0].id = wamid;
          v.messages[0].from = '5215512345678';
          v.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
          delete v.messages[0].context;
        }),
      );
      expect(res.status).toBe(200);
      await processed([res.body.eventId]);
      const [stored] = await t.db.query(`SELECT recipient, contact_id FROM messages WHERE wamid = $1`, [wamid]);
      expect(stored).toEqual({ recipient: '525512345678', contact_id: String(contact.body.data.contact.contact_id) });
      const contacts = await t.db.query(
        `SELECT contact_number FROM contacts WHERE account_id = $1 AND contact_number LIKE '52%'`,
        [account.accountId],
      );
      expect(contacts).toEqual([{ contact_number: '525512345678' }]);
    });

    it('a status of a message not sent here is skipped; the customer message beside it in the webhook is stored at once', async () => {
      // another app on the same business account sent wamid.not-ours (its statuses reach every subscribed app)
      const notOurs = `wamid.not-ours-${account.accountId}`;
      const wamid = `wamid.beside-${account.accountId}`;
      const text = JSON.parse(fixture('message-text')).entry[0].changes[0].value;
      const body = payload('status-sent', (v) => {
        v.statuses[0].id = notOurs; // its biz_opaque_callback_data is that app's ("order-42"), not one of our ids
        v.contacts = text.contacts;
        v.messages = text.messages;
        v.messages[0].id = wamid;
      });
      const res = await deliver(body);
      expect(res.status).toBe(200);
      await processed([res.body.eventId]);
      const [event] = await t.db.query('SELECT error FROM platform_webhook_events WHERE id = $1', [res.body.eventId]);
      expect(event.error).toBeNull();
      const stored = await t.db.query('SELECT wamid, direction, body FROM messages WHERE wamid = ANY($1)', [
        [wamid, notOurs],
      ]);
      expect(stored).toEqual([{ wamid, direction: 'inbound', body: text.messages[0].text.body }]);
    });

    it('a webhook stored but never queued (Redis away, the API killed in between) is queued again by the sweep', async () => {
      const { PeriodicSweeps } = await import('@switchboard/core');
      const { PlatformWebhooksService } = await import('@switchboard/messaging');
      expect(t.worker!.get(PeriodicSweeps, { strict: false }).registered).toContain('platform-webhook-requeue');
      const wamid = `wamid.requeued-${account.accountId}`;
      const body = payload('message-text', (v) => (v.messages[0].id = wamid));
      const insert = async (age: string, payload: string) =>
        String(
          (
            await t.db.query(
              `INSERT INTO platform_webhook_events (payload, received_at) VALUES ($1::jsonb, now() - $2::interval) RETURNING id`,
              [payload, age],
            )
          )[0].id,
        );
      const stranded = await insert('1 minute', body);
      const recent = await insert('0 seconds', '{}'); // its own job may still be on its way: left to it
      try {
        // the sweep's handler, run now rather than within the minute
        expect(
          await t.worker!.get(PlatformWebhooksService, { strict: false }).requeueUnprocessed(30_000),
        ).toBeGreaterThanOrEqual(1);
        await processed([stranded]);
        expect(await t.db.query('SELECT direction FROM messages WHERE wamid = $1', [wamid])).toEqual([
          { direction: 'inbound' },
        ]);
        const [left] = await t.db.query('SELECT processed_at FROM platform_webhook_events WHERE id = $1', [recent]);
        expect(left.processed_at).toBeNull();
      } finally {
        await t.db.query('DELETE FROM platform_webhook_events WHERE id = $1', [recent]);
      }
    });

    it('a webhook whose job failed for good without the failure being recorded (the database away for both) is processed by the sweep', async () => {
      const { PlatformWebhooksService, PlatformWebhookProcessor, PROCESS_WEBHOOK_JOB } =
        await import('@switchboard/messaging');
      const { QUEUES } = await import('@switchboard/core');
      const { getQueueToken } = await import('@nestjs/bullmq');
      const service = t.worker!.get(PlatformWebhooksService, { strict: false });
      const processor = t.worker!.get(PlatformWebhookProcessor, { strict: false });
      const queue = t.worker!.get<Queue>(getQueueToken(QUEUES.platformWebhooks), { strict: false });
      const wamid = `wamid.failed-for-good-${account.accountId}`;
      const [{ id }] = await t.db.query(
        `INSERT INTO platform_webhook_events (payload, received_at) VALUES ($1::jsonb, now() - interval '1 minute') RETURNING id::text`,
        [payload('message-text', (v) => (v.messages[0].id = wamid))],
      );
      const load = service.load.bind(service);
      const loadSpy = jest
        .spyOn(service, 'load')
        .mockImplementation((eventId) => (eventId === id ? Promise.reject(new Error('database away')) : load(eventId)));
      const events = (processor as unknown as { events: { update: (...args: unknown[]) => Promise<unknown> } }).events;
      const update = events.update.bind(events);
      const updateSpy = jest
        .spyOn(events, 'update')
        .mockImplementation((where: unknown, ...rest: unknown[]) =>
          (where as { id?: string }).id === id ? Promise.reject(new Error('database away')) : update(where, ...rest),
        );
      try {
        // its last attempt (one here, eight in production) fails, and so does recording why
        await queue.add(
          PROCESS_WEBHOOK_JOB,
          { eventId: id },
          { jobId: `event-${id}`, attempts: 1, removeOnFail: 1000 },
        );
        await eventually(async () => (await queue.getJobState(`event-${id}`)) === 'failed', 10_000, 'job failed');
      } finally {
        loadSpy.mockRestore();
        updateSpy.mockRestore();
      }
      const [before] = await t.db.query('SELECT processed_at, error FROM platform_webhook_events WHERE id = $1', [id]);
      expect(before).toEqual({ processed_at: null, error: null });
      expect(await service.requeueUnprocessed(30_000)).toBeGreaterThanOrEqual(1);
      await processed([id]);
      expect(await t.db.query('SELECT direction FROM messages WHERE wamid = $1', [wamid])).toEqual([
        { direction: 'inbound' },
      ]);
    });

    it('customer messages arriving at the same moment: each stored once, linked to its contact, each outbound message replied to once', async () => {
      const [ann, bob] = ['4915120000001', '4915120000002'];
      const annOrder = await storedOutbound(`wamid.ann-order-${account.accountId}`, ann);
      const bobOrder = await storedOutbound(`wamid.bob-order-${account.accountId}`, bob);
      const bobNewer = await storedOutbound(`wamid.bob-newer-${account.accountId}`, bob);
      const inbound = (wamid: string, from: string, context?: string, phoneNumberId = account.messagingPhoneId) =>
        payload('message-text', (v) => {
          v.metadata.phone_number_id = phoneNumberId;
          v.messages[0].id = wamid;
          v.messages[0].from = from;
          v.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
          if (context) v.messages[0].context = { from: '15550000000', id: context };
          else delete v.messages[0].context;
        });
      const wamid = (name: string) => `wamid.same-moment-${name}-${account.accountId}`;
      const bodies = [
        inbound(wamid('ann-1'), ann),
        inbound(wamid('ann-2'), ann),
        inbound(wamid('bob'), bob, `wamid.bob-order-${account.accountId}`),
        inbound(wamid('bob'), bob, `wamid.bob-order-${account.accountId}`), // Meta's retry, at the same moment
        inbound(wamid('stranger'), ann, undefined, '999000999000999'), // a number nobody connected
      ];
      const answers = await Promise.all(bodies.map((body) => deliver(body)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      const [{ ids }] = await t.db.query(
        `SELECT array_agg(id) AS ids FROM platform_webhook_events WHERE payload::text LIKE '%same-moment-%-' || $1 || '"%'`,
        [account.accountId],
      );
      expect(ids).toHaveLength(5);
      await processed(ids);

      const stored = await t.db.query(
        `SELECT wamid, recipient, contact_id FROM messages WHERE direction = 'inbound' AND wamid LIKE 'wamid.same-moment-%-' || $1 ORDER BY wamid`,
        [account.accountId],
      );
      expect(stored.map((m: { wamid: string }) => m.wamid)).toEqual([wamid('ann-1'), wamid('ann-2'), wamid('bob')]);
      const contacts = await t.db.query(
        `SELECT id, contact_number FROM contacts WHERE account_id = $1 AND contact_number = ANY($2) ORDER BY contact_number`,
        [account.accountId, [ann, bob]],
      );
      expect(contacts.map((c: { contact_number: string }) => c.contact_number)).toEqual([ann, bob]);
      expect(stored.map((m: { contact_id: string }) => m.contact_id)).toEqual([
        contacts[0].id,
        contacts[0].id,
        contacts[1].id,
      ]);
      // Ann's two messages answer her one order message once; Bob's answers the message it quotes, not his newer one
      expect((await messageRow(annOrder)).replied_at).not.toBeNull();
      expect((await messageRow(bobOrder)).replied_at).not.toBeNull();
      expect((await messageRow(bobNewer)).replied_at).toBeNull();
      const windows = await t.db.query(
        `SELECT w.customer FROM customer_windows w JOIN phone_numbers p ON p.id = w.phone_number_id
          WHERE p.messaging_phone_id = $1 ORDER BY w.customer`,
        [account.messagingPhoneId],
      );
      expect(windows.map((w: { customer: string }) => w.customer)).toEqual([ann, bob]);
    });

    it('a message without a quote answers the latest message the customer can have seen: not one still queued, paused, cancelled or failed', async () => {
      const cy = '4915120000003';
      const seen = await storedOutbound(`wamid.cy-seen-${account.accountId}`, cy, 'delivered');
      const never = [
        await storedOutbound(`wamid.cy-failed-${account.accountId}`, cy, 'failed'),
        await storedOutbound(null, cy, 'failed'),
        await storedOutbound(null, cy, 'cancelled'),
        await storedOutbound(null, cy, 'paused'),
        await storedOutbound(null, cy, 'queued'),
      ];
      const answer = await deliver(
        payload('message-text', (v) => {
          v.messages[0].id = `wamid.cy-reply-${account.accountId}`;
          v.messages[0].from = cy;
          v.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
          delete v.messages[0].context;
        }),
      );
      expect(answer.status).toBe(200);
      await processed([answer.body.eventId]);
      expect((await messageRow(seen)).replied_at).not.toBeNull();
      for (const id of never) expect((await messageRow(id)).replied_at).toBeNull();
    });

    it('a customer message Meta delivers late answers what they had seen when they wrote, not what was sent since', async () => {
      const di = '4915120000004';
      const before = await storedOutbound(`wamid.di-before-${account.accountId}`, di, 'read');
      await t.db.query(`UPDATE messages SET created_at = now() - interval '20 minutes' WHERE id = $1`, [before]);
      const since = await storedOutbound(`wamid.di-since-${account.accountId}`, di, 'delivered');
      await t.db.query(`UPDATE messages SET created_at = now() - interval '5 minutes' WHERE id = $1`, [since]);
      const written = Math.floor(Date.now() / 1000) - 600; // ten minutes ago: Meta held it (an incident, our API down)
      const answer = await deliver(
        payload('message-text', (v) => {
          v.messages[0].id = `wamid.di-late-${account.accountId}`;
          v.messages[0].from = di;
          v.messages[0].timestamp = String(written);
          delete v.messages[0].context;
        }),
      );
      expect(answer.status).toBe(200);
      await processed([answer.body.eventId]);
      expect((await messageRow(since)).replied_at).toBeNull();
      expect(new Date((await messageRow(before)).replied_at).getTime()).toBe(written * 1000);
    });

    it('a duplicate status delivery changes nothing; delivered after read leaves read; failed is final', async () => {
      const wamid = `wamid.mono-${account.accountId}`;
      const id = await storedOutbound(wamid);
      const status = (s: string, ts: number) =>
        payload('status-sent', (v) => {
          v.statuses[0].id = wamid;
          v.statuses[0].status = s;
          v.statuses[0].timestamp = String(ts);
        });
      const now = Math.floor(Date.now() / 1000);
      await deliver(status('read', now + 2));
      await eventually(async () => (await messageRow(id)).status === 'read');
      const readAt = (await messageRow(id)).read_at;

      const duplicate = await deliver(status('read', now + 5)); // same status again, later time
      const late = await deliver(status('delivered', now + 1));
      await processed([duplicate.body.eventId, late.body.eventId]);
      const row = await messageRow(id);
      expect(row.status).toBe('read');
      expect(row.read_at).toEqual(readAt);
      expect(new Date(row.delivered_at).getTime()).toBe((now + 1) * 1000);
    });

    it('100 concurrent webhooks for one message leave one consistent final state', async () => {
      const wamid = `wamid.burst-${account.accountId}`;
      const id = await storedOutbound(wamid);
      const now = Math.floor(Date.now() / 1000);
      const statuses = ['sent', 'delivered', 'read'];
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          deliver(
            payload('status-sent', (v) => {
              v.statuses[0].id = wamid;
              v.statuses[0].status = statuses[i % 3];
              v.statuses[0].timestamp = String(now + (i % 3));
            }),
          ),
        ),
      );
      expect(responses.every((r) => r.status === 200)).toBe(true);
      await processed(responses.map((r) => r.body.eventId));
      const row = await messageRow(id);
      expect(row.status).toBe('read');
      expect(new Date(row.sent_at).getTime()).toBe(now * 1000);
      expect(new Date(row.delivered_at).getTime()).toBe((now + 1) * 1000);
      expect(new Date(row.read_at).getTime()).toBe((now + 2) * 1000);
    });

    it('a failed status stores Meta error code and reason and is final', async () => {
      const wamid = `wamid.failed-${account.accountId}`;
      const id = await storedOutbound(wamid);
      await deliver(payload('status-failed', (v) => (v.statuses[0].id = wamid)));
      await eventually(async () => (await messageRow(id)).status === 'failed');
      await deliver(payload('status-sent', (v) => ((v.statuses[0].id = wamid), (v.statuses[0].status = 'read'))));
      await eventually(async () => (await messageRow(id)).read_at);
      const row = await messageRow(id);
      expect(row.status).toBe('failed');
      expect(row.error_code).toEqual(expect.any(Number));
      expect(row.error_title).toEqual(expect.any(String));
    });
  });

  it('end to end: the sandbox reviewer approves a template, its webhook makes it APPROVED', async () => {
    const name = `welcome_${account.accountId}`;
    const created = await t.http.post(
      '/templates/create',
      {
        template_name: name,
        category: 'UTILITY',
        language: 'en_US',
        messagingPhoneId: account.messagingPhoneId,
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Hello {{name}}, welcome!' },
              { type: 'variable', variable: { text: 'name', value: 'Ann' } },
            ],
          },
        ],
      },
      { token: account.token },
    );
    expect(created.body).toMatchObject({ success: true, data: { status: 'PENDING' } });
    // the sandbox approves after its review delay and posts message_template_status_update
    const approved = await eventually(
      async () => {
        const res = await t.http.get(`/templates/status?template_name=${name}`, { token: account.token });
        return res.body.data?.status === 'APPROVED' ? res : null;
      },
      15_000,
      'the template to be approved',
    );
    expect(approved.status).toBe(200);
    const [event] = await t.db.query(
      `SELECT type FROM account_events WHERE account_id = $1 AND type = 'template_status_update'`,
      [account.accountId],
    );
    expect(event).toBeDefined();
  });

  it('end to end: a message sent through the sandbox reaches read from its status webhooks; an inbound message marks it replied', async () => {
    const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
    const accounts = t.app.get((await import('@switchboard/accounts')).AccountsService);
    const client = new CloudApiClient(await accounts.connectionFor(phone.id));
    const customer = '4915100000001';

    // the sandbox enforces the 24-hour window for session messages: the customer writes first
    const inbound = await sandbox.control.post('/_sandbox/inbound', {
      from: customer,
      phone_number_id: account.messagingPhoneId,
      text: 'hi',
    });
    expect(inbound.status).toBe(200);
    await eventually(
      async () => (await t.db.query(`SELECT 1 FROM messages WHERE wamid = $1`, [inbound.body.wamid])).length,
    );

    const [row] = await t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status) VALUES ($1, $2, 'outbound', $3, 'text', 'queued') RETURNING id`,
      [account.accountId, phone.id, customer],
    );
    const sent = await client.sendText(customer, 'Your order has shipped');
    await t.db.query(`UPDATE messages SET wamid = $2, status = 'accepted' WHERE id = $1`, [
      row.id,
      sent.messages[0].id,
    ]);

    const final = await eventually(async () => {
      const m = await messageRow(row.id);
      return m.status === 'read' ? m : null;
    });
    expect(final.sent_at).not.toBeNull();
    expect(final.delivered_at).not.toBeNull();

    await sandbox.control.post('/_sandbox/inbound', {
      from: customer,
      phone_number_id: account.messagingPhoneId,
      text: 'thanks!',
      context_message_id: sent.messages[0].id,
    });
    await eventually(async () => (await messageRow(row.id)).replied_at);
  });

  describe('retention', () => {
    it('deletes processed and failed events older than the retention; unprocessed and recent ones stay', async () => {
      const { PlatformWebhooksService } = await import('@switchboard/messaging');
      const webhooks = t.worker!.get(PlatformWebhooksService, { strict: false });
      const insert = async (ageDays: number, state: 'processed' | 'failed' | 'unprocessed') => {
        const [{ id }] = await t.db.query(
          `INSERT INTO platform_webhook_events (payload, received_at, processed_at, error)
           VALUES ('{}', now() - make_interval(days => $1), CASE WHEN $2 = 'processed' THEN now() END, CASE WHEN $2 = 'failed' THEN 'boom' END)
           RETURNING id`,
          [ageDays, state],
        );
        return String(id);
      };
      // a retention of 30 days, so that the events other tests store (received now) are not touched
      const old = [await insert(40, 'processed'), await insert(35, 'failed')];
      const kept = [await insert(40, 'unprocessed'), await insert(20, 'processed')];
      expect(await webhooks.prune(30)).toBeGreaterThanOrEqual(2);
      const left = await t.db.query('SELECT id::text FROM platform_webhook_events WHERE id = ANY($1)', [
        [...old, ...kept],
      ]);
      expect(left.map((r: any) => r.id).sort()).toEqual([...kept].sort());
      await t.db.query('DELETE FROM platform_webhook_events WHERE id = ANY($1)', [kept]);
    });
  });
});
