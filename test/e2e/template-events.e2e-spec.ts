import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { openSse, type SseConnection } from '../helpers/sse';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * GET /v2/template-events: the account's template status changes as Server-Sent Events (issue 20: the console's
 * badges change when the platform's review webhook arrives), over the real API, worker, Redis and Cloud API sandbox.
 */
describe('Template status events (SSE)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let a: TestAccount;
  let b: TestAccount;
  const streams: SseConnection[] = [];
  const h = () => messagingHelpers(t, () => sandbox);

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    sandbox = await startTestSandbox(t, { autoReview: false });
    a = await t.createAccount({ apiBaseUrl: sandbox.url });
    b = await t.createAccount({ apiBaseUrl: sandbox.url });
  }, 60_000);
  afterAll(async () => {
    streams.forEach((s) => s.close());
    await sandbox?.close();
    await t?.close();
  });

  const open = async (account: TestAccount, headers: Record<string, string> = {}) => {
    const stream = await openSse(`${t.url}/v2/template-events`, { authorization: account.token, ...headers });
    streams.push(stream);
    return stream;
  };
  const pending = (account: TestAccount, name: string, text = 'Hi {{name}}, news for you today.') =>
    h().approvedTemplate(account, [h().body(text, { name: 'Ann' })], { name, approve: false });
  const review = (name: string, status: string, reason?: string) =>
    sandbox.control.post('/_sandbox/templates/review', { name, status, ...(reason ? { reason } : {}) });

  it("streams the review webhook's change to the account that owns the template, and to no other", async () => {
    const mine = await open(a);
    const theirs = await open(b);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await pending(a, 'spring_news');
    expect((await review('spring_news', 'APPROVED')).status).toBe(200);

    const event = await mine.waitFor((e) => e.event === 'template.status' && e.data.template_name === 'spring_news');
    expect(event).toEqual({
      id: expect.stringMatching(/^\d+-\d+$/),
      event: 'template.status',
      data: {
        template_name: 'spring_news',
        language: 'en_US',
        status: 'APPROVED',
        previous_status: 'PENDING',
        rejected_reason: null,
        platform_status: null,
        source: 'webhook',
      },
    });
    // the stored row says the same
    expect(await t.db.query(`SELECT status FROM templates WHERE name = 'spring_news'`)).toEqual([
      { status: 'APPROVED' },
    ]);
    // account b saw nothing of it (b's own template change arrives, a's never did)
    await pending(b, 'b_news');
    await review('b_news', 'REJECTED', 'INVALID_FORMAT');
    const own = await theirs.waitFor((e) => e.event === 'template.status');
    expect(own.data).toMatchObject({ template_name: 'b_news', status: 'REJECTED', rejected_reason: 'INVALID_FORMAT' });
    expect(theirs.events.filter((e) => e.event === 'template.status').map((e) => e.data.template_name)).toEqual([
      'b_news',
    ]);
    // and the list carries the reason
    const list = await t.http.get('/v2/templates', { token: b.token });
    expect(list.body.data.templates).toEqual([
      {
        template_name: 'b_news',
        category: 'UTILITY',
        language: 'en_US',
        status: 'REJECTED',
        variables: ['name'],
        rejected_reason: 'INVALID_FORMAT',
        updated_at: expect.stringMatching(/Z$/),
      },
    ]);
  });

  it('replays what was missed after Last-Event-ID, then goes on live', async () => {
    const first = await open(a);
    await pending(a, 'resume_one');
    await review('resume_one', 'APPROVED');
    const seen = await first.waitFor((e) => e.data?.template_name === 'resume_one');
    first.close();
    // while no one listens: a pause, then a rejection
    await review('resume_one', 'PAUSED', 'LOW_QUALITY');
    await pending(a, 'resume_two');
    await review('resume_two', 'REJECTED', 'INCORRECT_CATEGORY');
    await eventually(async () => {
      const [row] = await t.db.query(`SELECT status FROM templates WHERE name = 'resume_two'`);
      return row?.status === 'REJECTED';
    });
    const again = await open(a, { 'last-event-id': seen.id! });
    const replayed = await again.waitForCount(2);
    expect(replayed.map((e) => [e.data.template_name, e.data.status, e.data.rejected_reason])).toEqual([
      ['resume_one', 'PAUSED', 'LOW_QUALITY'],
      ['resume_two', 'REJECTED', 'INCORRECT_CATEGORY'],
    ]);
  });

  it('streams the changes a sync and an edit make (source sync / edit)', async () => {
    // a platform whose webhooks never reach us: only a sync finds the reviewer's decision
    const deaf = await startTestSandbox(t, { autoReview: false, webhookUrl: 'http://127.0.0.1:9/webhooks/whatsapp' });
    const c = await t.createAccount({ apiBaseUrl: deaf.url });
    const stream = await open(c);
    try {
      await messagingHelpers(t, () => deaf).approvedTemplate(
        c,
        [h().body('Hi {{name}}, news for you today.', { name: 'Ann' })],
        { name: 'sync_me', approve: false },
      );
      await deaf.control.post('/_sandbox/templates/review', { name: 'sync_me', status: 'APPROVED' });
      await syncAndEdit(c, stream);
    } finally {
      await deaf.close();
    }
  });

  async function syncAndEdit(c: TestAccount, stream: SseConnection) {
    expect(stream.events.filter((e) => e.event === 'template.status')).toEqual([]);
    const synced = await t.http.post('/v2/templates/sync', undefined, { token: c.token });
    expect(synced.status).toBe(200);
    const bySync = await stream.waitFor((e) => e.data?.template_name === 'sync_me' && e.data.source === 'sync');
    expect(bySync.data).toMatchObject({ status: 'APPROVED', previous_status: 'PENDING' });

    const edited = await t.http.put(
      '/templates/update?template_name=sync_me',
      { components: [h().body('Hi {{name}}, fresh news for you today.', { name: 'Ann' })] },
      { token: c.token },
    );
    expect(edited.status).toBe(200);
    const byEdit = await stream.waitFor((e) => e.data?.template_name === 'sync_me' && e.data.source === 'edit');
    expect(byEdit.data).toMatchObject({ status: 'PENDING', previous_status: 'APPROVED' });
  }

  it('an edit approved while its call is out ends on APPROVED; a refused edit goes back to the status it had', async () => {
    const { CloudApiClient, CloudApiError } = await import('@switchboard/whatsapp');
    const { TemplatesService } = await import('@switchboard/templates');
    await pending(a, 'quick_edit');
    await review('quick_edit', 'APPROVED');
    await eventually(
      async () => (await t.http.get('/v2/templates/quick_edit', { token: a.token })).body.data.status === 'APPROVED',
    );
    const stream = await open(a);
    const [{ platformId }] = await t.db.query(
      `SELECT platform_template_id AS "platformId" FROM templates WHERE account_id = $1 AND name = 'quick_edit'`,
      [a.accountId],
    );
    const [{ waba }] = await t.db.query(
      'SELECT business_account_id AS waba FROM phone_numbers WHERE messaging_phone_id = $1',
      [a.messagingPhoneId],
    );
    const editTemplate = CloudApiClient.prototype.editTemplate;
    const approveAtOnce = jest.spyOn(CloudApiClient.prototype, 'editTemplate').mockImplementation(async function (
      this: InstanceType<typeof CloudApiClient>,
      id,
      edit,
    ) {
      const answer = await editTemplate.call(this, id, edit);
      // the platform approves the edit, and its webhook is applied, before the edit's answer is read
      await t.app.get(TemplatesService).applyPlatformStatus({
        event: 'APPROVED',
        templateId: String(platformId),
        templateName: 'quick_edit',
        language: 'en_US',
        wabaId: String(waba),
      } as any);
      return answer;
    });
    try {
      const res = await t.http.put(
        '/templates/update?template_name=quick_edit',
        { category: 'MARKETING' },
        {
          token: a.token,
        },
      );
      expect(res.body.data.status).toBe('APPROVED');
    } finally {
      approveAtOnce.mockRestore();
    }
    const quick = () =>
      stream.events.filter((e) => e.event === 'template.status' && e.data?.template_name === 'quick_edit');
    await eventually(async () => quick().length >= 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(quick().map((e) => `${e.data.source}:${e.data.previous_status}>${e.data.status}`)).toEqual([
      'edit:APPROVED>PENDING',
      'webhook:PENDING>APPROVED',
    ]);

    const refuse = jest
      .spyOn(CloudApiClient.prototype, 'editTemplate')
      .mockRejectedValue(new CloudApiError({ kind: 'api', code: 100, httpStatus: 400, message: 'Invalid parameter' }));
    try {
      const refused = await t.http.put(
        '/templates/update?template_name=quick_edit',
        { category: 'UTILITY' },
        {
          token: a.token,
        },
      );
      expect(refused.status).toBe(400);
    } finally {
      refuse.mockRestore();
    }
    await eventually(async () => quick().length >= 4);
    expect(
      quick()
        .slice(2)
        .map((e) => `${e.data.source}:${e.data.previous_status}>${e.data.status}`),
    ).toEqual(['edit:APPROVED>PENDING', 'edit:PENDING>APPROVED']);
  });

  it('needs a token with the /templates grant', async () => {
    const anonymous = await fetch(`${t.url}/v2/template-events`, { headers: { accept: 'text/event-stream' } });
    expect(anonymous.status).toBe(401);
    await anonymous.body?.cancel();
  });

  it('answers 400 naming the parameter for an unknown one or a malformed lastEventId (no stream opened)', async () => {
    const unknown = await t.http.get('/v2/template-events?status=APPROVED', { token: a.token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      { field: 'status', message: 'unknown query parameter status; allowed: lastEventId' },
    ]);
    const malformed = await t.http.get('/v2/template-events?lastEventId=yesterday', { token: a.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual([
      { field: 'lastEventId', message: 'lastEventId must be an event id such as 1764061200000-0' },
    ]);
  });
});
