import type { ChildProcess } from 'node:child_process';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { openSse } from '../helpers/sse';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

/**
 * Scheduled campaigns: scheduledAt on create, POST …/schedule (and again to move it), …/unschedule, cancel; the start is
 * durable (the worker is a child process, SIGKILLed before the time and started after it: the campaign starts once);
 * per-contact variables (a contact field with a fallback); the live view (SSE).
 */
describe('Scheduled campaigns', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let h: ReturnType<typeof messagingHelpers>;
  let worker: ChildProcess | null = null;
  const logs: string[] = [];

  const startWorker = () => {
    worker = startWorkerProcess(t, logs, 5);
    return worker;
  };
  async function killWorker() {
    if (!worker || worker.exitCode !== null) return;
    const exited = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGKILL');
    await exited;
    worker = null;
  }

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }); // API only
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 60, read: null }, autoReview: false });
    h = messagingHelpers(t, () => sandbox);
    startWorker();
  }, 60_000);
  afterAll(async () => {
    await killWorker();
    await sandbox?.close();
    await t?.close();
  });
  beforeEach(async () => {
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });
  afterEach(() => {
    if (expect.getState().assertionCalls === 0) console.log(logs.join('').slice(-3000));
  });

  const greeting = () =>
    h.approvedTemplate(account, [h.body('Hi {{first}}, your code is {{code}}.', { first: 'Ann', code: 'A1' })]);
  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  /** POST /v2/campaigns from the account's number. */
  const createCampaign = (body: Record<string, unknown>) =>
    t.http.post('/v2/campaigns', { messagingPhoneId: account.messagingPhoneId, ...body }, { token: account.token });
  const getCampaign = (id: number, acct = account) => t.http.get(`/v2/campaigns/${id}`, { token: acct.token });
  const act = (id: number, action: string, body?: unknown, acct = account) =>
    t.http.post(`/v2/campaigns/${id}/${action}`, body, { token: acct.token });
  const bodyTexts = (m: any) =>
    m.payload.template.components.find((c: any) => c.type === 'body').parameters.map((p: any) => p.text);

  async function seedGroup(names: Array<string | null>): Promise<{ groupId: number; numbers: string[] }> {
    const [g] = await t.db.query(`INSERT INTO contact_groups (account_id, name) VALUES ($1, $2) RETURNING id`, [
      account.accountId,
      h.unique('group'),
    ]);
    const numbers = names.map(() => h.customer());
    const rows: Array<{ id: string }> = await t.db.query(
      `INSERT INTO contacts (account_id, contact_number, name) SELECT $1, x.n, x.name FROM unnest($2::text[], $3::text[]) AS x(n, name) RETURNING id`,
      [account.accountId, numbers, names],
    );
    await t.db.query(`INSERT INTO contact_group_members (group_id, contact_id) SELECT $1, unnest($2::bigint[])`, [
      g.id,
      rows.map((r) => r.id),
    ]);
    return { groupId: Number(g.id), numbers };
  }

  it('starts by itself once, after the worker was killed before the time and started after it; per-contact variables', async () => {
    const template = await greeting();
    const { groupId, numbers } = await seedGroup(['Ann', 'Bob', null]);
    const at = inSeconds(8); // the create and the kill must come before it, on a slow machine too
    const created = await createCampaign({
      name: 'Scheduled',
      templateName: template,
      variables: { name: { field: 'name', fallback: 'there' }, custom_code: 'SPRING' },
      group_ids: [groupId],
      scheduledAt: at,
    });
    expect(created.body).toMatchObject({ success: true });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ status: 'scheduled', scheduledAt: at, schedule_error: null });
    const id = created.body.data.campaign_id;

    await killWorker();
    await new Promise((r) => setTimeout(r, Date.parse(at) - Date.now() + 1500));
    expect((await getCampaign(id)).body.data.status).toBe('scheduled'); // nobody to start it
    startWorker();
    const done = await eventually(
      async () => {
        const c = (await getCampaign(id)).body.data;
        return c.progress.sent === 3 && c;
      },
      30_000,
      'the scheduled campaign sent',
    );
    expect(['running', 'completed']).toContain(done.status);
    expect(Date.parse(done.started_at)).toBeGreaterThan(Date.parse(at));
    const [{ n }] = await t.db.query(
      `SELECT count(*)::int AS n FROM campaign_triggers WHERE campaign_id = $1 AND kind = 'start'`,
      [id],
    );
    expect(n).toBe(1);
    const texts = await Promise.all(numbers.map(async (to) => (await h.received(account, to)).map(bodyTexts)));
    expect(texts).toEqual([[['Ann', 'SPRING']], [['Bob', 'SPRING']], [['there', 'SPRING']]]);
  }, 60_000);

  it('reschedule moves the start, unschedule goes back to draft, cancel ends it; bad times are 400s', async () => {
    const template = await greeting();
    const { groupId, numbers } = await seedGroup(['Ann']);
    const create = (body: Record<string, unknown> = {}) =>
      createCampaign({
        name: 'Later',
        templateName: template,
        variables: { name: 'you', custom_code: 'X' },
        group_ids: [groupId],
        ...body,
      });
    const id = (await create({ scheduledAt: inSeconds(3600) })).body.data.campaign_id;
    const soon = inSeconds(2);
    const moved = await act(id, 'schedule', { scheduledAt: soon });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ status: 'scheduled', scheduledAt: soon });
    await eventually(async () => (await getCampaign(id)).body.data.progress.sent === 1, 20_000, 'rescheduled start');
    expect(await h.received(account, numbers[0])).toHaveLength(1);
    const again = await act(id, 'schedule', { scheduledAt: inSeconds(60) });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(
      new RegExp(
        `^Cannot schedule campaign ${id}: it is (running|completed) \\(schedule is allowed from draft or scheduled\\)$`,
      ),
    );

    const draft = (await create()).body.data.campaign_id;
    expect((await act(draft, 'schedule', { scheduledAt: inSeconds(600) })).body.data.status).toBe('scheduled');
    const unscheduled = await act(draft, 'unschedule');
    expect(unscheduled.body.data).toMatchObject({ status: 'draft', scheduledAt: null });
    expect((await act(draft, 'unschedule')).status).toBe(409);
    const cancelledBefore = inSeconds(6); // the cancel must come before it, on a slow machine too
    expect((await act(draft, 'schedule', { scheduledAt: cancelledBefore })).body.data.status).toBe('scheduled');
    const cancelled = await act(draft, 'cancel');
    expect(cancelled.body.data.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, Date.parse(cancelledBefore) - Date.now() + 2500));
    expect((await getCampaign(draft)).body.data).toMatchObject({ status: 'cancelled', started_at: null });

    const bad = await act(draft, 'schedule', { scheduledAt: '2020-01-01T00:00:00Z' });
    expect(bad.status).toBe(400);
    const past = await create({ scheduledAt: '2020-01-01T00:00:00Z' });
    expect(past.body).toMatchObject({
      field: 'scheduledAt',
      message: 'scheduledAt must be in the future (it is 2020-01-01T00:00:00.000Z)',
    });
    const noZone = await create({ scheduledAt: '2030-01-01 10:00' });
    expect(noZone.body.message).toBe('scheduledAt must be an ISO 8601 time with its offset, e.g. 2026-12-01T09:00:00Z');
    const badField = await create({ variables: { name: { field: 'phone', fallback: 'x' }, custom_code: 'X' } });
    expect(badField.body.field).toBe('variables.name.field');
    const noFallback = await create({ variables: { name: { field: 'name', fallback: '' }, custom_code: 'X' } });
    expect(noFallback.body.field).toBe('variables.name.fallback');
    // a date that does not exist is refused, not moved to another day (V8 reads Feb 31st as March 3rd)
    for (const scheduledAt of ['2030-02-31T09:00:00Z', '2030-01-01T24:00:00Z']) {
      const impossible = await create({ scheduledAt });
      expect(impossible.status).toBe(400);
      expect(impossible.body.field).toBe('scheduledAt');
    }
    // created and scheduled at once: refused before anything is written (it left a draft on every retry)
    const count = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM campaigns WHERE account_id = $1`, [account.accountId]))[0].n;
    const before = await count();
    const unfilled = await create({ scheduledAt: inSeconds(3600), variables: { name: 'you' } });
    expect(unfilled.status).toBe(400);
    expect(unfilled.body.field).toBe('variables');
    expect(unfilled.body.message).toMatch(/^the campaign's variables do not fill the template: /);
    expect(await count()).toBe(before);
  }, 60_000);

  it("another account's scheduled campaign is a 404 for schedule, unschedule and the live view", async () => {
    const template = await greeting();
    const { groupId } = await seedGroup(['Ann']);
    const created = await createCampaign({
      name: 'Mine',
      templateName: template,
      variables: { name: 'a', custom_code: 'b' },
      group_ids: [groupId],
      scheduledAt: inSeconds(600),
    });
    const id = created.body.data.campaign_id;
    const other = await t.createAccount({ apiBaseUrl: sandbox.url });
    expect((await act(id, 'schedule', { scheduledAt: inSeconds(60) }, other)).status).toBe(404);
    expect((await act(id, 'unschedule', undefined, other)).status).toBe(404);
    expect((await act(id, 'cancel', undefined, other)).status).toBe(404);
    const live = await fetch(`${t.url}/v2/campaigns/${id}/live`, { headers: { authorization: other.token } });
    expect(live.status).toBe(404);
    expect((await getCampaign(id)).body.data.status).toBe('scheduled');

    const count = await t.http.get(`/v2/campaigns/audience-count?group_ids=${groupId}`, { token: account.token });
    expect(count.body.data).toEqual({ group_ids: [groupId], contacts: 1, blocked: 0 });
    const theirs = await t.http.get(`/v2/campaigns/audience-count?group_ids=${groupId}`, { token: other.token });
    expect(theirs.status).toBe(400);
  });

  it('the live view streams the funnel as the campaign runs', async () => {
    const template = await greeting();
    const { groupId } = await seedGroup(['Ann', 'Bob']);
    const created = await createCampaign({
      name: 'Live',
      templateName: template,
      variables: { name: 'a', custom_code: 'b' },
      group_ids: [groupId],
    });
    const id = created.body.data.campaign_id;
    const sse = await openSse(`${t.url}/v2/campaigns/${id}/live`, { authorization: account.token });
    expect(sse.status).toBe(200);
    const first = await sse.waitFor((e) => e.event === 'progress', 10_000);
    expect(first.data).toMatchObject({ campaign_id: id, status: 'draft', funnel: { sent: 0 }, rate_limit: 80 });
    // A second viewer gets the state now for itself, not broadcast to the first (where it could arrive after a newer
    // snapshot of the worker's and stay the last one shown), and without an id (it is no resume position).
    const second = await openSse(`${t.url}/v2/campaigns/${id}/live`, { authorization: account.token });
    const own = await second.waitFor((e) => e.event === 'progress', 10_000);
    expect(own.id).toBeUndefined();
    expect(own.data).toMatchObject({ campaign_id: id, status: 'draft' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sse.events.filter((e) => e.event === 'progress')).toHaveLength(1);
    second.close();
    await act(id, 'start');
    const sent = await sse.waitFor((e) => e.event === 'progress' && e.data.funnel.delivered === 2, 20_000);
    expect(sent.data.funnel).toMatchObject({ sent: 2, delivered: 2 });
    expect(sent.data.failed).toEqual([]);
    sse.close();
  }, 40_000);

  it('the live view of a campaign sent only through the trigger API (it stays draft) moves with its sends', async () => {
    const template = await greeting();
    const created = await createCampaign({
      name: 'Triggered',
      templateName: template,
      variables: { name: 'a', custom_code: 'b' },
    });
    const id = created.body.data.campaign_id;
    const sse = await openSse(`${t.url}/v2/campaigns/${id}/live`, { authorization: account.token });
    const first = await sse.waitFor((e) => e.event === 'progress', 10_000);
    expect(first.data).toMatchObject({ status: 'draft', funnel: { sent: 0 } });
    const triggered = await t.http.post(
      `/campaigns/trigger_campaign-api/${id}`,
      { contacts: [{ phoneNumber: `+${h.customer()}` }, { phoneNumber: `+${h.customer()}` }] },
      { token: account.token },
    );
    expect(triggered.status).toBe(200);
    const sent = await sse.waitFor((e) => e.event === 'progress' && e.data.funnel.delivered === 2, 20_000);
    expect(sent.data).toMatchObject({ status: 'draft', funnel: { sent: 2, delivered: 2 } });
    sse.close();
  }, 40_000);

  it('the live view of a running campaign keeps moving while 200 newer campaigns of any account sit paused', async () => {
    const template = await greeting();
    const { groupId } = await seedGroup(['Ann', 'Bob']);
    const created = await createCampaign({
      name: 'Older',
      templateName: template,
      variables: { name: 'a', custom_code: 'b' },
      group_ids: [groupId],
    });
    const id = created.body.data.campaign_id;
    // 200 newer campaigns of another account that do not move (the ticker's LIMIT of 200 was all theirs)
    const other = await t.createAccount({ apiBaseUrl: sandbox.url });
    await t.db.query(
      `INSERT INTO campaigns (account_id, phone_number_id, name, template_name, template_language, variables,
                              callback_events, group_ids, status, updated_at)
       SELECT p.account_id, p.id, 'still ' || i, 'x', 'en_US', '{}', '{}', '{}', 'paused', now() - interval '1 minute'
         FROM phone_numbers p, generate_series(1, 200) i WHERE p.account_id = $1`,
      [other.accountId],
    );
    const sse = await openSse(`${t.url}/v2/campaigns/${id}/live`, { authorization: account.token });
    await sse.waitFor((e) => e.event === 'progress', 10_000); // the state now, from the API
    expect((await act(id, 'start')).status).toBe(200);
    const sent = await sse.waitFor((e) => e.event === 'progress' && e.data.funnel.delivered === 2, 20_000);
    expect(sent.data).toMatchObject({ campaign_id: id, funnel: { sent: 2, delivered: 2 } });
    sse.close();
    await t.db.query(`DELETE FROM campaigns WHERE account_id = $1`, [other.accountId]);
  }, 40_000);
});
