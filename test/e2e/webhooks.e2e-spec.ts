import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { ReceivedWebhook, WebhookReceiver } from '../../apps/sandbox/src/testing/webhook-receiver';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { recordCompletedCampaigns } from '../helpers/webhooks';

/**
 * Account webhooks (docs/webhooks.md), end to end: the real API and worker, the sandbox as the platform, receivers
 * on loopback ports (ALLOW_PRIVATE_NETWORK_TARGETS=true here; the SSRF suite below runs without it).
 */
describe('Account webhooks', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp(
      {
        RATE_LIMIT_PER_MINUTE: '100000',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '0,300ms,300ms',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_POLL_INTERVAL_MS: '50',
        WEBHOOK_ENDPOINT_CONCURRENCY: '4',
      },
      { worker: true },
    );
    sandbox = await startTestSandbox(t, {
      templateReviewDelayMs: 100,
      statusDelaysMs: { sent: 20, delivered: 40, read: 60 },
    });
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await sandbox?.close();
    await t?.close();
  });

  const receiver = async () => {
    const r = new WebhookReceiver();
    await r.start();
    receivers.push(r);
    return r;
  };
  const account = () => t.createAccount({ apiBaseUrl: sandbox.url });
  const createEndpoint = async (a: TestAccount, body: Record<string, unknown>) => {
    const res = await t.http.post('/v1/webhook-endpoints', body, { token: a.token });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; secret: string; url: string; events: string[] };
  };
  const patch = (a: TestAccount, path: string, body: unknown) =>
    t.http.request('PATCH', path, { token: a.token, body });
  const verify = (secret: string, w: ReceivedWebhook) =>
    new Webhook(secret).verify(w.rawBody.toString('utf8'), w.headers as Record<string, string>);
  /** Records an event for the account the way the owning modules do (the outbox function, here in its own statement). */
  const record = async (a: TestAccount, type: string, data: Record<string, unknown>) => {
    const { recordWebhookEvent } = await import('@switchboard/webhooks');
    await recordWebhookEvent(t.db, { accountId: a.accountId, type: type as any, data });
  };
  const deliveries = async (a: TestAccount, endpointId: string) => {
    const res = await t.http.get(`/v1/webhook-endpoints/${endpointId}/deliveries?pageSize=100`, { token: a.token });
    expect(res.status).toBe(200);
    return res.body.data.deliveries as any[];
  };

  describe('endpoints API', () => {
    it('creates (secret shown once), lists, reads, updates and deletes', async () => {
      const a = await account();
      const r = await receiver();
      const created = await t.http.post(
        '/v1/webhook-endpoints',
        { url: r.url, events: ['message.received', 'template_status_update'], description: 'CRM' },
        { token: a.token },
      );
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({
        url: r.url,
        events: ['message.received', 'template_status_update'],
        description: 'CRM',
        enabled: true,
        disabled_reason: null,
      });
      expect(created.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      const id = created.body.data.id;

      const list = await t.http.get('/v1/webhook-endpoints', { token: a.token });
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0].id).toBe(id);
      expect(list.body.data[0]).not.toHaveProperty('secret');
      const one = await t.http.get(`/v1/webhook-endpoints/${id}`, { token: a.token });
      expect(one.body.data).toMatchObject({ id, url: r.url });
      expect(one.body.data).not.toHaveProperty('secret');

      const changed = await patch(a, `/v1/webhook-endpoints/${id}`, { events: '*', enabled: false });
      expect(changed.status).toBe(200);
      expect(changed.body.data).toMatchObject({
        events: ['*'],
        enabled: false,
        disabled_reason: 'manual',
        description: 'CRM',
      });
      const back = await patch(a, `/v1/webhook-endpoints/${id}`, { enabled: true });
      expect(back.body.data).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });

      expect((await t.http.delete(`/v1/webhook-endpoints/${id}`, { token: a.token })).body).toEqual({
        success: true,
        message: 'Webhook endpoint deleted',
      });
      expect((await t.http.get(`/v1/webhook-endpoints/${id}`, { token: a.token })).status).toBe(404);
    });

    it('bad input is a 400 naming the field; nothing is stored', async () => {
      const a = await account();
      const r = await receiver();
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [{ url: 'not a url', events: ['*'] }, 'url', /^url is not allowed: invalid URL/],
        [{ url: 'ftp://example.com/x', events: ['*'] }, 'url', /^url is not allowed: URL scheme "ftp"/],
        [{ events: ['*'] }, 'url', /^url must be/],
        [
          { url: r.url, events: ['message.recieved'] },
          'events',
          /^events must be "\*" or a list of: message\.received, /,
        ],
        [{ url: r.url, events: [] }, 'events', /^events must be/],
        [{ url: r.url }, 'events', /^events must be/],
        [
          { url: r.url, events: ['*'], description: 'x'.repeat(2 * 1024 * 1024) },
          'description',
          /^description must be at most 1000 characters$/,
        ],
        [{ url: r.url, events: ['*'], enabled: 'yes' }, 'enabled', /^enabled must be true or false$/],
      ];
      for (const [body, field, message] of cases) {
        const res = await t.http.post('/v1/webhook-endpoints', body, { token: a.token });
        expect({ status: res.status, field: res.body.errors?.[0]?.field }).toEqual({ status: 400, field });
        expect(res.body.message).toMatch(message);
      }
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      const bad = await patch(a, `/v1/webhook-endpoints/${ep.id}`, { description: 'y'.repeat(2 * 1024 * 1024) });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].field).toBe('description');
      const replay = await t.http.post(
        `/v1/webhook-endpoints/${ep.id}/replay`,
        { since: 'yesterday' },
        { token: a.token },
      );
      expect(replay.status).toBe(400);
      expect(replay.body.errors[0].field).toBe('since');
      const backwards = await t.http.post(
        `/v1/webhook-endpoints/${ep.id}/replay`,
        { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
        { token: a.token },
      );
      expect(backwards.status).toBe(400);
      expect(backwards.body.errors[0].field).toBe('until');
      expect(
        (await t.http.get('/v1/events?since=2026-01-01T00:00:00Z&types=nope', { token: a.token })).body.errors[0].field,
      ).toBe('types');
      expect((await t.http.get('/v1/events', { token: a.token })).body.errors[0].field).toBe('since');
      // ISO 8601 forms JavaScript or PostgreSQL cannot read (and a day that does not exist) name the field too
      for (const since of ['2026-11-23T10:00:00+01', '20261123', '2026-W48', '2026-327', '2026-02-30T00:00:00Z']) {
        const events = await t.http.get(`/v1/events?since=${encodeURIComponent(since)}`, { token: a.token });
        expect({ since, status: events.status, errors: events.body.errors }).toEqual({
          since,
          status: 400,
          errors: [{ field: 'since', message: 'since must be an ISO 8601 date-time, e.g. 2026-11-23T10:00:00Z' }],
        });
        const replayed = await t.http.post(`/v1/webhook-endpoints/${ep.id}/replay`, { since }, { token: a.token });
        expect({ since, status: replayed.status, field: replayed.body.errors?.[0]?.field }).toEqual({
          since,
          status: 400,
          field: 'since',
        });
      }
      const dayOnly = await t.http.get('/v1/events?since=2026-11-23', { token: a.token });
      expect(dayOnly.status).toBe(200);
      const february30 = Buffer.from('2026-02-30T00:00:00.000000Z|1').toString('base64url');
      const impossibleCursor = await t.http.get(`/v1/events?since=2026-01-01T00:00:00Z&cursor=${february30}`, {
        token: a.token,
      });
      expect({ status: impossibleCursor.status, field: impossibleCursor.body.field }).toEqual({
        status: 400,
        field: 'cursor',
      });
      // a cursor not written by a page (here "1|x": a time Date.parse takes and PostgreSQL refuses) names the field
      const forged = Buffer.from('1|x').toString('base64url');
      const badCursor = await t.http.get(`/v1/events?since=2026-01-01T00:00:00Z&cursor=${forged}`, { token: a.token });
      expect({ status: badCursor.status, field: badCursor.body.field }).toEqual({ status: 400, field: 'cursor' });
      expect((await t.http.get('/v1/webhook-endpoints', { token: a.token })).body.data.map((e: any) => e.id)).toEqual([
        ep.id,
      ]);
    });

    it('another account sees none of it: every route answers 404 and changes nothing', async () => {
      const owner = await account();
      const other = await account();
      const r = await receiver();
      const ep = await createEndpoint(owner, { url: r.url, events: ['*'] });
      await record(owner, 'campaign.completed', { campaignId: 1 });
      const [delivery] = await eventually(async () => {
        const list = await deliveries(owner, ep.id);
        return list.length ? list : null;
      });
      const path = `/v1/webhook-endpoints/${ep.id}`;
      const attempts = [
        await t.http.get(path, { token: other.token }),
        await patch(other, path, { enabled: false }),
        await t.http.post(`${path}/rotate-secret`, undefined, { token: other.token }),
        await t.http.post(`${path}/test`, undefined, { token: other.token }),
        await t.http.get(`${path}/deliveries`, { token: other.token }),
        await t.http.post(`${path}/replay`, { since: '2020-01-01T00:00:00Z' }, { token: other.token }),
        await t.http.post(`/v1/webhook-deliveries/${delivery.id}/retry`, undefined, { token: other.token }),
        await t.http.delete(path, { token: other.token }),
      ];
      expect(attempts.map((res) => res.status)).toEqual([404, 404, 404, 404, 404, 404, 404, 404]);
      expect((await t.http.get('/v1/webhook-endpoints', { token: other.token })).body.data).toEqual([]);
      expect(
        (await t.http.get('/v1/events?since=2020-01-01T00:00:00Z', { token: other.token })).body.data.events,
      ).toEqual([]);
      expect((await t.http.get(path, { token: owner.token })).body.data).toMatchObject({ enabled: true });
      expect(await deliveries(owner, ep.id)).toHaveLength(1);
    });

    it('is in the OpenAPI document', async () => {
      const doc = await t.http.get('/docs-json');
      expect(doc.status).toBe(200);
      for (const path of [
        '/v1/webhook-endpoints',
        '/v1/webhook-endpoints/{id}',
        '/v1/webhook-endpoints/{id}/rotate-secret',
        '/v1/webhook-endpoints/{id}/test',
        '/v1/webhook-endpoints/{id}/deliveries',
        '/v1/webhook-endpoints/{id}/replay',
        '/v1/webhook-deliveries/{id}/retry',
        '/v1/events',
      ]) {
        expect(Object.keys(doc.body.paths)).toContain(path);
      }
      expect(doc.body.paths['/v1/webhook-endpoints'].post.requestBody.content['application/json'].schema.$ref).toMatch(
        /CreateWebhookEndpointDto$/,
      );
    });

    it('needs the /account grant', async () => {
      const a = await account();
      await t.db.query(`UPDATE api_clients SET grants = ARRAY['/templates'] WHERE account_id = $1`, [a.accountId]);
      const fresh = await t.http.post('/v1/authenticate', undefined, {
        headers: { clientid: a.clientId, clientsecret: a.clientSecret },
      });
      const res = await t.http.get('/v1/webhook-endpoints', { token: fresh.body.token });
      expect(res.body).toMatchObject({ message: 'Unauthorized to make this request', required_grant: '/account' });
    });
  });

  describe('events and signatures', () => {
    it('a template approved by the review produces one template_status_update that verifies with standardwebhooks', async () => {
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['template_status_update'] });
      const created = await t.http.post(
        '/templates/create',
        {
          template_name: 'manual_webhook_demo',
          category: 'UTILITY',
          language: 'en_US',
          messagingPhoneId: a.messagingPhoneId,
          components: [{ type: 'body', parameters: [{ type: 'text', text: 'Your order shipped.' }] }],
        },
        { token: a.token },
      );
      expect(created.body.data.status).toBe('PENDING');
      await sandbox.control.post('/_sandbox/templates/review', { name: 'manual_webhook_demo', status: 'APPROVED' });

      const [w] = await r.waitFor((x) => x.body?.type === 'template_status_update', 1, 15_000);
      const verified = verify(ep.secret, w) as any;
      expect(verified).toEqual({
        id: w.headers['webhook-id'],
        type: 'template_status_update',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        accountId: a.accountId,
        data: {
          templateName: 'manual_webhook_demo',
          language: 'en_US',
          category: 'UTILITY',
          previousStatus: 'PENDING',
          status: 'APPROVED',
          reason: null,
          platformStatus: null,
          platformTemplateId: expect.any(String),
          source: 'webhook',
        },
      });
      expect(w.headers['webhook-id']).toMatch(/^evt_[0-9a-f]{32}$/);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(r.received.filter((x) => x.body?.type === 'template_status_update')).toHaveLength(1);

      // a tampered body, a stale timestamp and another secret all fail verification
      const tampered = { ...w, rawBody: Buffer.from(w.rawBody.toString('utf8').replace('APPROVED', 'REJECTED')) };
      expect(() => verify(ep.secret, tampered)).toThrow(/No matching signature found/);
      const stale = {
        ...w,
        headers: { ...w.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) },
      };
      expect(() => verify(ep.secret, stale)).toThrow(/too old/);
      expect(() => verify(`whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`, w)).toThrow(
        /No matching signature found/,
      );

      // the same event in GET /v1/events
      const events = await t.http.get(`/v1/events?since=${new Date(Date.now() - 60_000).toISOString()}`, {
        token: a.token,
      });
      expect(events.body.data.events).toEqual([verified]);
      expect(events.body.data.next_cursor).toBeNull();
    });

    it('a customer message produces message.received; our message produces message.status sent, delivered, read', async () => {
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['message.received', 'message.status'] });
      await sandbox.control.post('/_sandbox/inbound', {
        from: '4915112345678',
        phone_number_id: a.messagingPhoneId,
        text: 'hello there',
        name: 'Ann',
      });
      const [received] = await r.waitFor((x) => x.body?.type === 'message.received', 1, 10_000);
      expect(verify(ep.secret, received)).toMatchObject({
        type: 'message.received',
        accountId: a.accountId,
        data: {
          from: '4915112345678',
          messagingPhoneId: a.messagingPhoneId,
          profileName: 'Ann',
          type: 'text',
          text: 'hello there',
          messageId: expect.any(String),
          wamid: expect.any(String),
        },
      });

      const sent = await t.http.post(
        `/v1/send-message/${a.messagingPhoneId}`,
        { typOfmsg: 'normal_message', receipentPhone: '4915112345678', message: 'hi Ann' },
        { token: a.token },
      );
      expect(sent.status).toBe(200);
      const statuses = await r.waitFor((x) => x.body?.type === 'message.status', 3, 10_000);
      expect(statuses.map((s) => s.body.data.status).sort()).toEqual(['delivered', 'read', 'sent']);
      expect(statuses[0].body.data).toMatchObject({
        messageId: sent.body.messageId,
        recipient: '4915112345678',
        error: null,
      });
    });

    it('a send the platform refuses produces message.status failed with its error and no wamid, once', async () => {
      await sandbox.control.post('/_sandbox/config', { invalidTokens: ['revoked-webhooks-token'] });
      const a = await t.createAccount({ apiBaseUrl: sandbox.url, accessToken: 'revoked-webhooks-token' });
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['message.status'] });
      const sent = await t.http.post(
        `/v1/send-message/${a.messagingPhoneId}`,
        { typOfmsg: 'normal_message', receipentPhone: '4915112345670', message: 'hi' },
        { token: a.token },
      );
      const messageId = sent.body.messageId ?? sent.body.data?.messageId;
      const [failed] = await r.waitFor((x) => x.body?.type === 'message.status', 1, 10_000);
      expect((verify(ep.secret, failed) as any).data).toEqual({
        messageId: expect.any(String),
        wamid: null,
        messagingPhoneId: a.messagingPhoneId,
        recipient: '4915112345670',
        status: 'failed',
        timestamp: expect.stringMatching(/Z$/),
        error: { code: 190, title: expect.any(String), message: expect.any(String), details: expect.any(String) },
      });
      const [stored] = await t.db.query(`SELECT id, status, error_code FROM messages WHERE account_id = $1`, [
        a.accountId,
      ]);
      expect(stored).toMatchObject({ id: failed.body.data.messageId, status: 'failed', error_code: 190 });
      if (messageId) expect(messageId).toBe(stored.id);
      const events = await t.db.query(`SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1`, [
        a.accountId,
      ]);
      expect(events[0].n).toBe(1);
    });

    it('statuses written while the account had no endpoint; then an endpoint gets the next message’s statuses; deleted by plain SQL, it gets none', async () => {
      // The worker keeps "has an endpoint" per account in memory (WebhookEndpointPresence), told of changes by NOTIFY.
      const a = await account();
      await sandbox.control.post('/_sandbox/inbound', {
        from: '4915112340001',
        phone_number_id: a.messagingPhoneId,
        text: 'hi',
      });
      const send = async (message: string) => {
        const res = await t.http.post(
          `/v1/send-message/${a.messagingPhoneId}`,
          { typOfmsg: 'normal_message', receipentPhone: '4915112340001', message },
          { token: a.token },
        );
        expect(res.status).toBe(200);
        const id = res.body.messageId as string;
        await eventually(
          async () => {
            const [m] = await t.db.query(`SELECT status FROM messages WHERE id = $1`, [id]);
            return m?.status === 'read';
          },
          10_000,
          `message ${message} read`,
        );
        return id;
      };
      const countEvents = async () =>
        Number(
          (
            await t.db.query(
              `SELECT count(*) AS n FROM webhook_events WHERE account_id = $1 AND type = 'message.status'`,
              [a.accountId],
            )
          )[0].n,
        );

      await send('before any endpoint');
      expect(await countEvents()).toBe(0);

      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['message.status'] });
      const second = await send('with an endpoint');
      const statuses = await r.waitFor((x) => x.body?.type === 'message.status', 3, 10_000);
      expect(statuses.map((x) => x.body.data.messageId)).toEqual([second, second, second]);

      await t.db.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [ep.id]);
      await send('after the endpoint was deleted');
      expect(await countEvents()).toBe(3);
    });

    it('workflow_run.failed when a run fails (message from the failing node)', async () => {
      const a = await account();
      const r = await receiver();
      await createEndpoint(a, { url: r.url, events: ['workflow_run.failed'] });
      const wf = await t.http.post(
        '/v1/workflows',
        {
          mode: 'create',
          name: 'Fails',
          trigger: { type: 'webhook' },
          startNodeId: 'call',
          nodes: [
            { id: 'call', type: 'http_request', method: 'POST', url: 'http://no-such-host.invalid/hook', next: 'done' },
            { id: 'done', type: 'end' },
          ],
        },
        { token: a.token },
      );
      expect(wf.status).toBe(200);
      const started = await t.http.post(new URL(wf.body.data.webhookUrl).pathname, { phone: '4915112345678' });
      expect(started.status).toBe(200);
      const [w] = await r.waitFor((x) => x.body?.type === 'workflow_run.failed', 1, 15_000);
      expect(w.body.data).toMatchObject({
        runId: started.body.runId,
        workflowId: wf.body.data.id,
        nodeId: 'call',
        error: { message: expect.stringContaining('no-such-host.invalid') },
      });
    });
  });

  it('workflow_run.failed from the Temporal driver’s state recording, once', async () => {
    const { TemporalActivities } = await import('@switchboard/automations');
    const a = await account();
    const r = await receiver();
    await createEndpoint(a, { url: r.url, events: ['workflow_run.failed'] });
    const wf = await t.http.post(
      '/v1/workflows',
      {
        mode: 'create',
        name: 'Waits',
        trigger: { type: 'webhook' },
        startNodeId: 'wait',
        nodes: [
          {
            id: 'wait',
            type: 'wait_for_reply',
            timeout: '1h',
            branches: [{ match: { type: 'any' }, next: 'done' }],
            onTimeout: 'done',
          },
          { id: 'done', type: 'end' },
        ],
      },
      { token: a.token },
    );
    const started = await t.http.post(new URL(wf.body.data.webhookUrl).pathname, { phone: '4915112345679' });
    const [run] = await eventually(async () => {
      const rows = await t.db.query(`SELECT state FROM workflow_runs WHERE id = $1 AND status = 'waiting'`, [
        started.body.runId,
      ]);
      return rows.length ? rows : null;
    });
    const failed = {
      ...run.state,
      seq: run.state.seq + 1,
      status: 'failed',
      waitingFor: null,
      error: { code: 'effect_failed', message: 'activity gave up', nodeId: 'wait' },
    };
    const activities = new TemporalActivities(t.db, {} as any);
    expect(await activities.record(started.body.runId, a.accountId, failed)).toBe(true);
    expect(await activities.record(started.body.runId, a.accountId, failed)).toBe(false); // finished: never recorded again
    const [w] = await r.waitFor(() => true, 1, 10_000);
    expect(w.body.data).toMatchObject({
      runId: started.body.runId,
      workflowId: wf.body.data.id,
      nodeId: 'wait',
      error: { message: 'activity gave up', code: 'effect_failed' },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.received).toHaveLength(1);
  });

  describe('delivery', () => {
    it('500, 500, 200: three attempts with the same webhook-id, all in the log', async () => {
      const a = await account();
      const r = await receiver();
      let n = 0;
      r.answer = () => (++n <= 2 ? 500 : 200);
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      await record(a, 'campaign.completed', { campaignId: 7 });
      const got = await r.waitFor(() => true, 3, 10_000);
      expect(new Set(got.map((w) => w.headers['webhook-id'])).size).toBe(1);
      for (const w of got)
        expect(verify(ep.secret, w)).toMatchObject({ type: 'campaign.completed', data: { campaignId: 7 } });
      expect(got[1].receivedAt - got[0].receivedAt).toBeGreaterThanOrEqual(250); // the schedule's 300 ms

      const [d] = await eventually(async () => {
        const list = await deliveries(a, ep.id);
        return list[0]?.status === 'delivered' ? list : null;
      });
      expect(d).toMatchObject({
        event_id: got[0].headers['webhook-id'],
        event_type: 'campaign.completed',
        trigger: 'event',
        status: 'delivered',
        attempts: 3,
        last_status_code: 200,
        next_attempt_at: null,
      });
      expect(d.attempt_log.map((x: any) => x.status_code)).toEqual([500, 500, 200]);
      for (const x of d.attempt_log) {
        expect(x.latency_ms).toEqual(expect.any(Number));
        expect(x.response_excerpt).toBe('ok');
      }
      expect(
        (await t.http.get(`/v1/webhook-endpoints/${ep.id}`, { token: a.token })).body.data.failing_since,
      ).toBeNull();
    });

    it('a delivery failing every attempt is failed; a manual retry attempts it again', async () => {
      const a = await account();
      const r = await receiver();
      r.status = 503;
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      await record(a, 'campaign.completed', { campaignId: 8 });
      const [d] = await eventually(async () => {
        const list = await deliveries(a, ep.id);
        return list[0]?.status === 'failed' ? list : null;
      });
      expect(d.attempt_log.map((x: any) => x.status_code)).toEqual([503, 503, 503]);
      expect((await t.http.get(`/v1/webhook-endpoints/${ep.id}`, { token: a.token })).body.data).toMatchObject({
        enabled: true,
        failing_since: expect.any(String),
      });

      r.status = 200;
      const retry = await t.http.post(`/v1/webhook-deliveries/${d.id}/retry`, undefined, { token: a.token });
      expect(retry.status).toBe(202);
      const [again] = await eventually(async () => {
        const list = await deliveries(a, ep.id);
        return list[0]?.status === 'delivered' ? list : null;
      });
      expect(again.attempt_log.map((x: any) => x.status_code)).toEqual([503, 503, 503, 200]);
      expect(new Set(r.received.map((w) => w.headers['webhook-id']))).toEqual(new Set([d.event_id]));
      expect(
        (await t.http.get(`/v1/webhook-endpoints/${ep.id}`, { token: a.token })).body.data.failing_since,
      ).toBeNull();
    });

    it('an endpoint whose secret cannot be opened: each attempt fails with the reason in the log, then the delivery is failed', async () => {
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      // sealed with a key this deployment no longer has (what `rotate-secrets` reports as unreadable)
      await t.db.query(`UPDATE webhook_endpoints SET secret_sealed = 'v1.AAAA.BBBB.CCCC' WHERE id = $1`, [ep.id]);
      await record(a, 'campaign.completed', { campaignId: 9 });
      const [d] = await eventually(async () => {
        const list = await deliveries(a, ep.id);
        return list[0]?.status === 'failed' ? list : null;
      });
      expect(d.attempts).toBe(3); // the schedule's three, not one more every lease
      for (const x of d.attempt_log)
        expect(x).toMatchObject({ status_code: null, error: expect.stringMatching(/^not sent: /) });
      expect(r.received).toHaveLength(0); // nothing unsigned went out
    });

    it('rotate-secrets never writes back a signing secret the customer rotated while it ran', async () => {
      const { resealEndpointSecrets } = await import('@switchboard/webhooks');
      const { SecretBox } = await import('@switchboard/core');
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      const deployed = SecretBox.fromConfig(t.config); // the key the API seals with
      // the key rotation's box: a new key, the deployed one as the previous
      const rotation = new SecretBox(Buffer.alloc(32, 7).toString('base64'), [t.config.ENCRYPTION_KEY]);
      let fresh = '';
      // the customer rotates the secret right after the tool read the endpoints (this one only: the others of the
      // suite keep the deployed key), before it writes them
      const racing = {
        query: async (sql: string, params?: unknown[]) => {
          const result = await t.db.query(sql, params);
          if (!sql.trimStart().startsWith('SELECT')) return result;
          const rotated = await t.http.post(`/v1/webhook-endpoints/${ep.id}/rotate-secret`, undefined, {
            token: a.token,
          });
          fresh = rotated.body.data.secret;
          return (result as Array<{ id: string }>).filter((row) => row.id === ep.id);
        },
      };
      expect(await resealEndpointSecrets(racing as never, rotation)).toEqual({
        checked: 1,
        resealed: 0,
        unreadable: [],
      });
      const [row] = await t.db.query(`SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, [ep.id]);
      expect(fresh).toMatch(/^whsec_/);
      expect(deployed.decrypt(row.secret_sealed)).toBe(fresh); // as the rotation stored it (sealed again next run)
    });

    it('retention: events older than WEBHOOK_RETENTION_DAYS go with their deliveries and attempts; recent ones stay', async () => {
      const { WebhookRetention } = await import('@switchboard/webhooks');
      const { PeriodicSweeps } = await import('@switchboard/core');
      expect(t.worker!.get(PeriodicSweeps, { strict: false }).registered).toContain('webhook-retention');
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      await record(a, 'campaign.completed', { campaignId: 11 });
      await record(a, 'campaign.completed', { campaignId: 12 });
      await r.waitFor(() => true, 2, 10_000);
      const [d] = await eventually(async () => {
        const list = await deliveries(a, ep.id);
        return list.length === 2 && list.every((x: any) => x.status === 'delivered') ? list : null;
      });
      // the first event as if recorded 40 days ago
      await t.db.query(`UPDATE webhook_events SET created_at = now() - interval '40 days' WHERE id = $1`, [d.event_id]);
      expect(await t.worker!.get(WebhookRetention, { strict: false }).prune(30)).toBeGreaterThanOrEqual(1);
      const left = await t.db.query(
        `SELECT e.id, count(DISTINCT d.id)::int AS deliveries, count(x.id)::int AS attempts
           FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
           LEFT JOIN webhook_delivery_attempts x ON x.delivery_id = d.id
          WHERE e.account_id = $1 GROUP BY e.id`,
        [a.accountId],
      );
      expect(left).toHaveLength(1);
      expect(left[0]).toMatchObject({ deliveries: 1, attempts: 1 });
      expect(left[0].id).not.toBe(d.event_id);
      const [orphans] = await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1`, [
        d.event_id,
      ]);
      expect(orphans.n).toBe(0);
    });

    it('the URL changed while an attempt was in flight: the old receiver’s 410 neither fails the delivery nor disables the endpoint', async () => {
      const a = await account();
      const fresh = await receiver();
      // the old receiver answers 410 after 1 s, once the endpoint points elsewhere
      let answered = false;
      const old = createServer((req, res) => {
        req.resume();
        req.on('end', () =>
          setTimeout(() => {
            answered = true;
            res.writeHead(410).end('gone');
          }, 1000),
        );
      });
      await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
      try {
        const ep = await createEndpoint(a, {
          url: `http://127.0.0.1:${(old.address() as AddressInfo).port}/old`,
          events: ['*'],
        });
        await record(a, 'campaign.completed', { campaignId: 13 });
        await eventually(async () => (await deliveries(a, ep.id))[0]?.attempts === 1, 5_000, 'the attempt in flight');
        expect((await patch(a, `/v1/webhook-endpoints/${ep.id}`, { url: fresh.url })).status).toBe(200);
        const [got] = await fresh.waitFor(() => true, 1, 10_000);
        expect(got.body).toMatchObject({ type: 'campaign.completed', data: { campaignId: 13 } });
        expect(answered).toBe(true);
        const [d] = await eventually(async () => {
          const list = await deliveries(a, ep.id);
          return list[0]?.status === 'delivered' ? list : null;
        });
        expect(d.attempt_log.map((x: any) => x.status_code)).toEqual([410, 200]);
        const state = (await t.http.get(`/v1/webhook-endpoints/${ep.id}`, { token: a.token })).body.data;
        expect(state).toMatchObject({ enabled: true, url: fresh.url, failing_since: null });
      } finally {
        old.closeAllConnections();
        await new Promise((resolve) => old.close(resolve));
      }
    });

    it('410 disables the endpoint at once; the account is told (event + flag)', async () => {
      const a = await account();
      const gone = await receiver();
      gone.status = 410;
      const watcher = await receiver();
      const ep = await createEndpoint(a, { url: gone.url, events: ['campaign.completed'] });
      await createEndpoint(a, { url: watcher.url, events: ['webhook_endpoint.disabled'] });
      await record(a, 'campaign.completed', { campaignId: 9 });
      const [told] = await watcher.waitFor((w) => w.body?.type === 'webhook_endpoint.disabled', 1, 10_000);
      expect(told.body.data).toEqual({
        endpointId: ep.id,
        url: gone.url,
        reason: 'gone',
        disabledAt: expect.any(String),
      });
      expect(gone.received).toHaveLength(1);
      const state = (await t.http.get(`/v1/webhook-endpoints/${ep.id}`, { token: a.token })).body.data;
      expect(state).toMatchObject({ enabled: false, disabled_reason: 'gone' });
      // turning off what is already off keeps why it went off
      const off = await patch(a, `/v1/webhook-endpoints/${ep.id}`, { enabled: false });
      expect(off.body.data).toMatchObject({ enabled: false, disabled_reason: 'gone', disabled_at: state.disabled_at });
      const [d] = await deliveries(a, ep.id);
      expect(d).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410 });

      // while disabled, new events are not delivered to it
      await record(a, 'campaign.completed', { campaignId: 10 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(gone.received).toHaveLength(1);
    });

    it('an endpoint failing for 5 days is disabled and the account is told', async () => {
      const a = await account();
      const broken = await receiver();
      broken.status = 500;
      const watcher = await receiver();
      const ep = await createEndpoint(a, { url: broken.url, events: ['campaign.completed'] });
      await createEndpoint(a, { url: watcher.url, events: ['webhook_endpoint.disabled'] });
      await t.db.query(
        `UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`,
        [ep.id],
      );
      await record(a, 'campaign.completed', { campaignId: 11 });
      const [told] = await watcher.waitFor((w) => w.body?.type === 'webhook_endpoint.disabled', 1, 10_000);
      expect(told.body.data).toMatchObject({ endpointId: ep.id, reason: 'failing' });
      expect((await t.http.get(`/v1/webhook-endpoints/${ep.id}`, { token: a.token })).body.data).toMatchObject({
        enabled: false,
        disabled_reason: 'failing',
      });
      expect(broken.received).toHaveLength(1);
    });

    it('rotation: during the overlap every delivery verifies with the old and with the new secret', async () => {
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['*'] });
      const rotated = await t.http.post(`/v1/webhook-endpoints/${ep.id}/rotate-secret`, undefined, { token: a.token });
      expect(rotated.status).toBe(200);
      expect(rotated.body.data.secret).toMatch(/^whsec_/);
      expect(rotated.body.data.secret).not.toBe(ep.secret);
      const expires = Date.parse(rotated.body.data.previous_secret_expires_at) - Date.now();
      expect(expires).toBeGreaterThan(23.9 * 3600_000);
      expect(expires).toBeLessThanOrEqual(24 * 3600_000);

      const test = await t.http.post(`/v1/webhook-endpoints/${ep.id}/test`, undefined, { token: a.token });
      expect(test.status).toBe(202);
      const [w] = await r.waitFor(() => true, 1, 10_000);
      expect(w.headers['webhook-id']).toBe(test.body.data.event_id);
      expect(verify(ep.secret, w)).toMatchObject({ type: 'webhook.test' });
      expect(verify(rotated.body.data.secret, w)).toMatchObject({ type: 'webhook.test' });

      // after the overlap only the new secret signs
      await t.db.query(
        `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
        [ep.id],
      );
      await t.http.post(`/v1/webhook-endpoints/${ep.id}/test`, undefined, { token: a.token });
      const [, later] = await r.waitFor(() => true, 2, 10_000);
      expect(verify(rotated.body.data.secret, later)).toMatchObject({ type: 'webhook.test' });
      expect(() => verify(ep.secret, later)).toThrow(/No matching signature found/);
    });

    it('replay re-sends the events of a time range with their original ids', async () => {
      const a = await account();
      const r = await receiver();
      const ep = await createEndpoint(a, { url: r.url, events: ['campaign.completed', 'workflow_run.failed'] });
      const since = new Date(Date.now() - 1000).toISOString();
      for (let i = 1; i <= 3; i++) await record(a, 'campaign.completed', { campaignId: i });
      await record(a, 'workflow_run.failed', { runId: 'r1' });
      const first = await r.waitFor(() => true, 4, 10_000);
      const ids = first.map((w) => w.headers['webhook-id']);

      const all = await t.http.post(`/v1/webhook-endpoints/${ep.id}/replay`, { since }, { token: a.token });
      expect(all.body).toEqual({ success: true, data: { replayed: 4 } });
      const again = await r.waitFor(() => true, 8, 10_000);
      expect(new Set(again.slice(4).map((w) => w.headers['webhook-id']))).toEqual(new Set(ids));
      for (const w of again.slice(4)) verify(ep.secret, w);

      const typed = await t.http.post(
        `/v1/webhook-endpoints/${ep.id}/replay`,
        { since, types: ['workflow_run.failed'] },
        { token: a.token },
      );
      expect(typed.body.data).toEqual({ replayed: 1 });
      const [, , , , , , , , ninth] = await r.waitFor(() => true, 9, 10_000);
      expect(ninth.body).toMatchObject({ type: 'workflow_run.failed', data: { runId: 'r1' } });
      expect((await deliveries(a, ep.id)).filter((d) => d.trigger === 'replay')).toHaveLength(5);
    });

    it('a receiver that never answers does not delay a healthy endpoint', async () => {
      const a = await account();
      const stuck = await receiver();
      stuck.answer = () => 'hang';
      const healthy = await receiver();
      await createEndpoint(a, { url: stuck.url, events: ['*'] });
      await createEndpoint(a, { url: healthy.url, events: ['*'] });
      await recordCompletedCampaigns(t.db, a.accountId, 20);
      const got = await healthy.waitFor(() => true, 20, 10_000);
      // all 20 while the stuck endpoint holds its slots (4): before its first request's 2-s timeout could free one
      await stuck.waitFor(() => true, 1, 5_000);
      expect(stuck.received[0].receivedAt).toBeLessThan(got[19].receivedAt); // the stuck one was holding a slot
      expect(got[19].receivedAt).toBeLessThan(stuck.received[0].receivedAt + 2000);
      expect(stuck.received.length).toBeLessThanOrEqual(4);
    });

    it('GET /v1/events pages with a cursor, oldest first, filtered by type', async () => {
      const a = await account();
      const r = await receiver();
      await createEndpoint(a, { url: r.url, events: ['campaign.completed'] });
      const since = new Date(Date.now() - 1000).toISOString();
      for (let i = 1; i <= 5; i++) await record(a, 'campaign.completed', { campaignId: i });
      await record(a, 'workflow_run.failed', { runId: 'x' });
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res: any = await t.http.get(
          `/v1/events?since=${since}&types=campaign.completed&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          { token: a.token },
        );
        expect(res.status).toBe(200);
        seen.push(...res.body.data.events.map((e: any) => e.data.campaignId));
        cursor = res.body.data.next_cursor;
      } while (cursor);
      expect(seen).toEqual([1, 2, 3, 4, 5]);
      const everything = await t.http.get(`/v1/events?since=${since}`, { token: a.token });
      expect(everything.body.data.events.map((e: any) => e.type)).toEqual([
        ...Array(5).fill('campaign.completed'),
        'workflow_run.failed',
      ]);
    });

    it('a redirect is not followed (the attempt fails, the target gets nothing)', async () => {
      const a = await account();
      const target = await receiver();
      const redirecting = await receiver();
      redirecting.answer = () => ({ status: 307, headers: { location: target.url } });
      const ep = await createEndpoint(a, { url: redirecting.url, events: ['*'] });
      await record(a, 'campaign.completed', { campaignId: 1 });
      const [d] = await eventually(async () => {
        const list = await deliveries(a, ep.id);
        return list[0]?.status === 'failed' ? list : null;
      });
      expect(d.attempt_log.map((x: any) => x.status_code)).toEqual([307, 307, 307]);
      expect(d.last_error).toBe(`redirect to ${target.url} not followed`);
      expect(target.received).toHaveLength(0);
    });

    it('an answer with a NUL byte is recorded (shown as U+FFFD), and so are the outcomes written with it', async () => {
      const [a, b] = [await account(), await account()];
      // one receiver for both accounts' endpoints: it holds both requests, then answers both at once, one with a NUL
      const held: Array<{ path: string; res: ServerResponse }> = [];
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          held.push({ path: req.url ?? '', res });
          if (held.length < 2) return;
          for (const h of held) h.res.writeHead(200).end(h.path === '/binary' ? 'ok\u0000gz' : 'ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const binary = await createEndpoint(a, { url: `${base}/binary`, events: ['*'] });
        const plain = await createEndpoint(b, { url: `${base}/plain`, events: ['*'] });
        await record(a, 'campaign.completed', { campaignId: 1 });
        await record(b, 'campaign.completed', { campaignId: 2 });
        const delivered = async (acc: TestAccount, endpointId: string) =>
          eventually(async () => {
            const list = await deliveries(acc, endpointId);
            return list[0]?.status === 'delivered' ? list[0] : null;
          }, 5_000);
        const [x, y] = [await delivered(a, binary.id), await delivered(b, plain.id)];
        expect(x.attempt_log.map((l: any) => [l.status_code, l.response_excerpt])).toEqual([[200, 'ok\uFFFDgz']]);
        expect(y.attempt_log.map((l: any) => [l.status_code, l.response_excerpt])).toEqual([[200, 'ok']]);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(held.map((h) => h.path).sort()).toEqual(['/binary', '/plain']); // nobody sent twice
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('a manual retry while an attempt is still in flight: the late answer is logged but does not undo the delivery', async () => {
      const a = await account();
      // the first request is answered 500 after 1 s; every later one at once with 200
      const requests: number[] = [];
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          requests.push(Date.now());
          if (requests.length === 1) setTimeout(() => res.writeHead(500).end('slow'), 1000);
          else res.writeHead(200).end('ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const ep = await createEndpoint(a, {
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
          events: ['*'],
        });
        await record(a, 'campaign.completed', { campaignId: 3 });
        await eventually(async () => requests.length === 1, 5_000, 'the first attempt in flight');
        const [pending] = await deliveries(a, ep.id);
        expect(
          (await t.http.post(`/v1/webhook-deliveries/${pending.id}/retry`, undefined, { token: a.token })).status,
        ).toBe(202);
        await eventually(async () => requests.length === 2, 5_000, 'the retry');
        await new Promise((resolve) => setTimeout(resolve, 1500)); // the slow answer has come, and 300 ms more
        const [d] = await deliveries(a, ep.id);
        expect(d).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200 });
        expect(d.attempt_log.map((x: any) => x.status_code).sort()).toEqual([200, 500]);
        expect(requests).toHaveLength(2);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('an endpoint deleted while its delivery is in flight: the other deliveries answered with it are recorded once', async () => {
      const a = await account();
      // one receiver for both endpoints: it holds both requests, deletes the first endpoint, then answers both at once
      const held: Array<{ path: string; res: ServerResponse }> = [];
      let gone = '';
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', async () => {
          held.push({ path: req.url ?? '', res });
          if (held.length < 2) return;
          await t.db.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [gone]);
          for (const h of held) h.res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        gone = (await createEndpoint(a, { url: `${base}/gone`, events: ['*'] })).id;
        const kept = await createEndpoint(a, { url: `${base}/kept`, events: ['*'] });
        await record(a, 'campaign.completed', { campaignId: 1 });
        const [d] = await eventually(async () => {
          const list = await deliveries(a, kept.id);
          return list[0]?.status === 'delivered' ? list : null;
        }, 5_000);
        expect(held.map((h) => h.path).sort()).toEqual(['/gone', '/kept']);
        expect(d.attempts).toBe(1);
        expect(d.attempt_log.map((x: any) => x.status_code)).toEqual([204]);
        const [left] = await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1`, [
          gone,
        ]);
        expect(left.n).toBe(0);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});

/** The SSRF guard, without ALLOW_PRIVATE_NETWORK_TARGETS: at save time and again at every delivery (after DNS). */
describe('Account webhooks: private network targets refused', () => {
  const env = appWithReceiver({ WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_POLL_INTERVAL_MS: '50' });

  it('refuses loopback, metadata, RFC 1918, IPv6 loopback and names resolving to loopback, naming the setting', async () => {
    const { t, r } = env;
    const a = await t.createAccount();
    const targets: Array<[string, RegExp]> = [
      [r.url, /target 127\.0\.0\.1 is not allowed \(loopback address\)/],
      [
        'http://169.254.169.254/latest/meta-data/',
        /target 169\.254\.169\.254 is not allowed \(link-local \/ metadata address\)/,
      ],
      ['http://10.0.0.5/hook', /target 10\.0\.0\.5 is not allowed \(private address\)/],
      ['http://172.16.3.4/hook', /\(private address\)/],
      ['https://192.168.1.20/hook', /\(private address\)/],
      ['http://[::1]:8080/hook', /target ::1 is not allowed \(loopback address\)/],
      ['http://[::ffff:127.0.0.1]/hook', /\(loopback address\)/],
      [
        'http://localhost:8080/hook',
        /target localhost resolves to (127\.0\.0\.1|::1), which is not allowed \(loopback address\)/,
      ],
    ];
    for (const [url, reason] of targets) {
      const res = await t.http.post('/v1/webhook-endpoints', { url, events: ['*'] }, { token: a.token });
      expect({ url, status: res.status, field: res.body.errors?.[0]?.field }).toEqual({
        url,
        status: 400,
        field: 'url',
      });
      expect(res.body.message).toMatch(reason);
      expect(res.body.message).toMatch(/ALLOW_PRIVATE_NETWORK_TARGETS=true/);
    }
    expect((await t.http.get('/v1/webhook-endpoints', { token: a.token })).body.data).toEqual([]);
    const update = await t.http.request('PATCH', '/v1/webhook-endpoints/ep_none', {
      token: a.token,
      body: { url: r.url },
    });
    expect(update.status).toBe(404);
  });

  it('checks again at delivery, after DNS resolution: a stored URL now resolving to loopback gets nothing', async () => {
    const { t, r } = env;
    const a = await t.createAccount();
    // as if the name had resolved to a public address when saved and to loopback now (DNS rebinding)
    const url = r.url.replace('127.0.0.1', 'localhost');
    const [ep] = await t.db.query(
      `INSERT INTO webhook_endpoints (account_id, url, events, secret_sealed) VALUES ($1, $2, ARRAY['*'], 'x') RETURNING id`,
      [a.accountId, url],
    );
    const { SecretBox } = await import('@switchboard/core');
    await t.db.query(`UPDATE webhook_endpoints SET secret_sealed = $2 WHERE id = $1`, [
      ep.id,
      new SecretBox(t.config.ENCRYPTION_KEY).encrypt(`whsec_${Buffer.alloc(32, 1).toString('base64')}`),
    ]);
    const { recordWebhookEvent } = await import('@switchboard/webhooks');
    await recordWebhookEvent(t.db, { accountId: a.accountId, type: 'campaign.completed', data: { campaignId: 1 } });
    const d = await eventually(async () => {
      const res = await t.http.get(`/v1/webhook-endpoints/${ep.id}/deliveries`, { token: a.token });
      const [first] = res.body.data.deliveries;
      return first?.status === 'failed' ? first : null;
    });
    expect(d.attempt_log).toHaveLength(1);
    expect(d.attempt_log[0]).toMatchObject({
      status_code: null,
      error: expect.stringMatching(
        /^target localhost resolves to .*loopback address\); private network targets are refused unless ALLOW_PRIVATE_NETWORK_TARGETS=true/,
      ),
    });
    expect(r.received).toHaveLength(0);
  });
});

/**
 * The delivery loop claims again as soon as an attempt finishes; the poll interval only paces looking for new events.
 * With a long poll interval, a backlog for one endpoint (2 at a time) is delivered without ever waiting for the timer.
 */
describe('Account webhooks: a backlog to a fast receiver never waits for the poll interval', () => {
  const env = appWithReceiver({
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '3000',
    WEBHOOK_ENDPOINT_CONCURRENCY: '2',
  });

  it('60 events, 2 in flight: all delivered within one poll interval of the first', async () => {
    const { t, r } = env;
    const a = await t.createAccount();
    const res = await t.http.post('/v1/webhook-endpoints', { url: r.url, events: ['*'] }, { token: a.token });
    expect(res.status).toBe(201);
    // one statement: the worker's next dispatch takes all of them at once
    await recordCompletedCampaigns(t.db, a.accountId, 60);
    const got = await r.waitFor(() => true, 60, 15_000);
    expect(new Set(got.map((w) => w.body.data.campaignId)).size).toBe(60);
    // no delivery waited for the next poll (3 s): each one followed the one before without a poll's gap
    const gaps = got.slice(1).map((w, i) => w.receivedAt - got[i].receivedAt);
    expect(Math.max(...gaps)).toBeLessThan(1500);
  });
});

/** An API + worker with settings of their own and one webhook receiver, for the blocks below the main suite. */
function appWithReceiver(settings: Record<string, string>): { t: TestApp; r: WebhookReceiver } {
  const env = {} as { t: TestApp; r: WebhookReceiver };
  beforeAll(async () => {
    env.t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', ...settings }, { worker: true });
    env.r = new WebhookReceiver();
    await env.r.start();
  });
  afterAll(async () => {
    await env.r?.stop();
    await env.t?.close();
  });
  return env;
}
