import type { ChildProcess } from 'node:child_process';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

const RECIPIENTS = 10_000;
const RATE = 1000;
/**
 * The in-doubt wait of this file's workers (30 s by default): the messages claimed by the killed worker wait this long
 * after their claim, or until its jobs are taken over (15 s lock), whichever is later, before they may be sent again.
 */
const IN_DOUBT_MS = 15_000;

/**
 * A 10,000-recipient campaign at 1,000 msg/s; the worker (a child process, `dist/` compiled by the jest global setup)
 * is SIGKILLed mid-campaign and another one takes over: every recipient receives exactly one message.
 */
describe('Campaign fan-out survives a killed worker (campaigns crash test)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const workers: ChildProcess[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', ALLOW_PRIVATE_NETWORK_TARGETS: 'true' }); // API only
    sandbox = await startTestSandbox(t, {
      statusDelaysMs: { sent: 50, delivered: 200, read: null },
      statusBatchSize: 100,
      autoReview: false,
      messageLogLimit: RECIPIENTS * 3,
      webhookLogLimit: 1000,
    });
    account = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: RATE });
    await sandbox.control.post('/_sandbox/config', { messagesPerSecond: { [account.messagingPhoneId]: RATE } });
  }, 60_000);
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await sandbox?.close();
    await t?.close();
  });

  function startWorker(): ChildProcess {
    const child = startWorkerProcess(t, logs, 10, { SEND_IN_DOUBT_MS: String(IN_DOUBT_MS) });
    workers.push(child);
    return child;
  }

  it(`${RECIPIENTS} recipients at ${RATE}/s, worker SIGKILLed mid-campaign, restarted: each recipient got exactly one message`, async () => {
    const h = messagingHelpers(t, () => sandbox);
    const tpl = await h.approvedTemplate(account, [h.body('Hi {{first}}, the sale starts today.', { first: 'Ann' })]);
    const [g] = await t.db.query(`INSERT INTO contact_groups (account_id, name) VALUES ($1, 'crash') RETURNING id`, [
      account.accountId,
    ]);
    await t.db.query(
      `WITH c AS (INSERT INTO contacts (account_id, contact_number, name)
                  SELECT $1, '4917' || lpad(i::text, 7, '0') || '1', 'Member ' || i FROM generate_series(1, $2::int) i RETURNING id)
       INSERT INTO contact_group_members (group_id, contact_id) SELECT $3, id FROM c`,
      [account.accountId, RECIPIENTS, g.id],
    );
    const created = await t.http.post(
      '/v2/campaigns',
      {
        name: 'crash',
        messagingPhoneId: account.messagingPhoneId,
        templateName: tpl,
        variables: { name: 'friend' },
        group_ids: [Number(g.id)],
      },
      { token: account.token },
    );
    expect(created.status).toBe(201);
    const id = created.body.data.campaign_id;
    const accepted = async () => {
      const [{ n }] = await t.db.query(
        `SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1 AND wamid IS NOT NULL`,
        [id],
      );
      return n as number;
    };

    const first = startWorker();
    expect((await t.http.post(`/v2/campaigns/${id}/start`, undefined, { token: account.token })).status).toBe(200);
    await eventually(async () => (await accepted()) >= RECIPIENTS * 0.3, 60_000, '30% accepted').catch((error) => {
      throw new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);
    });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const atKill = await accepted();
    expect(atKill).toBeLessThan(RECIPIENTS);

    startWorker();
    await eventually(
      async () =>
        (await t.http.get(`/v2/campaigns/${id}`, { token: account.token })).body.data.status === 'completed' &&
        (await accepted()) === RECIPIENTS,
      180_000,
      'campaign completed after the restart',
    ).catch(async (error) => {
      const p = (await t.http.get(`/v2/campaigns/${id}`, { token: account.token })).body.data;
      throw new Error(
        `${(error as Error).message}; accepted ${atKill} at the kill; now ${JSON.stringify(p)}\n${logs.join('').slice(-3000)}`,
      );
    });

    const sent = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${account.messagingPhoneId}`)).body
      .data as Array<{ to: string }>;
    const perRecipient = new Map<string, number>();
    for (const m of sent) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
    expect(perRecipient.size).toBe(RECIPIENTS);
    expect([...perRecipient.values()].filter((n) => n !== 1)).toEqual([]);
    expect(sent).toHaveLength(RECIPIENTS);
    const [r] = await t.db.query(
      `SELECT count(*)::int AS n, count(DISTINCT contact_id)::int AS contacts FROM campaign_recipients WHERE campaign_id = $1`,
      [id],
    );
    expect(r).toEqual({ n: RECIPIENTS, contacts: RECIPIENTS });
    const progress = (await t.http.get(`/v2/campaigns/${id}`, { token: account.token })).body.data.progress;
    expect(progress).toMatchObject({
      audience: RECIPIENTS,
      recipients: RECIPIENTS,
      queued: 0,
      sent: RECIPIENTS,
      failed: 0,
    });
  }, 300_000);
});
