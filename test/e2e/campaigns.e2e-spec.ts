import { getQueueToken } from '@nestjs/bullmq';
import { addFanoutJobs, CampaignFanoutService, fanoutJobId } from '@switchboard/campaigns';
import { QUEUES } from '@switchboard/core';
import type { Queue } from 'bullmq';
import { waitsForLock } from '../helpers/lock-waits';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, settledCount, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** Campaigns (grant /campaigns): create, progress, state machine, the SPEC's trigger endpoint, fan-out through the sandbox. */
describe('Campaigns', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let h: ReturnType<typeof messagingHelpers>;

  beforeAll(async () => {
    t = await startTestApp(
      { RATE_LIMIT_PER_MINUTE: '100000', ALLOW_PRIVATE_NETWORK_TARGETS: 'true' },
      { worker: true },
    );
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 60, read: 120 }, autoReview: false });
    h = messagingHelpers(t, () => sandbox);
  });
  afterAll(async () => {
    await sandbox.close();
    await t.close();
  });
  beforeEach(async () => {
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });

  const greeting = () =>
    h.approvedTemplate(account, [h.body('Hi {{first}}, your code is {{code}}.', { first: 'Ann', code: 'A1' })]);
  const createCampaign = (body: Record<string, unknown>, acct = account) =>
    t.http.post(
      '/v2/campaigns',
      { name: 'Spring sale', messagingPhoneId: acct.messagingPhoneId, ...body },
      { token: acct.token },
    );
  const trigger = (
    id: number | string,
    body: unknown,
    opts: { query?: string; key?: string; acct?: TestAccount } = {},
  ) =>
    t.http.post(`/campaigns/trigger_campaign-api/${id}${opts.query ?? ''}`, body, {
      token: (opts.acct ?? account).token,
      headers: opts.key ? { 'idempotency-key': opts.key } : {},
    });
  const getCampaign = (id: number, acct = account) => t.http.get(`/v2/campaigns/${id}`, { token: acct.token });
  const act = (id: number, action: string, acct = account) =>
    t.http.post(`/v2/campaigns/${id}/${action}`, undefined, { token: acct.token });
  const bodyTexts = (m: any) =>
    m.payload.template.components.find((c: any) => c.type === 'body').parameters.map((p: any) => p.text);

  let seeded = 0;
  /** A group of `n` fresh contacts (direct inserts: fast, and the API for groups has its own suite). */
  async function seedGroup(
    n: number,
    acct = account,
  ): Promise<{ groupId: number; numbers: string[]; contactIds: string[] }> {
    const [g] = await t.db.query(`INSERT INTO contact_groups (account_id, name) VALUES ($1, $2) RETURNING id`, [
      acct.accountId,
      h.unique('group'),
    ]);
    // distinct however many are asked for at once (h.customer() repeats after 90 in one millisecond)
    const numbers = Array.from(
      { length: n },
      () => `4916${String(Date.now() % 1e5).padStart(5, '0')}${String(++seeded % 1e5).padStart(5, '0')}`,
    );
    const rows: Array<{ id: string }> = await t.db.query(
      `INSERT INTO contacts (account_id, contact_number, name) SELECT $1, x, 'Member' FROM unnest($2::text[]) x RETURNING id`,
      [acct.accountId, numbers],
    );
    await t.db.query(`INSERT INTO contact_group_members (group_id, contact_id) SELECT $1, unnest($2::bigint[])`, [
      g.id,
      rows.map((r) => r.id),
    ]);
    return { groupId: Number(g.id), numbers, contactIds: rows.map((r) => String(r.id)) };
  }

  const progressOf = async (id: number) => (await getCampaign(id)).body.data.progress;
  /** The progress counted from the rows themselves: the trigger-kept counters (campaign_counts) must say the same. */
  async function recount(id: number) {
    const [[a], [r], [m]] = await Promise.all([
      t.db.query(`SELECT count(*)::int AS n FROM campaign_audience WHERE campaign_id = $1`, [id]),
      t.db.query(
        `SELECT count(*)::int AS recipients, count(*) FILTER (WHERE status = 'pending')::int AS pending,
                count(*) FILTER (WHERE status = 'skipped_blocked')::int AS skipped_blocked,
                count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled
           FROM campaign_recipients WHERE campaign_id = $1`,
        [id],
      ),
      t.db.query(
        `SELECT count(*) FILTER (WHERE status IN ('queued', 'paused'))::int AS queued,
                count(*) FILTER (WHERE status IN ('accepted', 'sent', 'delivered', 'read'))::int AS sent,
                count(*) FILTER (WHERE status IN ('delivered', 'read'))::int AS delivered, count(*) FILTER (WHERE status = 'read')::int AS read,
                count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
                count(*) FILTER (WHERE replied_at IS NOT NULL)::int AS replied
           FROM messages WHERE campaign_id = $1`,
        [id],
      ),
    ]);
    return {
      audience: a.n,
      recipients: r.recipients,
      pending: r.pending,
      queued: m.queued,
      sent: m.sent,
      delivered: m.delivered,
      read: m.read,
      failed: m.failed + r.failed,
      replied: m.replied,
      skipped_blocked: r.skipped_blocked,
      cancelled: m.cancelled + r.cancelled,
    };
  }
  /** Progress once `sent` stops moving (sends already handed to the platform pipeline finish after a pause or cancel). */
  const settledProgress = async (id: number) => {
    await settledCount(async () => (await progressOf(id)).sent, 'sent');
    return progressOf(id);
  };
  /** A started campaign of `template` to `recipients` new contacts at `rate` messages/s, once `sent` have gone out. */
  async function sendingCampaign(template: string, recipients: number, rate: number, sent: number) {
    const { groupId, numbers } = await seedGroup(recipients);
    await t.db.query(`UPDATE phone_numbers SET messages_per_second = $2 WHERE account_id = $1`, [
      account.accountId,
      rate,
    ]);
    const id = (
      await createCampaign({ templateName: template, variables: { name: 'm', custom_code: 'c' }, group_ids: [groupId] })
    ).body.data.campaign_id as number;
    expect((await act(id, 'start')).status).toBe(200);
    await eventually(async () => (await progressOf(id)).sent >= sent, 10_000, 'some sent');
    return { id, numbers };
  }
  /** The campaign once it paused itself (its template paused, the platform refusing its sends). */
  const pausedItself = (id: number) =>
    eventually(
      async () => {
        const c = (await getCampaign(id)).body.data;
        return c.status === 'paused' ? c : null;
      },
      20_000,
      'the campaign pauses itself',
    );

  describe('POST /v2/campaigns, GET /v2/campaigns, GET /v2/campaigns/{id}', () => {
    it('201: the campaign as a draft, variables in the order given, progress at zero', async () => {
      const tpl = await greeting();
      const { groupId } = await seedGroup(2);
      const res = await createCampaign({
        templateName: tpl,
        variables: { custom_z: 'Z', name: 'there' },
        group_ids: [groupId],
        callback_url: 'http://127.0.0.1:9/cb',
        event: ['delivered', 'read'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        data: {
          campaign_id: expect.any(Number),
          name: 'Spring sale',
          status: 'draft',
          messagingPhoneId: account.messagingPhoneId,
          templateName: tpl,
          language: 'en_US',
          variables: { custom_z: 'Z', name: 'there' },
          mediaUrl: null,
          documentName: null,
          callback_url: 'http://127.0.0.1:9/cb',
          event: ['delivered', 'read'],
          group_ids: [groupId],
          created_at: expect.any(String),
          updated_at: expect.any(String),
          started_at: null,
          completed_at: null,
          scheduledAt: null,
          schedule_error: null,
          paused_reason: null,
          progress: {
            audience: 0,
            recipients: 0,
            pending: 0,
            queued: 0,
            sent: 0,
            delivered: 0,
            read: 0,
            failed: 0,
            replied: 0,
            skipped_blocked: 0,
            cancelled: 0,
          },
        },
      });
      expect(Object.keys(res.body.data.variables)).toEqual(['custom_z', 'name']);
      const got = await getCampaign(res.body.data.campaign_id);
      expect(got.status).toBe(200);
      expect(Object.keys(got.body.data.variables)).toEqual(['custom_z', 'name']);
    });

    it('400: a template that is not APPROVED, an unknown number, unknown groups, bad fields', async () => {
      const pending = await h.approvedTemplate(account, [h.body('Hello {{first}}, welcome.', { first: 'A' })], {
        approve: false,
      });
      const notApproved = await createCampaign({ templateName: pending });
      expect(notApproved.status).toBe(400);
      expect(notApproved.body.errors).toEqual([
        { field: 'templateName', message: expect.stringContaining('not approved') },
      ]);

      const unknown = await createCampaign({ templateName: 'no_such_template' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.message).toBe('templateName no_such_template: No Template found');

      const withImage = await h.approvedTemplate(account, [
        { type: 'image', image: { link: 'https://cdn.example.com/h.jpg' } },
        h.body('Hello {{first}}, look.', { first: 'A' }),
      ]);
      for (const scheduledAt of [undefined, new Date(Date.now() + 3_600_000).toISOString()]) {
        const noMedia = await createCampaign({ templateName: withImage, variables: { name: 'x' }, scheduledAt });
        expect(noMedia.status).toBe(400);
        expect(noMedia.body.errors).toEqual([
          { field: 'mediaUrl', message: `mediaUrl is required: template ${withImage} has a image header` },
        ]);
      }

      const tpl = await greeting();
      const phone = await createCampaign({ templateName: tpl, messagingPhoneId: '999' });
      expect(phone.status).toBe(400);
      expect(phone.body.errors[0].field).toBe('messagingPhoneId');

      const groups = await createCampaign({ templateName: tpl, group_ids: [987654321] });
      expect(groups.status).toBe(400);
      expect(groups.body).toMatchObject({
        message: 'Not all groups exist in the database for this account.',
        missingGroups: [987654321],
      });

      const bad = await t.http.post(
        '/v2/campaigns',
        { name: '', variables: [], event: ['opened'] },
        { token: account.token },
      );
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: any) => e.field)).toEqual([
        'name',
        'messagingPhoneId',
        'templateName',
        'variables',
        'event',
      ]);
      expect(await t.db.query(`SELECT 1 FROM campaigns WHERE account_id = $1`, [account.accountId])).toHaveLength(0);
    });

    it('list: newest first, paginated; pageSize above 100 is a 400', async () => {
      const tpl = await greeting();
      for (const name of ['one', 'two', 'three']) await createCampaign({ name, templateName: tpl });
      const page1 = await t.http.get('/v2/campaigns?page=1&pageSize=2', { token: account.token });
      expect(page1.status).toBe(200);
      expect(page1.body.data).toMatchObject({ page: 1, pageSize: 2, total: 3 });
      expect(page1.body.data.campaigns.map((c: any) => c.name)).toEqual(['three', 'two']);
      const page2 = await t.http.get('/v2/campaigns?page=2&pageSize=2', { token: account.token });
      expect(page2.body.data.campaigns.map((c: any) => c.name)).toEqual(['one']);
      const tooBig = await t.http.get('/v2/campaigns?pageSize=101', { token: account.token });
      expect(tooBig.status).toBe(400);
      expect(tooBig.body.errors[0].field).toBe('pageSize');
    });

    it("404 for an unknown id and for another account's campaign (read, trigger, actions)", async () => {
      const tpl = await greeting();
      const mine = (await createCampaign({ templateName: tpl })).body.data.campaign_id;
      const other = await t.createAccount({ apiBaseUrl: sandbox.url });
      expect((await getCampaign(mine, other)).status).toBe(404);
      expect((await getCampaign(mine, other)).body).toMatchObject({ message: 'Campaign not found' });
      expect((await act(mine, 'start', other)).status).toBe(404);
      const trig = await trigger(mine, { contacts: [{ phoneNumber: h.customer() }] }, { acct: other });
      expect(trig.status).toBe(404);
      expect((await t.http.get('/v2/campaigns', { token: other.token })).body.data.total).toBe(0);
      expect((await getCampaign(123456789)).status).toBe(404);
      expect((await t.http.get('/v2/campaigns/abc', { token: account.token })).status).toBe(404);
    });
  });

  describe('POST /campaigns/trigger_campaign-api/{campaign_id}', () => {
    it('200 with an empty body; new and existing contacts are sent, each with its variables over the defaults', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'friend', custom_code: 'DEFAULT' } }))
        .body.data.campaign_id;
      const existing = h.customer();
      await t.http.post(
        '/contacts/create-contact',
        { contact_number: existing, name: 'Old name' },
        { token: account.token },
      );
      const fresh = h.customer();
      const res = await trigger(id, {
        contacts: [
          { phoneNumber: `+${fresh}`, name: 'Fresh', email: 'fresh@example.com', variables: { name: 'Fresh' } },
          { phoneNumber: existing, name: 'New name', variables: { custom_code: 'X-9' } },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toBeUndefined(); // empty body
      expect(res.headers.get('content-length') ?? '0').toBe('0');

      const a = await eventually(async () => (await h.received(account, fresh))[0], 10_000, 'fresh contact message');
      const b = await eventually(
        async () => (await h.received(account, existing))[0],
        10_000,
        'existing contact message',
      );
      expect(a.payload.template).toMatchObject({ name: tpl, language: { code: 'en_US' } });
      expect(bodyTexts(a)).toEqual(['Fresh', 'DEFAULT']);
      expect(bodyTexts(b)).toEqual(['friend', 'X-9']);
      const [created] = await t.db.query(
        `SELECT name, email FROM contacts WHERE account_id = $1 AND contact_number = $2`,
        [account.accountId, fresh],
      );
      expect(created).toEqual({ name: 'Fresh', email: 'fresh@example.com' });
      const [kept] = await t.db.query(`SELECT name FROM contacts WHERE account_id = $1 AND contact_number = $2`, [
        account.accountId,
        existing,
      ]);
      expect(kept.name).toBe('Old name'); // found, not overwritten
      const progress = await eventually(async () => {
        const p = await progressOf(id);
        return p.sent === 2 && p;
      });
      expect(progress).toMatchObject({ audience: 2, recipients: 2, pending: 0, failed: 0, skipped_blocked: 0 });
    });

    it('contacts already in the audience are sent again only with includeExistingContacts=true', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'you', custom_code: 'C' } })).body.data
        .campaign_id;
      const a = h.customer();
      const b = h.customer();
      expect((await trigger(id, { contacts: [{ phoneNumber: a }] })).status).toBe(200);
      await eventually(async () => (await h.received(account, a)).length === 1);
      // again without the flag: a is already in the audience, b is new
      expect((await trigger(id, { contacts: [{ phoneNumber: a }, { phoneNumber: b }] })).status).toBe(200);
      await eventually(async () => (await h.received(account, b)).length === 1);
      // with the flag: both are sent
      expect(
        (
          await trigger(
            id,
            { contacts: [{ phoneNumber: a, variables: { custom_code: 'AGAIN' } }, { phoneNumber: b }] },
            { query: '?includeExistingContacts=true' },
          )
        ).status,
      ).toBe(200);
      await eventually(
        async () => (await h.received(account, a)).length === 2 && (await h.received(account, b)).length === 2,
      );
      expect(bodyTexts((await h.received(account, a))[1])).toEqual(['you', 'AGAIN']);
      await new Promise((r) => setTimeout(r, 500));
      expect(await h.received(account, a)).toHaveLength(2);
      expect((await progressOf(id)).audience).toBe(2);
    });

    /** start and trigger are both 409 with `reason`, and nothing of the campaign is stored or sent */
    async function expectCannotSend(id: number, reason: string) {
      const started = await act(id, 'start');
      expect({ status: started.status, message: started.body.message }).toEqual({
        status: 409,
        message: `Cannot start campaign ${id}: ${reason}`,
      });
      const triggered = await trigger(id, { contacts: [{ phoneNumber: h.customer() }] });
      expect({ status: triggered.status, message: triggered.body.message }).toEqual({
        status: 409,
        message: `Campaign ${id} cannot send: ${reason}`,
      });
      const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1`, [id]);
      expect(n).toBe(0);
    }

    it('a campaign whose number was disconnected since is refused at start and trigger (409), nothing sent', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'you', custom_code: 'C' } })).body.data
        .campaign_id;
      await t.db.query(`UPDATE phone_numbers SET status = 'DISCONNECTED' WHERE messaging_phone_id = $1`, [
        account.messagingPhoneId,
      ]);
      const reason = `its number ${account.messagingPhoneId} is not connected any more (see GET /account/get)`;
      await expectCannotSend(id, reason);
    });

    it('a template of another WhatsApp Business Account than the number: refused at create (400), start and trigger (409)', async () => {
      const tpl = await greeting();
      const other = await h.numberInOtherWaba(account, '7');
      const reason = `Template belongs to the WhatsApp Business Account of number ${account.messagingPhoneId}: send it from a number of that account`;
      const before = await t.db.query(`SELECT count(*)::int AS n FROM campaigns WHERE account_id = $1`, [
        account.accountId,
      ]);
      const refused = await createCampaign({
        templateName: tpl,
        messagingPhoneId: other,
        variables: { name: 'you', custom_code: 'C' },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ field: 'templateName', message: `templateName ${tpl}: ${reason}` }]);
      expect(
        await t.db.query(`SELECT count(*)::int AS n FROM campaigns WHERE account_id = $1`, [account.accountId]),
      ).toEqual(before);

      // created on the template's number; then the template is deleted and created again in the other WABA
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'you', custom_code: 'C' } })).body.data
        .campaign_id;
      await t.db.query(
        `UPDATE templates SET phone_number_id = (SELECT id FROM phone_numbers WHERE messaging_phone_id = $2)
          WHERE account_id = $1 AND name = $3`,
        [account.accountId, other, tpl],
      );
      const moved = `Template ${tpl}: Template belongs to the WhatsApp Business Account of number ${other}: send it from a number of that account`;
      await expectCannotSend(id, moved);
    });

    it("a trigger fills custom.<key> variables from a known contact's custom fields (the fallback for a new one)", async () => {
      const tpl = await greeting();
      const id = (
        await createCampaign({
          templateName: tpl,
          variables: { name: 'you', custom_code: { field: 'custom.tier', fallback: 'standard' } },
        })
      ).body.data.campaign_id;
      const known = h.customer();
      const unknown = h.customer();
      await t.db.query(`INSERT INTO contacts (account_id, contact_number, custom_fields) VALUES ($1, $2, $3)`, [
        account.accountId,
        known,
        { tier: 'gold' },
      ]);
      expect((await trigger(id, { contacts: [{ phoneNumber: known }, { phoneNumber: unknown }] })).status).toBe(200);
      await eventually(
        async () =>
          (await h.received(account, known)).length === 1 && (await h.received(account, unknown)).length === 1,
      );
      expect(bodyTexts((await h.received(account, known))[0])).toEqual(['you', 'gold']);
      expect(bodyTexts((await h.received(account, unknown))[0])).toEqual(['you', 'standard']);
    });

    it('a contact name cut at 200 characters keeps its emoji whole, and the name variable reaches the platform', async () => {
      const tpl = await greeting();
      const id = (
        await createCampaign({
          templateName: tpl,
          variables: { name: { field: 'name', fallback: 'there' }, custom_code: 'C' },
        })
      ).body.data.campaign_id;
      const to = h.customer();
      const name = `${'a'.repeat(199)}😀`;
      expect((await trigger(id, { contacts: [{ phoneNumber: to, name }] })).status).toBe(200);
      // the cut ended on half of the emoji, which jsonb refused: the fan-out failed for good and nothing was sent
      await eventually(async () => (await h.received(account, to)).length === 1, 10_000, 'the message sent');
      expect(bodyTexts((await h.received(account, to))[0])).toEqual(['a'.repeat(199), 'C']);
    });

    it('a retried trigger with the same Idempotency-Key does nothing new (200 again)', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'x', custom_code: 'y' } })).body.data
        .campaign_id;
      const to = h.customer();
      const body = { contacts: [{ phoneNumber: to }] };
      const responses = await Promise.all([
        trigger(id, body, { key: 'order-1', query: '?includeExistingContacts=true' }),
        trigger(id, body, { key: 'order-1', query: '?includeExistingContacts=true' }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 200]);
      await eventually(async () => (await h.received(account, to)).length === 1);
      expect((await trigger(id, body, { key: 'order-1', query: '?includeExistingContacts=true' })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 700));
      expect(await h.received(account, to)).toHaveLength(1);
      const triggers = await t.db.query(`SELECT id FROM campaign_triggers WHERE campaign_id = $1`, [id]);
      expect(triggers).toHaveLength(1);
      // a different key is a new trigger
      expect((await trigger(id, body, { key: 'order-2', query: '?includeExistingContacts=true' })).status).toBe(200);
      await eventually(async () => (await h.received(account, to)).length === 2);

      // cancelled since: a retry of an accepted trigger (its answer lost) is still 200, a new one is 409
      expect((await act(id, 'cancel')).status).toBe(200);
      expect((await trigger(id, body, { key: 'order-2', query: '?includeExistingContacts=true' })).status).toBe(200);
      expect((await trigger(id, body, { key: 'order-3', query: '?includeExistingContacts=true' })).status).toBe(409);
      expect(await h.received(account, to)).toHaveLength(2);
    });

    it('400 names the index and field; nothing is recorded or sent when any contact is invalid', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'x', custom_code: 'y' } })).body.data
        .campaign_id;
      const good = h.customer();
      const res = await trigger(id, {
        contacts: [
          { phoneNumber: good },
          { phoneNumber: h.customer() },
          { phoneNumber: h.customer(), email: 'not-an-email' },
          { phoneNumber: '12' },
          { name: 'no number' },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: expect.stringMatching(/^contacts\[2\]\.email must be an email address/),
        field: 'contacts[2].email',
        errors: [
          { field: 'contacts[2].email', message: 'contacts[2].email must be an email address' },
          { field: 'contacts[3].phoneNumber', message: expect.stringMatching(/^contacts\[3\]\.phoneNumber must be/) },
          {
            field: 'contacts[4].phoneNumber',
            message: expect.stringMatching(/^contacts\[4\]\.phoneNumber is required/),
          },
        ],
      });
      const vars = await trigger(id, {
        contacts: [{ phoneNumber: good }, { phoneNumber: h.customer(), variables: { custom_extra: 'too many' } }],
      });
      expect(vars.status).toBe(400);
      expect(vars.body.errors).toEqual([
        { field: 'contacts[1].variables', message: expect.stringContaining('expects 2 body variable(s)') },
      ]);
      for (const body of [{}, { contacts: [] }, { contacts: 'x' }, []]) {
        const r = await trigger(id, body);
        expect(r.status).toBe(400);
        expect(r.body.errors[0].field).toMatch(/^(contacts|body)$/);
      }
      expect(await t.db.query(`SELECT 1 FROM campaign_triggers WHERE campaign_id = $1`, [id])).toHaveLength(0);
      expect(
        await t.db.query(`SELECT 1 FROM contacts WHERE account_id = $1 AND contact_number = $2`, [
          account.accountId,
          good,
        ]),
      ).toHaveLength(0);
    });

    it('404 with a clear message for an unknown campaign', async () => {
      const res = await trigger(99999999, { contacts: [{ phoneNumber: h.customer() }] });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: 'Campaign not found', campaign_id: '99999999' });
    });

    it('blocked contacts are skipped and counted', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'x', custom_code: 'y' } })).body.data
        .campaign_id;
      const blocked = h.customer();
      const created = await t.http.post(
        '/contacts/create-contact',
        { contact_number: blocked },
        { token: account.token },
      );
      const patched = await t.http.request('PATCH', `/v2/contacts/${created.body.data.contact.contact_id}`, {
        body: { isBlocked: true },
        token: account.token,
      });
      expect(patched.status).toBe(200);
      const ok = h.customer();
      expect((await trigger(id, { contacts: [{ phoneNumber: blocked }, { phoneNumber: ok }] })).status).toBe(200);
      await eventually(async () => (await h.received(account, ok)).length === 1);
      const p = await eventually(async () => {
        const x = await progressOf(id);
        return x.sent === 1 && x;
      });
      expect(p).toMatchObject({ audience: 2, recipients: 2, skipped_blocked: 1 });
      expect(await h.received(account, blocked)).toHaveLength(0);
    });

    it('a completed campaign still sending what a trigger asked for can be cancelled: the rest is not sent', async () => {
      const slow = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: 2 });
      const tpl = await h.approvedTemplate(slow, [h.body('Hi {{first}}.', { first: 'Ann' })]);
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'you' } }, slow)).body.data.campaign_id;
      expect((await act(id, 'start', slow)).status).toBe(200);
      await eventually(async () => (await getCampaign(id, slow)).body.data.status === 'completed');
      const completedAt = (await getCampaign(id, slow)).body.data.completed_at;
      const numbers = Array.from({ length: 20 }, () => h.customer());
      expect(
        (await trigger(id, { contacts: numbers.map((phoneNumber) => ({ phoneNumber })) }, { acct: slow })).status,
      ).toBe(200);
      const cancelled = await act(id, 'cancel', slow);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data.status).toBe('cancelled');
      expect(cancelled.body.data.completed_at).toBe(completedAt); // when it completed, kept
      // the sends already on their way (about 2 s of the rate) still go out; every other recipient is cancelled, and
      // nothing more goes out afterwards (2.5 s without a send, longer than that bound)
      const sentCount = async () => (await Promise.all(numbers.map((n) => h.received(slow, n)))).flat().length;
      await eventually(
        async () => (await getCampaign(id, slow)).body.data.progress.cancelled === 20 - (await sentCount()),
        10_000,
        'each recipient sent or cancelled',
      );
      const sent = await settledCount(sentCount, 'sends at the platform');
      expect(sent).toBeLessThanOrEqual(8); // at 2/s: what was on its way when the cancel came
      expect((await getCampaign(id, slow)).body.data.progress.cancelled).toBe(20 - sent);
    });

    it('409 for a cancelled campaign', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl })).body.data.campaign_id;
      expect((await act(id, 'cancel')).status).toBe(200);
      const res = await trigger(id, { contacts: [{ phoneNumber: h.customer() }] });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(`Campaign ${id} is cancelled: it cannot be triggered`);
    });
  });

  describe('start, pause, resume, cancel', () => {
    it('twelve starts of one campaign at once on a pool of 2 connections: one starts it, the others are 409, none waits for good', async () => {
      const small = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', DATABASE_POOL_SIZE: '2' });
      const box = await startTestSandbox(small, { autoReview: false });
      try {
        const acc = await small.createAccount({ apiBaseUrl: box.url });
        const helpers = messagingHelpers(small, () => box);
        const tpl = await helpers.approvedTemplate(acc, [helpers.body('Hi there.')]);
        const [g] = await small.db.query(
          `INSERT INTO contact_groups (account_id, name) VALUES ($1, 'race') RETURNING id`,
          [acc.accountId],
        );
        const [c] = await small.db.query(
          `INSERT INTO contacts (account_id, contact_number, name) VALUES ($1, '491700000001', 'A') RETURNING id`,
          [acc.accountId],
        );
        await small.db.query(`INSERT INTO contact_group_members (group_id, contact_id) VALUES ($1, $2)`, [g.id, c.id]);
        const created = await small.http.post(
          '/v2/campaigns',
          { name: 'Race', messagingPhoneId: acc.messagingPhoneId, templateName: tpl, group_ids: [Number(g.id)] },
          { token: acc.token },
        );
        expect(created.status).toBe(201);
        const id = created.body.data.campaign_id;
        const statuses = await Promise.all(
          Array.from({ length: 12 }, () =>
            small.http.post(`/v2/campaigns/${id}/start`, undefined, { token: acc.token }).then((r) => r.status),
          ),
        );
        expect(statuses.filter((s) => s === 200)).toHaveLength(1);
        expect(statuses.filter((s) => s === 409)).toHaveLength(11);
      } finally {
        await box.close();
        await small.close();
      }
    }, 60_000);

    it('start sends to the group audience; progress moves to delivered and read with the status webhooks', async () => {
      const tpl = await greeting();
      const { groupId, numbers, contactIds } = await seedGroup(25);
      await t.db.query(`UPDATE contacts SET is_blocked = true WHERE id = $1`, [contactIds[3]]);
      const id = (
        await createCampaign({
          templateName: tpl,
          variables: { name: 'member', custom_code: 'G' },
          group_ids: [groupId],
        })
      ).body.data.campaign_id;
      const started = await act(id, 'start');
      expect(started.status).toBe(200);
      expect(started.body.data.status).toBe('running');
      const done = await eventually(
        async () => {
          const p = (await getCampaign(id)).body.data;
          return p.status === 'completed' && p.progress.read === 24 && p;
        },
        20_000,
        'all read',
      );
      expect(done.progress).toMatchObject({
        audience: 25,
        recipients: 25,
        queued: 0,
        sent: 24,
        delivered: 24,
        read: 24,
        failed: 0,
        skipped_blocked: 1,
      });
      expect(done.completed_at).toEqual(expect.any(String));
      for (const [i, n] of numbers.entries()) expect(await h.received(account, n)).toHaveLength(i === 3 ? 0 : 1);
      // a customer answers: replied moves too
      await h.customerWrites(account, numbers[0], 'count me in');
      expect(
        (await eventually(async () => (await progressOf(id)).replied === 1 && progressOf(id), 10_000, 'replied'))
          .replied,
      ).toBe(1);
      expect(await progressOf(id)).toEqual(await recount(id));
      expect(bodyTexts((await h.received(account, numbers[0]))[0])).toEqual(['member', 'G']);
    });

    it('a fan-out job out of retries (the database away) is taken up again by the sweep: the campaign completes', async () => {
      const tpl = await greeting();
      const { groupId, numbers } = await seedGroup(5);
      const id = (
        await createCampaign({
          templateName: tpl,
          variables: { name: 'member', custom_code: 'S' },
          group_ids: [groupId],
        })
      ).body.data.campaign_id;
      const fanout = t.worker!.get(CampaignFanoutService);
      const queue = t.worker!.get<Queue>(getQueueToken(QUEUES.campaigns));
      const runBatch = jest.spyOn(fanout, 'runBatch').mockRejectedValue(new Error('database unreachable (injected)'));
      try {
        expect((await act(id, 'start')).status).toBe(200);
        const [trigger] = await t.db.query(`SELECT id FROM campaign_triggers WHERE campaign_id = $1`, [id]);
        const jobId = fanoutJobId(String(trigger.id), 0);
        // 20 attempts 500 ms apart, then the job has failed for good: it is gone, not kept as failed
        await eventually(
          async () => runBatch.mock.calls.length >= 20 && !(await queue.getJob(jobId)),
          30_000,
          'the fan-out job out of retries',
        );
      } finally {
        runBatch.mockRestore();
      }
      expect((await getCampaign(id)).body.data.status).toBe('running');
      await fanout.sweep(); // the periodic sweep, run now rather than in up to 30 s
      const done = await eventually(
        async () => {
          const p = (await getCampaign(id)).body.data;
          return p.status === 'completed' && p.progress.sent === 5 && p;
        },
        20_000,
        'completed after the sweep',
      );
      expect(done.progress).toMatchObject({ recipients: 5, queued: 0, sent: 5 });
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
    }, 60_000);

    it('a group member known only by a business-scoped user id is sent the template with recipient', async () => {
      const tpl = await greeting();
      const { groupId, numbers } = await seedGroup(2);
      const userId = `BR.${Date.now()}7`;
      const [c] = await t.db.query(
        `INSERT INTO contacts (account_id, whatsapp_user_id, name) VALUES ($1, $2, 'Username user') RETURNING id`,
        [account.accountId, userId],
      );
      await t.db.query(`INSERT INTO contact_group_members (group_id, contact_id) VALUES ($1, $2)`, [groupId, c.id]);
      const id = (
        await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'u' }, group_ids: [groupId] })
      ).body.data.campaign_id;
      expect((await act(id, 'start')).status).toBe(200);
      const [sent] = await eventually(
        async () => {
          const got = await h.received(account, userId);
          return got.length ? got : null;
        },
        20_000,
        'the template to the user id',
      );
      expect(sent.payload).toMatchObject({ recipient: userId, type: 'template' });
      expect(sent.payload.to).toBeUndefined();
      for (const n of numbers)
        expect(await eventually(async () => (await h.received(account, n)).length === 1 || null)).toBe(true);
    });

    it('start skips group members an API trigger already reached', async () => {
      const tpl = await greeting();
      const { groupId, numbers } = await seedGroup(3);
      const id = (
        await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'c' }, group_ids: [groupId] })
      ).body.data.campaign_id;
      expect((await trigger(id, { contacts: [{ phoneNumber: numbers[0] }] })).status).toBe(200);
      await eventually(async () => (await h.received(account, numbers[0])).length === 1);
      expect((await act(id, 'start')).status).toBe(200);
      await eventually(
        async () =>
          (await getCampaign(id)).body.data.status === 'completed' &&
          (await h.received(account, numbers[2])).length === 1,
      );
      expect(await h.received(account, numbers[0])).toHaveLength(1);
      expect((await progressOf(id)).audience).toBe(3);
    });

    it('a start and an API trigger reaching the same contact at the same moment send it one message', async () => {
      const tpl = await greeting();
      const { groupId, numbers, contactIds } = await seedGroup(3);
      const id = (
        await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'c' }, group_ids: [groupId] })
      ).body.data.campaign_id;
      // an API trigger for the second member, its transaction not committed yet (as TriggerService writes it)
      const other = t.db.createQueryRunner();
      await other.connect();
      await other.startTransaction();
      let apiTrigger: string;
      try {
        [{ id: apiTrigger }] = await other.query(
          `INSERT INTO campaign_triggers (campaign_id, kind, include_existing, request, contacts, recipients)
           VALUES ($1, 'api', false, '{}', 1, 1) RETURNING id::text`,
          [id],
        );
        await other.query(`INSERT INTO campaign_audience (campaign_id, contact_id) VALUES ($1, $2)`, [
          id,
          contactIds[1],
        ]);
        await other.query(
          `INSERT INTO campaign_recipients (campaign_id, trigger_id, contact_id, variables, status)
           VALUES ($1, $2, $3, '{"name": "m", "custom_code": "c"}', 'pending')`,
          [id, apiTrigger, contactIds[1]],
        );
        expect((await act(id, 'start')).status).toBe(200);
        // the start's batch reaches that contact and waits for the trigger's transaction
        await waitsForLock(t, 'campaign_audience', 'the start waits for the trigger');
        await other.commitTransaction();
      } finally {
        if (other.isTransactionActive) await other.rollbackTransaction();
        await other.release();
      }
      await t.worker!.get(CampaignFanoutService).sweep(); // the trigger's fan-out job, as its API call queues it
      await eventually(
        async () =>
          (await getCampaign(id)).body.data.status === 'completed' &&
          (await Promise.all(numbers.map((n) => h.received(account, n)))).every((got) => got.length > 0),
        20_000,
        'every member sent',
      );
      await new Promise((r) => setTimeout(r, 500)); // a second message would be on its way
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
      expect(await progressOf(id)).toEqual(await recount(id));
    });

    it('a trigger whose transaction a cancel overtakes is refused (409) or cancelled with the campaign: nothing left pending', async () => {
      const tpl = await greeting();
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'c' } })).body.data
        .campaign_id;
      const number = h.customer();
      // the trigger's contact is being created by another transaction: the trigger waits for it in its own
      const other = t.db.createQueryRunner();
      await other.connect();
      await other.startTransaction();
      let cancelled: Promise<any> | undefined;
      let triggered: Promise<any> | undefined;
      try {
        await other.query(`INSERT INTO contacts (account_id, contact_number, name) VALUES ($1, $2, 'Elsewhere')`, [
          account.accountId,
          number,
        ]);
        triggered = trigger(id, { contacts: [{ phoneNumber: number }] });
        await waitsForLock(t, 'INSERT INTO contacts', 'the trigger waits for the contact');
        cancelled = act(id, 'cancel');
        await new Promise((r) => setTimeout(r, 300)); // the cancel has its turn: it waits for the trigger, or it is done
        await other.commitTransaction();
      } finally {
        if (other.isTransactionActive) await other.rollbackTransaction();
        await other.release();
      }
      const [triggerAnswer, cancelAnswer] = await Promise.all([triggered, cancelled]);
      expect(cancelAnswer.status).toBe(200);
      expect([200, 409]).toContain(triggerAnswer.status);
      const progress = await progressOf(id);
      expect(progress.pending).toBe(0);
      expect(progress).toEqual(await recount(id));
      await new Promise((r) => setTimeout(r, 500));
      expect(await h.received(account, number)).toHaveLength(0);
    });

    it('pause holds the fan-out and the queued sends; resume sends the rest, each recipient exactly once', async () => {
      const { id, numbers } = await sendingCampaign(await greeting(), 40, 10, 5);
      const paused = await act(id, 'pause');
      expect(paused.status).toBe(200);
      expect(paused.body.data.status).toBe('paused');
      // Sends already past the send worker's status check (bounded to about 2 s of the rate) still go out; then nothing moves.
      const settled = await settledProgress(id);
      expect(settled.sent).toBeLessThan(40);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await progressOf(id)).sent).toBe(settled.sent); // nothing more went out while paused
      expect(await progressOf(id)).toEqual(await recount(id));
      expect((await act(id, 'pause')).status).toBe(409);

      const resumed = await act(id, 'resume');
      expect(resumed.status).toBe(200);
      expect(resumed.body.data.status).toBe('running');
      await eventually(
        async () => (await getCampaign(id)).body.data.status === 'completed' && (await progressOf(id)).sent === 40,
        20_000,
        'all sent',
      );
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
      // compared once the statuses have stopped (read is each message's last): a status landing between the two
      // reads would make them differ
      await eventually(async () => (await progressOf(id)).read === 40, 10_000, 'all read');
      expect(await progressOf(id)).toEqual(await recount(id));
    }, 90_000);

    it('a resume that commits while a fan-out job of the paused campaign runs is not lost (its re-add of that job was a no-op)', async () => {
      const { id, numbers } = await sendingCampaign(await greeting(), 40, 10, 5);
      expect((await act(id, 'pause')).status).toBe(200);
      await settledProgress(id);
      const [trigger] = await t.db.query(
        `SELECT id::text, batches_done FROM campaign_triggers WHERE campaign_id = $1 AND status = 'running'`,
        [id],
      );
      expect(trigger).toBeDefined(); // recipients left to expand
      const fanout = t.worker!.get(CampaignFanoutService, { strict: false });
      const runBatch = fanout.runBatch.bind(fanout);
      let resumed = false;
      const spy = jest.spyOn(fanout, 'runBatch').mockImplementation(async (triggerId, batch) => {
        const outcome = await runBatch(triggerId, batch);
        if (!resumed && triggerId === trigger.id) {
          resumed = true; // the resume commits now, while this job is still active
          expect((await act(id, 'resume')).status).toBe(200);
        }
        return outcome;
      });
      try {
        await addFanoutJobs(t.worker!.get<Queue>(getQueueToken(QUEUES.campaigns)), [
          { triggerId: trigger.id, batch: trigger.batches_done },
        ]);
        // well before the worker's sweep (30 s) would pick the trigger up again
        await eventually(
          async () => (await getCampaign(id)).body.data.status === 'completed' && (await progressOf(id)).sent === 40,
          15_000,
          'all sent after the resume',
        );
      } finally {
        spy.mockRestore();
      }
      expect(resumed).toBe(true);
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
    }, 90_000);

    it('the platform refusing every send mid-campaign (a revoked token) pauses it with the reason, nothing failed; once fixed, a resume sends the rest once', async () => {
      await sandbox.control.post('/_sandbox/config', { invalidTokens: [] });
      account = await t.createAccount({ apiBaseUrl: sandbox.url, accessToken: 'campaign-token-to-revoke' });
      const { id, numbers } = await sendingCampaign(await greeting(), 200, 20, 10);
      await sandbox.control.post('/_sandbox/config', { invalidTokens: ['campaign-token-to-revoke'] });
      const paused = await pausedItself(id);
      expect(paused.paused_reason).toMatch(
        /^The platform refuses this number's sends \(190: .+\); resume once it is fixed$/,
      );
      const held = await settledProgress(id);
      expect(held.failed).toBe(0); // before, each queued message took its slot, met 190 and failed: the whole audience
      expect(held.sent).toBeLessThan(200);

      await sandbox.control.post('/_sandbox/config', { invalidTokens: [] });
      expect((await act(id, 'resume')).status).toBe(200);
      await eventually(async () => (await getCampaign(id)).body.data.status === 'completed', 40_000, 'completed');
      const done = await settledProgress(id);
      expect(done).toMatchObject({ recipients: 200, sent: 200, failed: 0 });
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
    }, 120_000);

    it('a template the platform pauses mid-campaign pauses the campaign with the reason; resume is refused until it is approved again, then the rest go out once', async () => {
      const tpl = await greeting();
      const { id, numbers } = await sendingCampaign(tpl, 400, 20, 10);
      await sandbox.control.post('/_sandbox/templates/review', { name: tpl, status: 'PAUSED' });
      const reason = `Template ${tpl}: Template is not approved (status PAUSED)`;
      const paused = await pausedItself(id);
      expect(paused.paused_reason).toBe(reason);
      // what was expanded before the fan-out saw the template (it keeps an approved one 10 s) went to the platform and
      // may have failed there; the rest of the audience is held, not failed
      const held = await settledProgress(id);
      expect(held.recipients).toBeLessThan(400);
      expect(held.sent + held.failed).toBeLessThan(400);

      const refused = await act(id, 'resume');
      expect(refused.status).toBe(409);
      expect(refused.body.message).toBe(`Cannot resume campaign ${id}: ${reason}`);

      await sandbox.control.post('/_sandbox/templates/review', { name: tpl, status: 'APPROVED' });
      const resumed = await eventually(
        async () => {
          const r = await act(id, 'resume');
          return r.status === 200 ? r : null;
        },
        20_000,
        'the resume once the template is approved again',
      );
      expect(resumed.body.data).toMatchObject({ status: 'running', paused_reason: null });
      await eventually(async () => (await getCampaign(id)).body.data.status === 'completed', 40_000, 'completed');
      const done = await settledProgress(id);
      expect(done.recipients).toBe(400);
      expect(done.sent + done.failed).toBe(400);
      expect(done.sent).toBeGreaterThanOrEqual(400 - held.recipients); // every recipient held went out after the resume
      for (const n of numbers) expect((await h.received(account, n)).length).toBeLessThanOrEqual(1);
    }, 120_000);

    it('a resume while the paused chunk job still waits for its last answers: the rest go out at once, not after the sweep', async () => {
      const tpl = await greeting();
      const { groupId, numbers } = await seedGroup(20);
      await t.db.query(`UPDATE phone_numbers SET messages_per_second = 5 WHERE account_id = $1`, [account.accountId]);
      const id = (
        await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'c' }, group_ids: [groupId] })
      ).body.data.campaign_id;
      await sandbox.control.post('/_sandbox/config', { sendAnswerDelayMs: 3000 }); // each answer takes 3 s
      try {
        expect((await act(id, 'start')).status).toBe(200);
        await new Promise((r) => setTimeout(r, 500));
        expect((await act(id, 'pause')).status).toBe(200);
        // the chunk job looks at its messages again within about a second and drops the paused ones; its calls in
        // flight keep it running until their answers come, about 3 s after each
        await new Promise((r) => setTimeout(r, 1500));
        expect((await act(id, 'resume')).status).toBe(200);
      } finally {
        await sandbox.control.post('/_sandbox/config', { sendAnswerDelayMs: 0 });
      }
      // the sweep of queued messages would have sent them 30-90 s later
      await eventually(
        async () => (await Promise.all(numbers.map((n) => h.received(account, n)))).every((got) => got.length > 0),
        15_000,
        'every member sent within 15 s of the resume',
      );
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
    });

    it('sends the platform throttles (130429) are retried by their chunk job: every recipient gets exactly one message', async () => {
      const tpl = await greeting();
      const { groupId, numbers } = await seedGroup(30);
      // our pacer allows 30/s, the platform only 5/s (low enough to be exceeded even on a loaded machine): most of a
      // chunk's first attempt is refused and retried
      await t.db.query(`UPDATE phone_numbers SET messages_per_second = 30 WHERE account_id = $1`, [account.accountId]);
      await sandbox.control.post('/_sandbox/config', { messagesPerSecond: { [account.messagingPhoneId]: 5 } });
      const rejectedBefore = (await sandbox.control.get('/_sandbox/stats')).body.rejected['130429'] ?? 0;
      const id = (
        await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'c' }, group_ids: [groupId] })
      ).body.data.campaign_id;
      expect((await act(id, 'start')).status).toBe(200);
      await eventually(
        async () => (await getCampaign(id)).body.data.status === 'completed' && (await progressOf(id)).sent === 30,
        45_000,
        'all sent',
      );
      expect((await sandbox.control.get('/_sandbox/stats')).body.rejected['130429']).toBeGreaterThan(rejectedBefore);
      for (const n of numbers) expect(await h.received(account, n)).toHaveLength(1);
      expect(await progressOf(id)).toMatchObject({ sent: 30, failed: 0, queued: 0 });
    }, 60_000);

    it('invalid transitions are 409 with a clear message; cancel stops a running campaign', async () => {
      const tpl = await greeting();
      const { groupId } = await seedGroup(30);
      await t.db.query(`UPDATE phone_numbers SET messages_per_second = 5 WHERE account_id = $1`, [account.accountId]);
      const id = (
        await createCampaign({ templateName: tpl, variables: { name: 'm', custom_code: 'c' }, group_ids: [groupId] })
      ).body.data.campaign_id;
      const pause = await act(id, 'pause');
      expect(pause.status).toBe(409);
      expect(pause.body.message).toBe(`Cannot pause campaign ${id}: it is draft (pause is allowed from running)`);
      expect((await act(id, 'resume')).status).toBe(409);
      expect((await act(id, 'start')).status).toBe(200);
      const again = await act(id, 'start');
      expect(again.status).toBe(409);
      expect(again.body.message).toBe(
        `Cannot start campaign ${id}: it is running (start is allowed from draft or scheduled)`,
      );
      // cancelled while sending: a cancel that came before the audience was fanned out had no recipient to cancel
      await eventually(async () => (await progressOf(id)).sent >= 1, 15_000, 'the first send');
      const cancelled = await act(id, 'cancel');
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data.status).toBe('cancelled');
      const p = await settledProgress(id);
      expect(p.sent).toBeLessThan(30);
      await new Promise((r) => setTimeout(r, 1000));
      expect((await progressOf(id)).sent).toBe(p.sent);
      const counted = await recount(id);
      expect(counted.cancelled).toBeGreaterThan(0);
      expect(await progressOf(id)).toEqual(counted);
      expect((await act(id, 'resume')).status).toBe(409);
      expect((await t.http.post(`/v2/campaigns/${id}/explode`, undefined, { token: account.token })).status).toBe(400);
    }, 90_000);

    it('start is refused (409) when the default variables do not fill the template', async () => {
      const tpl = await greeting();
      const { groupId } = await seedGroup(1);
      const id = (await createCampaign({ templateName: tpl, variables: { name: 'only one' }, group_ids: [groupId] }))
        .body.data.campaign_id;
      const res = await act(id, 'start');
      expect(res.status).toBe(409);
      expect(res.body.message).toMatch(
        /^Cannot start campaign \d+: the campaign's variables do not fill the template: Template .* expects 2 body variable\(s\)/,
      );
      expect((await getCampaign(id)).body.data.status).toBe('draft');
    });

    it('start is refused (409) when a group of the campaign was deleted since its create: nothing sent', async () => {
      const tpl = await greeting();
      const kept = await seedGroup(1);
      const gone = await seedGroup(1);
      const id = (
        await createCampaign({
          templateName: tpl,
          variables: { name: 'm', custom_code: 'c' },
          group_ids: [kept.groupId, gone.groupId],
        })
      ).body.data.campaign_id;
      const deleted = await t.http.request('DELETE', `/v2/contact-groups/${gone.groupId}`, { token: account.token });
      expect(deleted.status).toBe(200);
      const res = await act(id, 'start');
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(
        `Cannot start campaign ${id}: its contact group(s) ${gone.groupId} no longer exist (deleted since it was created)`,
      );
      expect((await getCampaign(id)).body.data.status).toBe('draft');
      expect(await h.received(account, kept.numbers[0])).toHaveLength(0);
    });
  });
});
