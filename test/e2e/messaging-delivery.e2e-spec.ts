import { getQueueToken } from '@nestjs/bullmq';
import { ContactsService } from '@switchboard/contacts';
import { QUEUES } from '@switchboard/core';
import type { Queue } from 'bullmq';
import { CallbacksService, SEND_BATCH_JOB, SEND_JOB, sendJobOptions } from '@switchboard/messaging';
import { computeSignature } from '@switchboard/whatsapp';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebhookReceiver } from '../../apps/sandbox/src/testing/webhook-receiver';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** Per-message callbacks (SPEC §6), pacing per number, retries, conversations, reconciliation of lost answers. */
describe('Message delivery: callbacks, pacing, retries, conversations', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let h: ReturnType<typeof messagingHelpers>;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp(
      {
        RATE_LIMIT_PER_MINUTE: '100000',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        SEND_WAIT_TIMEOUT_MS: '15000',
        // the jitter budget of a machine running two test files on 2 cores: with the default 20 ms, one send in 20 at
        // 5/s reached the sandbox in the same second as five others (a 130429) in a CI-shaped run
        SEND_PACING_MARGIN_MS: '100',
      },
      { worker: true },
    );
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 60, read: 120 }, autoReview: false });
    h = messagingHelpers(t, () => sandbox);
    receiver = new WebhookReceiver();
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop?.();
    await sandbox.close();
    await t.close();
  });
  beforeEach(async () => {
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });

  const session = (body: Record<string, unknown>, acc = account) =>
    t.http.post(`/v1/send-message/${acc.messagingPhoneId}`, body, { token: acc.token });
  const template = (body: unknown, acc = account) =>
    t.http.post(`/send-message/${acc.messagingPhoneId}`, body, { token: acc.token });
  const callbacksFor = (messageId: string) => receiver.received.filter((w) => w.body?.messageId === messageId);
  const settle = async () => {
    await sandbox.control.post('/_sandbox/webhooks/flush', {});
    await new Promise((r) => setTimeout(r, 500));
  };

  describe('callbacks', () => {
    it('POSTs exactly the subscribed events, once each, signed with the account secret shown by GET /account/get', async () => {
      // (timeouts are generous: the suite also runs on a shared, busy machine)
      const to = h.customer();
      await h.customerWrites(account, to);
      const res = await session({
        typOfmsg: 'normal_message',
        receipentPhone: to,
        message: 'Hello',
        callback_url: receiver.url,
        event: ['delivered', 'read', 'replied'],
      });
      expect(res.status).toBe(200);
      const id = res.body.messageId;
      await eventually(async () => callbacksFor(id).length >= 2, 20_000, 'delivered and read callbacks');

      const [sent] = await h.received(account, to);
      await h.customerWrites(account, to, 'Thanks, got it', { context_message_id: sent.wamid });
      await eventually(async () => callbacksFor(id).length >= 3, 20_000, 'replied callback');
      await settle();

      const got = callbacksFor(id);
      expect(got.map((w) => w.body.status ?? 'replied').sort()).toEqual(['delivered', 'read', 'replied']);
      const delivered = got.find((w) => w.body.status === 'delivered')!;
      expect(delivered.body).toEqual({
        status: 'delivered',
        senderPhoneNumber: to,
        messageId: id,
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      const replied = got.find((w) => w.body.message !== undefined)!;
      expect(replied.body).toEqual({
        message: 'Thanks, got it',
        senderPhoneNumber: to,
        messageId: id,
        timestamp: expect.any(String),
        type: 'text',
      });

      const secret = (await t.http.get('/account/get', { token: account.token })).body.data.callback_signing_secret;
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      for (const w of got) {
        const timestamp = w.headers['x-switchboard-timestamp'] as string;
        expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(60);
        const expected =
          'sha256=' +
          createHmac('sha256', secret)
            .update(`${timestamp}.${w.rawBody.toString('utf8')}`)
            .digest('hex');
        expect(w.headers['x-switchboard-signature']).toBe(expected);
        expect(w.headers['content-type']).toBe('application/json');
      }
    }, 60_000);

    it('sent and failed for an undeliverable number (template message)', async () => {
      const name = await h.approvedTemplate(account, [h.body('Your parcel is ready.')]);
      const to = `49171234${String(Date.now() % 10)}0000`;
      const res = await template({ templateName: name, to, callback_url: receiver.url, event: ['sent', 'failed'] });
      expect(res.status).toBe(200);
      const id = res.body.results[0].messageId;
      await eventually(async () => callbacksFor(id).length >= 2, 20_000, 'sent and failed callbacks');
      await settle();
      // two callbacks ~40 ms apart, through queues that run many at once: their order is not promised
      expect(
        callbacksFor(id)
          .map((w) => w.body.status)
          .sort(),
      ).toEqual(['failed', 'sent']);
      const [row] = await t.db.query('SELECT status, error_code FROM messages WHERE id = $1', [id]);
      expect(row).toEqual({ status: 'failed', error_code: 131026 });
    }, 60_000);

    it('a message failed by the platform at send time calls back `failed` once', async () => {
      const to = h.customer(); // window closed
      const res = await session({
        typOfmsg: 'normal_message',
        receipentPhone: to,
        message: 'x',
        callback_url: receiver.url,
        event: ['failed', 'sent'],
      });
      expect(res.status).toBe(500);
      await eventually(async () => callbacksFor(res.body.messageId).length >= 1, 20_000, 'failed callback');
      await settle();
      expect(callbacksFor(res.body.messageId).map((w) => w.body.status)).toEqual(['failed']);
    });

    it('without event no callback is sent (SPEC §6: only kinds listed in event)', async () => {
      const to = h.customer();
      await h.customerWrites(account, to);
      const res = await session({
        typOfmsg: 'normal_message',
        receipentPhone: to,
        message: 'quiet',
        callback_url: receiver.url,
      });
      expect(res.status).toBe(200);
      await eventually(
        async () =>
          (await t.db.query('SELECT status FROM messages WHERE id = $1', [res.body.messageId]))[0].status === 'read',
      );
      await settle();
      expect(callbacksFor(res.body.messageId)).toHaveLength(0);
    });

    describe('a reply whose follow-up failed after it was stored is finished by the retry', () => {
      /**
       * A sent message subscribed to `replied`, then `fail` injected (it returns its undo), then the customer's reply:
       * what was linked and called back.
       */
      async function replyTo(text: string, fail: () => () => void) {
        const to = h.customer();
        await h.customerWritesStored(account, to);
        const res = await session({
          typOfmsg: 'normal_message',
          receipentPhone: to,
          message: text,
          callback_url: receiver.url,
          event: ['replied'],
        });
        expect(res.status).toBe(200);
        const [sent] = await eventually(async () => {
          const got = await h.received(account, to);
          return got.length ? got : null;
        });
        const undo = fail();
        try {
          const reply = await h.customerWrites(account, to, `re: ${text}`, { context_message_id: sent.wamid });
          const [callback] = await eventually(
            async () => {
              const got = callbacksFor(res.body.messageId);
              return got.length ? got : null;
            },
            20_000,
            'replied callback',
          );
          await settle();
          const [stored] = await t.db.query(
            `SELECT c.contact_number FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id WHERE m.wamid = $1`,
            [reply.wamid],
          );
          return { to, callback, callbacks: callbacksFor(res.body.messageId), stored };
        } finally {
          undo();
        }
      }

      it('the contact could not be found or created: the retry links the message and calls back `replied` once', async () => {
        let calls = 0;
        const { to, callback, callbacks, stored } = await replyTo('linked on retry', () => {
          const findOrCreate = jest
            .spyOn(t.worker!.get(ContactsService), 'findOrCreateByNumber')
            .mockRejectedValueOnce(new Error('connection lost (injected)'));
          return () => {
            calls = findOrCreate.mock.calls.length;
            findOrCreate.mockRestore();
          };
        });
        expect(calls).toBeGreaterThanOrEqual(2);
        expect(stored.contact_number).toBe(to);
        expect(callbacks).toHaveLength(1);
        expect(callback.body).toMatchObject({ message: 're: linked on retry', senderPhoneNumber: to, type: 'text' });
      }, 60_000);

      it('the `replied` callback could not be queued after the link: the retry queues it, once', async () => {
        let refused = 0;
        const { to, callback, callbacks, stored } = await replyTo('called back on retry', () => {
          const service = t.worker!.get(CallbacksService);
          const original = service.notify.bind(service);
          const notify = jest.spyOn(service, 'notify').mockImplementation((target, event, ...rest) => {
            if (event === 'replied' && refused++ === 0)
              return Promise.reject(new Error('Redis unreachable (injected)'));
            return original(target, event, ...rest);
          });
          return () => notify.mockRestore();
        });
        expect(refused).toBeGreaterThanOrEqual(2);
        expect(stored.contact_number).toBe(to);
        expect(callbacks).toHaveLength(1);
        expect(callback.body).toMatchObject({ message: 're: called back on retry', senderPhoneNumber: to });
      }, 60_000);
    });

    it('a status written before its callback could be queued: the retry queues the callback, once', async () => {
      const to = h.customer();
      await h.customerWritesStored(account, to);
      const service = t.worker!.get(CallbacksService);
      const original = service.notify.bind(service);
      let refused = 0;
      const notify = jest.spyOn(service, 'notify').mockImplementation((target, event, ...rest) => {
        if (target.recipient === to && event === 'delivered' && refused++ === 0)
          return Promise.reject(new Error('Redis unreachable (injected)'));
        return original(target, event, ...rest);
      });
      try {
        const res = await session({
          typOfmsg: 'normal_message',
          receipentPhone: to,
          message: 'ticks',
          callback_url: receiver.url,
          event: ['delivered'],
        });
        expect(res.status).toBe(200);
        const [callback] = await eventually(
          async () => {
            const got = callbacksFor(res.body.messageId);
            return got.length ? got : null;
          },
          20_000,
          'delivered callback',
        );
        await settle();
        expect(refused).toBe(2); // refused once, queued by the retry
        expect(callbacksFor(res.body.messageId)).toHaveLength(1);
        expect(callback.body).toMatchObject({
          status: 'delivered',
          messageId: res.body.messageId,
          senderPhoneNumber: to,
        });
      } finally {
        notify.mockRestore();
      }
    }, 60_000);

    it('a status written by a job lost since (Redis lost it): the job the sweep queues again queues the callback', async () => {
      const { PlatformWebhooksService } = await import('@switchboard/messaging');
      const to = h.customer();
      const wamid = `wamid.lost-job-${account.accountId}`;
      const at = Math.floor(Date.now() / 1000) - 60;
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      // what the lost job's try left: the status written (its time is the event's), the callback never queued
      const [{ id }] = await t.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, wamid, callback_url,
                               callback_events, sent_at, delivered_at)
         VALUES ($1, $2, 'outbound', $3, 'text', 'delivered', $4, $5, '{delivered}', to_timestamp($6), to_timestamp($6))
         RETURNING id`,
        [account.accountId, phone.id, to, wamid, receiver.url, at],
      );
      const body = JSON.parse(
        readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'status-delivered.json'), 'utf8'),
      );
      const value = body.entry[0].changes[0].value;
      value.metadata.phone_number_id = account.messagingPhoneId;
      Object.assign(value.statuses[0], { id: wamid, timestamp: String(at), recipient_id: to });
      const [event] = await t.db.query(
        `INSERT INTO platform_webhook_events (payload, received_at) VALUES ($1::jsonb, now() - interval '1 minute') RETURNING id::text`,
        [JSON.stringify(body)],
      );
      expect(
        await t.worker!.get(PlatformWebhooksService, { strict: false }).requeueUnprocessed(30_000),
      ).toBeGreaterThanOrEqual(1);
      const [callback] = await eventually(
        async () => {
          const got = callbacksFor(id);
          return got.length ? got : null;
        },
        20_000,
        'delivered callback',
      );
      expect(callback.body).toEqual({
        status: 'delivered',
        senderPhoneNumber: to,
        messageId: id,
        timestamp: new Date(at * 1000).toISOString(),
      });
      const [processed] = await t.db.query('SELECT processed_at FROM platform_webhook_events WHERE id = $1', [
        event.id,
      ]);
      expect(processed.processed_at).not.toBeNull();
    }, 60_000);

    it('a failure recorded before its callback could be queued: the next try of the job queues the `failed` callback, once', async () => {
      await sandbox.control.post('/_sandbox/config', { invalidTokens: ['revoked-callback-token'] });
      const acc = await t.createAccount({ apiBaseUrl: sandbox.url, accessToken: 'revoked-callback-token' });
      const service = t.worker!.get(CallbacksService);
      const original = service.notify.bind(service);
      let refused = 0;
      const notify = jest.spyOn(service, 'notify').mockImplementation((target, event, ...rest) => {
        if (target.accountId === String(acc.accountId) && event === 'failed' && refused++ === 0)
          return Promise.reject(new Error('Redis unreachable (injected)'));
        return original(target, event, ...rest);
      });
      try {
        const res = await session(
          {
            typOfmsg: 'normal_message',
            receipentPhone: h.customer(),
            message: 'refused',
            callback_url: receiver.url,
            event: ['failed'],
          },
          acc,
        );
        expect(res.body).toMatchObject({ success: false, status: 'failed', code: 190 });
        const [callback] = await eventually(
          async () => {
            const got = callbacksFor(res.body.messageId);
            return got.length ? got : null;
          },
          20_000,
          'failed callback',
        );
        await settle();
        expect(refused).toBe(2); // refused once, queued by the job's next try
        expect(callbacksFor(res.body.messageId)).toHaveLength(1);
        expect(callback.body).toMatchObject({ status: 'failed', messageId: res.body.messageId });
      } finally {
        notify.mockRestore();
        await sandbox.control.post('/_sandbox/config', { invalidTokens: [] });
      }
    }, 60_000);

    it('callback_url must pass the SSRF guard: metadata, loopback and private targets are a 400 naming callback_url', async () => {
      const strict = await startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: 'false' });
      try {
        const acc = await strict.createAccount({ apiBaseUrl: sandbox.url });
        for (const url of [
          'http://169.254.169.254/latest/meta-data',
          'http://127.0.0.1:8080/cb',
          'http://10.0.0.5/cb',
          'http://[::1]/cb',
          'http://localhost/cb',
        ]) {
          const res = await strict.http.post(
            `/v1/send-message/${acc.messagingPhoneId}`,
            {
              typOfmsg: 'normal_message',
              receipentPhone: '4915112345678',
              message: 'x',
              callback_url: url,
              event: ['sent'],
            },
            { token: acc.token },
          );
          expect(res.status).toBe(400);
          expect(res.body.errors[0].field).toBe('callback_url');
          expect(res.body.message).toMatch(/^callback_url is not allowed: /);
        }
        const bulk = await strict.http.post(
          `/send-message/${acc.messagingPhoneId}`,
          [
            { templateName: 'x', to: '4915112345678' },
            { templateName: 'x', to: '4915112345679', callback_url: 'http://169.254.169.254/', event: ['sent'] },
          ],
          { token: acc.token },
        );
        expect(bulk.status).toBe(400);
        expect(bulk.body.errors[0].field).toBe('[1].callback_url');
        const [{ count }] = await strict.db.query('SELECT count(*)::int AS count FROM messages');
        expect(count).toBe(0);
      } finally {
        await strict.close();
      }
    });
  });

  describe('pacing and retries', () => {
    /** The most messages the sandbox accepted from one number within any 1-second window. */
    const maxPerSecond = (messages: Array<{ acceptedAt: string }>) => {
      const times = messages.map((m) => new Date(m.acceptedAt).getTime()).sort((a, b) => a - b);
      let best = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i] - times[j] >= 1000) j++;
        best = Math.max(best, i - j + 1);
      }
      return best;
    };
    const rejected130429 = async () => (await sandbox.control.get('/_sandbox/stats')).body.rejected['130429'] ?? 0;

    it('the pacer keeps any window at the limit across several worker processes (two pacers, one Redis)', async () => {
      const { Pacer } = await import('@switchboard/messaging');
      const { createRedis } = await import('@switchboard/core');
      const [r1, r2] = [createRedis(t.config.REDIS_URL), createRedis(t.config.REDIS_URL)];
      try {
        const pacers = [new Pacer(r1, t.config.REDIS_PREFIX, 0), new Pacer(r2, t.config.REDIS_PREFIX, 0)];
        const slots: number[] = [];
        await Promise.all(
          Array.from({ length: 120 }, async (_, i) => {
            const slot = await pacers[i % 2].reserveMany('pacer-test', 40, 1);
            expect(slot.count).toBe(1);
            // the slot on Redis's clock, as granted (the time this reply reached the test adds its event loop's delay)
            slots.push((slot.nowUs + slot.firstWaitUs) / 1000);
          }),
        );
        slots.sort((a, b) => a - b);
        let worst = 0;
        for (let i = 0, j = 0; i < slots.length; i++) {
          while (slots[i] - slots[j] >= 1000 - 20) j++; // 20 ms of measurement slack: slots are reserved over a few ms
          worst = Math.max(worst, i - j + 1);
        }
        expect(worst).toBeLessThanOrEqual(40);
        expect(slots[slots.length - 1] - slots[0]).toBeGreaterThanOrEqual(3000 - 60); // 120 at 40/s, 25 ms apart
      } finally {
        r1.disconnect();
        r2.disconnect();
      }
    });

    it('the pacer script in Redis decides exactly as gcraReserve, whose simulations are the unit tests', async () => {
      const { Pacer, gcraReserve, intervalUs } = await import('@switchboard/messaging');
      const { createRedis } = await import('@switchboard/core');
      const [r1, r2] = [createRedis(t.config.REDIS_URL), createRedis(t.config.REDIS_URL)];
      try {
        const pacers = [new Pacer(r1, t.config.REDIS_PREFIX, 20), new Pacer(r2, t.config.REDIS_PREFIX, 20)];
        await r1.del(`${t.config.REDIS_PREFIX}:pace:pacer-mirror`);
        const mirror = { tatUs: 0 };
        let now = 1_700_000_000_000_000; // an injected clock (µs): the script uses Redis TIME otherwise
        let last: { tatUs: number; count: number; intervalUs: number } | undefined;
        let seed = 1;
        const rnd = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
        let refused = 0;
        let givenBack = 0;
        for (let i = 0; i < 400; i++) {
          now += Math.floor(rnd() * (i % 50 < 40 ? 3000 : 400_000)); // busy spells and idle ones
          const wanted = 1 + Math.floor(rnd() * 20);
          const maxAheadMs = rnd() < 0.8 ? 1000 : -1;
          const giveBack =
            last && rnd() < 0.2
              ? { fromUs: last.tatUs - Math.ceil(last.count / 2) * last.intervalUs, tatUs: last.tatUs }
              : undefined;
          const limit = i < 300 ? 1000 : 7;
          const applies = giveBack !== undefined && mirror.tatUs === giveBack.tatUs;
          const real = await pacers[i % 2].reserveMany('pacer-mirror', limit, wanted, maxAheadMs, giveBack, now);
          const expected = gcraReserve(mirror, now, intervalUs(limit, 20), wanted, maxAheadMs * 1000, giveBack);
          expect(real).toEqual(expected);
          if (applies) givenBack++;
          if (!real.count) refused++;
          else last = real;
        }
        expect(refused).toBeGreaterThan(0); // the horizon was reached
        expect(givenBack).toBeGreaterThan(0);
      } finally {
        r1.disconnect();
        r2.disconnect();
      }
    });

    it('a number at 5 msg/s: 20 messages, none refused with 130429, never more than 5 in any second', async () => {
      const slow = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: 5 });
      await sandbox.control.post('/_sandbox/config', { messagesPerSecond: { [slow.messagingPhoneId]: 5 } });
      const name = await h.approvedTemplate(slow, [h.body('Your slot is confirmed.')]);
      const before = await rejected130429();
      const recipients = Array.from({ length: 20 }, () => h.customer());
      const started = Date.now();
      const res = await template(
        recipients.map((to) => ({ templateName: name, to })),
        slow,
      );
      expect(res.status).toBe(200);
      expect(res.body.results.every((r: any) => r.success && r.status !== 'queued')).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000); // 20 at 5/s: the last leaves after about 3 s
      expect(await rejected130429()).toBe(before);
      const sent = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${slow.messagingPhoneId}`)).body.data;
      expect(sent).toHaveLength(20);
      expect(maxPerSecond(sent)).toBeLessThanOrEqual(5);
    });

    it('a slow number with sends waiting past half the in-doubt time uses every slot: 30 at 5/s in about 6 s', async () => {
      // A claim older than SEND_IN_DOUBT_MS / 2 (here 2 s) when its slot comes is claimed again, not given up: giving
      // it up pushed the send to the back of the queue, where its next slot was as far off, on every retry.
      const app = await startTestApp(
        { RATE_LIMIT_PER_MINUTE: '100000', SEND_IN_DOUBT_MS: '4000', SEND_WAIT_TIMEOUT_MS: '20000' },
        { worker: true },
      );
      const box = await startTestSandbox(app, { statusDelaysMs: { sent: 20, delivered: 60, read: 120 } });
      try {
        const slow = await app.createAccount({ apiBaseUrl: box.url, messagesPerSecond: 5 });
        await box.control.post('/_sandbox/config', { messagesPerSecond: { [slow.messagingPhoneId]: 5 } });
        const helpers = messagingHelpers(app, () => box);
        const name = await helpers.approvedTemplate(slow, [helpers.body('Your table is ready.')]);
        const recipients = Array.from({ length: 30 }, () => helpers.customer());
        const res = await app.http.post(
          `/send-message/${slow.messagingPhoneId}`,
          recipients.map((to) => ({ templateName: name, to })),
          { token: slow.token },
        );
        expect(res.status).toBe(200);
        expect(res.body.results.filter((r: any) => !r.success || r.status === 'queued')).toEqual([]);
        const sent = (await box.control.get(`/_sandbox/messages?phone_number_id=${slow.messagingPhoneId}`)).body.data;
        expect(sent.map((m: any) => m.to).sort()).toEqual([...recipients].sort());
        const times = sent.map((m: any) => new Date(m.acceptedAt).getTime());
        expect(Math.max(...times) - Math.min(...times)).toBeLessThan(8000); // 29 intervals of 0.2 s, and some slack
        expect(maxPerSecond(sent)).toBeLessThanOrEqual(5);
      } finally {
        await box.close();
        await app.close();
      }
    }, 60_000);

    it('retries after a platform 130429 (honouring its Retry-After) and sends each message exactly once', async () => {
      const fast = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: 50 });
      await sandbox.control.post('/_sandbox/config', { messagesPerSecond: { [fast.messagingPhoneId]: 2 } }); // the platform is stricter than we think
      const name = await h.approvedTemplate(fast, [h.body('Flash sale starts now.')]);
      const before = await rejected130429();
      const recipients = Array.from({ length: 6 }, () => h.customer());
      const res = await template(
        recipients.map((to) => ({ templateName: name, to })),
        fast,
      );
      expect(res.status).toBe(200);
      expect(res.body.results.every((r: any) => r.success)).toBe(true);
      expect(await rejected130429()).toBeGreaterThan(before);
      const sent = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${fast.messagingPhoneId}`)).body.data;
      expect(sent.map((m: any) => m.to).sort()).toEqual([...recipients].sort());
      const rows = await t.db.query('SELECT attempts FROM messages WHERE account_id = $1', [fast.accountId]);
      expect(rows.some((r: any) => r.attempts > 1)).toBe(true);
    }, 60_000);

    it('bulk sends (enqueueBulk) do not wait and go through the same pacer', async () => {
      const { SendQueueService } = await import('@switchboard/messaging');
      const sends = t.app.get(SendQueueService);
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      const name = await h.approvedTemplate(account, [h.body('Weekly digest is out.')]);
      const recipients = Array.from({ length: 30 }, () => h.customer());
      const ids = await sends.enqueueBulk(
        recipients.map((to) => ({
          accountId: account.accountId,
          phoneNumberId: phone.id,
          recipient: to,
          kind: 'template',
          templateName: name,
          payload: {
            messaging_product: 'whatsapp',
            to,
            type: 'template',
            template: { name, language: { code: 'en_US' } },
          },
        })),
      );
      expect(ids).toHaveLength(30);
      await eventually(
        async () => {
          const [{ n }] = await t.db.query(
            `SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::uuid[]) AND wamid IS NOT NULL`,
            [ids],
          );
          return n === 30;
        },
        15_000,
        '30 bulk messages accepted',
      );
      const [{ queue }] = await t.db.query('SELECT DISTINCT queue FROM messages WHERE id = ANY($1::uuid[])', [ids]);
      expect(queue).toBe('bulk');
    });
  });

  describe('sends for automation steps (SendActivitiesService, worker side)', () => {
    it('queues a template and a session message with the step idempotency key; a re-performed step sends nothing new; reasons reject', async () => {
      const { SendActivitiesService } = await import('@switchboard/messaging');
      const activities = t.worker!.get(SendActivitiesService, { strict: false });
      const name = await h.approvedTemplate(account, [h.body('Hi {{first}}, welcome aboard.', { first: 'Ann' })]);
      const to = h.customer();
      const step = { accountId: account.accountId, messagingPhoneId: null, idempotencyKey: `run:r1:step:1` };
      const first = await activities.sendTemplate({ ...step, to, templateName: name, variables: { name: 'Ann' } });
      const again = await activities.sendTemplate({ ...step, to, templateName: name, variables: { name: 'Ann' } });
      expect(again.messageId).toBe(first.messageId);
      await eventually(async () => (await h.received(account, to)).length === 1, 10_000, 'template sent');
      await expect(
        activities.sendTemplate({ ...step, idempotencyKey: 'run:r1:step:2', to, templateName: 'nope', variables: {} }),
      ).rejects.toThrow('No Template found');

      await h.customerWrites(account, to);
      await activities.sendSessionMessage({
        ...step,
        messagingPhoneId: account.messagingPhoneId,
        idempotencyKey: 'run:r1:step:3',
        to,
        text: 'Pick one',
        buttons: [{ text: 'Yes', payload: 'Y' }],
      });
      const got = await eventually(
        async () => {
          const list = await h.received(account, to);
          return list.length === 2 ? list : null;
        },
        10_000,
        'session sent',
      );
      // the payload is the id a tap returns: what a wait's button branch matches
      expect(got[1].payload.interactive.action.buttons[0].reply).toEqual({ id: 'Y', title: 'Yes' });
      await settle();
      expect(await h.received(account, to)).toHaveLength(2);
    });

    it('sends stored at the same moment share one INSERT and one batch job; each customer gets one message, a repeat none', async () => {
      const { SendQueueService } = await import('@switchboard/messaging');
      const sends = t.worker!.get(SendQueueService, { strict: false });
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      const name = await h.approvedTemplate(account, [h.body('Your order has shipped.')]);
      const customers = Array.from({ length: 5 }, () => h.customer());
      const store = () =>
        Promise.all(
          customers.map((to, i) =>
            sends.storeInBatch({
              accountId: account.accountId,
              phoneNumberId: phone.id,
              recipient: to,
              kind: 'template',
              templateName: name,
              idempotencyKey: `run:batch-${i}:step:1`,
              payload: {
                messaging_product: 'whatsapp',
                to,
                type: 'template',
                template: { name, language: { code: 'en_US' } },
              },
            }),
          ),
        );
      const ids = await store();
      const rows = await t.db.query('SELECT send_job FROM messages WHERE id = ANY($1::uuid[])', [ids]);
      expect(rows).toHaveLength(5);
      expect(new Set(rows.map((r: any) => r.send_job)).size).toBe(1);
      expect(rows[0].send_job).toMatch(/^bulk-batch-/);
      // the same steps performed again (after a crash) answer with the same messages
      expect(await store()).toEqual(ids);
      for (const to of customers)
        await eventually(async () => (await h.received(account, to)).length === 1, 10_000, `sent to ${to}`);
      await settle();
      for (const to of customers) expect(await h.received(account, to)).toHaveLength(1);
    });
  });

  describe('recovery', () => {
    it('one message claimed twice at the same moment in one process (its job run twice) is claimed once', async () => {
      const { SendExecutor } = await import('@switchboard/messaging');
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      const [row] = await t.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, payload)
         VALUES ($1, $2, 'outbound', $3, 'text', 'queued', '{}') RETURNING id, phone_number_id, payload, send_claim`,
        [account.accountId, phone.id, h.customer()],
      );
      // the executor's batched claim, as two runs of the job would call it in the same tick
      const claims = (t.worker!.get(SendExecutor) as any).claimWriter;
      const [a, b] = await Promise.all([claims.add({ ...row }), claims.add({ ...row })]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
      const [stored] = await t.db.query('SELECT send_claim, claimed_at FROM messages WHERE id = $1', [row.id]);
      expect(stored.send_claim).toBe(1);
      expect(stored.claimed_at).not.toBeNull();
      await t.db.query(`UPDATE messages SET status = 'cancelled' WHERE id = $1`, [row.id]);
    });

    it('a wamid the database refused to record stays with its job, delayed without using up attempts, until recorded', async () => {
      const to = h.customer();
      await h.customerWritesStored(account, to);
      const queue = t.worker!.get<Queue>(getQueueToken(QUEUES.sends));
      // the database refuses this customer's wamid, as an outage would (the job keeps 12 attempts ~3 minutes apart at most)
      await t.db.query(`CREATE FUNCTION refuse_wamid() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.wamid IS NOT NULL AND OLD.wamid IS NULL AND NEW.recipient = TG_ARGV[0] THEN
            RAISE EXCEPTION 'database unavailable (injected)';
          END IF;
          RETURN NEW;
        END $$`);
      await t.db.query(
        `CREATE TRIGGER refuse_wamid BEFORE UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION refuse_wamid('${to}')`,
      );
      await sandbox.control.post('/_sandbox/config', { statusWebhooks: false }); // no status to link the wamid instead
      let answer: Promise<any> | undefined;
      try {
        answer = session({ typOfmsg: 'normal_message', receipentPhone: to, message: 'kept by the job' });
        const [sent] = await eventually(async () => {
          const got = await h.received(account, to);
          return got.length ? got : null;
        });
        const [{ id }] = await t.db.query(`SELECT id FROM messages WHERE recipient = $1 AND direction = 'outbound'`, [
          to,
        ]);
        await new Promise((r) => setTimeout(r, 5000)); // as failures, this would have used up 3 or 4 attempts
        const job = await queue.getJob(id);
        expect(job?.data.acceptedWamid).toBe(sent.wamid);
        expect(job?.attemptsMade).toBe(0);
        expect(await job?.getState()).toBe('delayed');
      } finally {
        await t.db.query('DROP TRIGGER refuse_wamid ON messages');
        await t.db.query('DROP FUNCTION refuse_wamid()');
        await sandbox.control.post('/_sandbox/config', { statusWebhooks: true });
      }
      const [{ messageId }] = [(await answer).body];
      const recorded = await eventually(async () => {
        const [row] = await t.db.query('SELECT wamid, status FROM messages WHERE id = $1', [messageId]);
        return row.wamid ? row : null;
      });
      expect(recorded).toEqual({ wamid: (await h.received(account, to))[0].wamid, status: 'accepted' });
      expect(await h.received(account, to)).toHaveLength(1);
    }, 60_000);

    it('a message stored but never queued (crash between INSERT and enqueue) is sent by the sweep, after the in-doubt wait', async () => {
      const { SendExecutor } = await import('@switchboard/messaging');
      const to = h.customer();
      await h.customerWrites(account, to);
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      const [row] = await t.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, payload, queue, created_at)
         VALUES ($1, $2, 'outbound', $3, 'text', 'queued', $4, 'api', now() - interval '1 minute') RETURNING id`,
        [
          account.accountId,
          phone.id,
          to,
          JSON.stringify({ messaging_product: 'whatsapp', to, type: 'text', text: { body: 'from the sweep' } }),
        ],
      );
      expect(await t.worker!.get(SendExecutor, { strict: false }).sweep()).toBeGreaterThanOrEqual(1);
      const sent = await eventually(
        async () => {
          const [r] = await t.db.query('SELECT status, wamid FROM messages WHERE id = $1', [row.id]);
          return r.wamid ? r : null;
        },
        20_000,
        'swept message sent',
      );
      expect(sent.status).not.toBe('failed');
      const got = await h.received(account, to);
      expect(got.map((m) => m.payload.text.body)).toEqual(['from the sweep']);
    }, 30_000);
  });

  describe('reconciliation', () => {
    /** Meta's status webhook (a fixture) for `wamid`, carrying our message id in biz_opaque_callback_data, signed. */
    function postStatusOf(messageId: string, fixture: string, wamid: string) {
      const body = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', `${fixture}.json`), 'utf8'));
      const value = body.entry[0].changes[0].value;
      value.metadata.phone_number_id = account.messagingPhoneId;
      value.statuses[0].id = wamid;
      value.statuses[0].biz_opaque_callback_data = messageId;
      const raw = JSON.stringify(body);
      return t.http.request('POST', '/webhooks/whatsapp', {
        body: raw,
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': computeSignature(Buffer.from(raw), t.config.WHATSAPP_APP_SECRET),
        },
      });
    }

    it('an answer cut off mid-way (the platform took the message) is no failure: its status links it, nothing is sent twice', async () => {
      const to = h.customer();
      await h.customerWritesStored(account, to);
      await sandbox.control.post('/_sandbox/config', { garbledAnswers: 1 }); // the next send's 200 is cut off
      const res = await session({ typOfmsg: 'normal_message', receipentPhone: to, message: 'cut off' });
      expect(res.status).toBe(200);
      const row = await eventually(async () => {
        const [r] = await t.db.query('SELECT status, wamid, error_title, failed_at FROM messages WHERE id = $1', [
          res.body.messageId,
        ]);
        return ['delivered', 'read'].includes(r.status) ? r : null;
      });
      const [received] = await h.received(account, to);
      expect(row).toMatchObject({ wamid: received.wamid, error_title: null, failed_at: null });
      await settle();
      expect(await h.received(account, to)).toHaveLength(1);
    });

    it('a connection lost once the platform took the message is no refusal: its status links it, nothing is sent twice', async () => {
      const to = h.customer();
      await h.customerWritesStored(account, to);
      // the next send gets no answer at all, and its status comes well after a retry would have gone
      await sandbox.control.post('/_sandbox/config', {
        droppedAnswers: 1,
        statusDelaysMs: { sent: 2500, delivered: 2600, read: null },
      });
      let row;
      try {
        const res = await session({ typOfmsg: 'normal_message', receipentPhone: to, message: 'no answer' });
        expect(res.status).toBe(200);
        row = await eventually(async () => {
          const [r] = await t.db.query('SELECT status, wamid, error_title, failed_at FROM messages WHERE id = $1', [
            res.body.messageId,
          ]);
          return r.status === 'delivered' ? r : null;
        });
      } finally {
        await sandbox.control.post('/_sandbox/config', { statusDelaysMs: { sent: 20, delivered: 60, read: 120 } });
      }
      const [received] = await h.received(account, to);
      expect(row).toMatchObject({ wamid: received.wamid, error_title: null, failed_at: null });
      await settle();
      expect(await h.received(account, to)).toHaveLength(1);
    });

    /** A stored text message to `to` whose job (unless in a batch) has one attempt left; callbacks for `failed` and `delivered`. */
    async function onItsLastAttempt(app: TestApp, acc: TestAccount, to: string, text: string, job = 'single') {
      const [phone] = await app.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        acc.messagingPhoneId,
      ]);
      const payload = { messaging_product: 'whatsapp', to, type: 'text', text: { body: text } };
      const [row] = await app.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, body, payload, callback_url, callback_events)
         VALUES ($1, $2, 'outbound', $3, 'text', 'queued', $4, $5::jsonb, $6, '{failed,delivered}') RETURNING id`,
        [acc.accountId, phone.id, to, text, JSON.stringify(payload), receiver.url],
      );
      if (job === 'single') {
        const queue = app.worker!.get<Queue>(getQueueToken(QUEUES.sends));
        await queue.add(SEND_JOB, { messageId: row.id }, { ...sendJobOptions(row.id), attempts: 1 });
      }
      return row.id as string;
    }

    it('the answer to the last attempt cut off: not recorded failed while its status may come, and when it comes no failed callback was sent', async () => {
      const to = h.customer();
      await h.customerWritesStored(account, to);
      await sandbox.control.post('/_sandbox/config', { garbledAnswers: 1 });
      const id = await onItsLastAttempt(t, account, to, 'last try');
      const row = await eventually(async () => {
        const [r] = await t.db.query('SELECT status, wamid, failed_at FROM messages WHERE id = $1', [id]);
        return ['delivered', 'read'].includes(r.status) ? r : null;
      });
      const [received] = await h.received(account, to);
      expect(row).toMatchObject({ wamid: received.wamid, failed_at: null });
      await eventually(async () => callbacksFor(id).length >= 1, 10_000, 'delivered callback');
      await settle();
      expect(callbacksFor(id).map((w) => w.body.status)).toEqual(['delivered']);
    });

    it('the answer to the last attempt cut off and no status ever comes: recorded failed once no longer in doubt, with one failed callback', async () => {
      const app = await startTestApp(
        { RATE_LIMIT_PER_MINUTE: '100000', ALLOW_PRIVATE_NETWORK_TARGETS: 'true', SEND_IN_DOUBT_MS: '2000' },
        { worker: true },
      );
      const box = await startTestSandbox(app, { statusWebhooks: false, enforceCustomerCareWindow: false });
      try {
        const acc = await app.createAccount({ apiBaseUrl: box.url });
        await box.control.post('/_sandbox/config', { garbledAnswers: 1 });
        const to = h.customer();
        const queuedAt = Date.now();
        const id = await onItsLastAttempt(app, acc, to, 'no word back');
        await eventually(async () => (await box.control.get(`/_sandbox/messages?to=${to}`)).body.data.length === 1);
        const [meanwhile] = await app.db.query('SELECT status, failed_at FROM messages WHERE id = $1', [id]);
        expect(meanwhile).toEqual({ status: 'queued', failed_at: null });
        const failed = await eventually(async () => {
          const [r] = await app.db.query('SELECT status, error_title, failed_at FROM messages WHERE id = $1', [id]);
          return r.status === 'failed' ? r : null;
        }, 15_000);
        expect(failed.error_title).toBe('invalid_response');
        expect(new Date(failed.failed_at).getTime()).toBeGreaterThanOrEqual(queuedAt + 2000);
        await eventually(async () => callbacksFor(id).length >= 1, 10_000, 'failed callback');
        await new Promise((r) => setTimeout(r, 500));
        expect(callbacksFor(id).map((w) => w.body.status)).toEqual(['failed']);
        expect((await box.control.get(`/_sandbox/messages?to=${to}`)).body.data).toHaveLength(1); // never sent again

        // the same in a campaign's chunk: the one without an answer fails once no longer in doubt, the other is sent
        await box.control.post('/_sandbox/config', { garbledAnswers: 1 });
        const [first, second] = [h.customer(), h.customer()];
        const ids = [
          await onItsLastAttempt(app, acc, first, 'chunk 1', 'batch'),
          await onItsLastAttempt(app, acc, second, 'chunk 2', 'batch'),
        ];
        const bulk = app.worker!.get<Queue>(getQueueToken(QUEUES.bulkSends));
        const chunkQueuedAt = Date.now();
        await bulk.add(
          SEND_BATCH_JOB,
          { messageIds: ids },
          { ...sendJobOptions(`bulk-batch-last-${ids[0]}`), attempts: 1 },
        );
        const statuses = await eventually(async () => {
          const rows = await app.db.query('SELECT id, status FROM messages WHERE id = ANY($1::uuid[])', [ids]);
          const by = Object.fromEntries(rows.map((r: any) => [r.id, r.status]));
          return by[ids[0]] === 'failed' ? by : null;
        }, 15_000);
        expect(statuses).toEqual({ [ids[0]]: 'failed', [ids[1]]: 'accepted' });
        const [{ failed_at }] = await app.db.query('SELECT failed_at FROM messages WHERE id = $1', [ids[0]]);
        expect(new Date(failed_at).getTime()).toBeGreaterThanOrEqual(chunkQueuedAt + 2000);
        await eventually(async () => callbacksFor(ids[0]).length >= 1, 10_000, 'failed callback of the chunk');
        for (const customer of [first, second])
          expect((await box.control.get(`/_sandbox/messages?to=${customer}`)).body.data).toHaveLength(1);
      } finally {
        await box.close();
        await app.close();
      }
    });

    it('a message recorded failed without a wamid, then reported on by the platform, is taken back from failed', async () => {
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      // its last attempt timed out: recorded failed, though the platform had it
      const [row] = await t.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, payload, failed_at, error_code, error_title, error_message)
         VALUES ($1, $2, 'outbound', '4915112345679', 'text', 'failed', '{}', now(), 0, 'timeout', 'Cloud API request timed out') RETURNING id`,
        [account.accountId, phone.id],
      );
      expect((await postStatusOf(row.id, 'status-delivered', `wamid.late-${row.id}`)).status).toBe(200);
      const linked = await eventually(async () => {
        const [r] = await t.db.query(
          'SELECT wamid, status, failed_at, error_title, delivered_at FROM messages WHERE id = $1',
          [row.id],
        );
        return r.status === 'delivered' ? r : null;
      });
      expect(linked).toMatchObject({ wamid: `wamid.late-${row.id}`, failed_at: null, error_title: null });
      expect(linked.delivered_at).not.toBeNull();
    });

    it('a status carrying our message id in biz_opaque_callback_data links a message whose send answer was lost', async () => {
      const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
        account.messagingPhoneId,
      ]);
      const [row] = await t.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, payload) VALUES ($1, $2, 'outbound', '4915112345678', 'text', 'queued', '{}') RETURNING id`,
        [account.accountId, phone.id],
      );
      expect((await postStatusOf(row.id, 'status-sent', `wamid.lost-${row.id}`)).status).toBe(200);
      const linked = await eventually(async () => {
        const [r] = await t.db.query('SELECT wamid, status, accepted_at FROM messages WHERE id = $1', [row.id]);
        // linked (wamid, accepted) first, then the status applied: wait for both (they are two statements)
        return r.wamid && r.status !== 'accepted' ? r : null;
      });
      expect(linked).toMatchObject({ wamid: `wamid.lost-${row.id}`, status: 'sent' });
      expect(linked.accepted_at).not.toBeNull();
    });
  });

  describe('conversations (GET /v2/conversations)', () => {
    it('newest activity first, last message, unread = customer messages since our last message, the 24-hour window', async () => {
      const [a, b] = [h.customer(), h.customer()];
      await h.customerWritesStored(account, a, 'first from a'); // a's contact, named by the profile: 'Customer'
      await session({ typOfmsg: 'normal_message', receipentPhone: a, message: 'reply to a', receipentName: 'Alice' });
      await h.customerWrites(account, a, 'a again');
      await h.customerWrites(account, a, 'a once more');
      await h.customerWrites(account, b, 'hello from b');
      const other = await t.createAccount({ apiBaseUrl: sandbox.url });
      await h.customerWrites(other, a, 'a writes to another account');

      const list = await eventually(
        async () => {
          const res = await t.http.get('/v2/conversations', { token: account.token });
          return res.body.data?.total === 2 &&
            res.body.data.conversations[0].last_message?.text === 'hello from b' &&
            res.body.data.conversations[1].unread_count === 2
            ? res
            : null;
        },
        10_000,
        'two conversations',
      );
      const [cb, ca] = list.body.data.conversations;
      expect(cb.contact.contact_number).toBe(b);
      expect(cb.unread_count).toBe(1);
      expect(cb.window.open).toBe(true);
      expect(new Date(cb.window.expires_at).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
      expect(ca.contact).toMatchObject({ contact_number: a, name: 'Customer' }); // receipentName names only a new contact
      expect(ca.last_message).toMatchObject({ direction: 'inbound', text: 'a once more', status: 'received' });
      expect(list.body.data).toMatchObject({ page: 1, pageSize: 20, total: 2 });

      const msgs = await t.http.get(`/v2/conversations/${ca.contact.contact_id}/messages?pageSize=10`, {
        token: account.token,
      });
      expect(msgs.status).toBe(200);
      expect(msgs.body.data.messages.map((m: any) => `${m.direction}:${m.text}`)).toEqual([
        'inbound:a once more',
        'inbound:a again',
        'outbound:reply to a',
        'inbound:first from a',
      ]);
      expect(msgs.body.data.messages[2]).toMatchObject({
        type: 'text',
        status: expect.stringMatching(/accepted|sent|delivered|read/),
      });

      // isolation: the other account sees only its own conversation, and not this account's contact
      const theirs = await eventually(
        async () => {
          const res = await t.http.get('/v2/conversations', { token: other.token });
          return res.body.data?.total >= 1 ? res : null;
        },
        20_000,
        'the other account’s conversation',
      );
      expect(theirs.body.data.total).toBe(1);
      expect(theirs.body.data.conversations[0].last_message.text).toBe('a writes to another account');
      const foreign = await t.http.get(`/v2/conversations/${ca.contact.contact_id}/messages`, { token: other.token });
      expect(foreign.status).toBe(404);
      expect((await t.http.get('/v2/conversations?pageSize=101', { token: account.token })).status).toBe(400);
    });
  });
});
