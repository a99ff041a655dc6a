import { HANDLES_UNIQUE_VIOLATION } from '@switchboard/core/database';
import { DataSource } from 'typeorm';
import { createWorkflow } from '../helpers/automations';
import { mcpPost } from '../helpers/mcp';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

type LogLine = Record<string, unknown>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Issue 21 §4, logs: one pino logger per process (API and worker in one JSON shape), an access line per request at
 * debug, and one request id from the caller's X-Request-Id through the send queue and the worker to the platform call.
 */
describe('Logs and request ids', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const lines: LogLine[] = [];
  const logs = { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) };

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'debug', RATE_LIMIT_PER_MINUTE: '10000' }, { worker: true, logs });
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 10, delivered: 20, read: 30 } });
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });
  afterAll(async () => {
    await t.close();
    await sandbox.close();
  });

  const withId = (id: string) => lines.filter((l) => l.requestId === id);

  it('a send with X-Request-Id: the answer echoes it, the platform receives it, the API and worker lines carry it', async () => {
    const { customerWrites, customer, received } = messagingHelpers(t, () => sandbox);
    const to = customer();
    await customerWrites(account, to);
    const sent = await t.http.post(
      `/v1/send-message/${account.messagingPhoneId}`,
      { typOfmsg: 'normal_message', receipentPhone: to, message: 'Your order shipped' },
      { token: account.token, headers: { 'x-request-id': 'abc-123' } },
    );
    expect(sent.status).toBe(200);
    expect(sent.headers.get('x-request-id')).toBe('abc-123');

    // the platform call carried it (the sandbox records the X-Request-Id header of each send)
    const [platform] = await eventually(async () => {
      const got = await received(account, to);
      return got.length ? got : null;
    });
    expect(platform.request_id).toBe('abc-123');

    // the worker's line for that message, and the API's access line
    const [stored] = await t.db.query(`SELECT id FROM messages WHERE wamid = $1`, [platform.wamid]);
    const worker = await eventually(async () =>
      withId('abc-123').find((l) => l.msg === 'message accepted by the platform'),
    );
    expect(worker).toMatchObject({
      level: 'debug',
      context: 'SendExecutor',
      messageId: stored.id,
      wamid: platform.wamid,
    });
    const access = await eventually(async () => withId('abc-123').find((l) => l.context === 'HTTP'));
    expect(access).toMatchObject({
      level: 'debug',
      method: 'POST',
      url: `/v1/send-message/${account.messagingPhoneId}`,
      status: 200,
      msg: `POST /v1/send-message/${account.messagingPhoneId} 200`,
    });
    expect(typeof access.ms).toBe('number');

    // every line of the process, whoever wrote it (Nest, Fastify, our code), has the same shape
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      expect(typeof line.level).toBe('string');
      expect(typeof line.time).toBe('string');
      expect(line.pid).toBe(process.pid);
      expect(typeof line.msg).toBe('string');
    }
    // API and worker in one process share one database module definition: no duplicate data source warning
    expect(lines.filter((l) => String(l.msg).includes('already registered'))).toEqual([]);
  });

  it("a campaign start and a workflow webhook: the platform receives each send with the starting request's id", async () => {
    const { approvedTemplate, body, customer, received } = messagingHelpers(t, () => sandbox);
    const template = await approvedTemplate(account, [body('Spring sale starts today.')]);

    const numbers = [customer(), customer(), customer()];
    const [group] = await t.db.query(
      `INSERT INTO contact_groups (account_id, name) VALUES ($1, 'Logs group') RETURNING id`,
      [account.accountId],
    );
    await t.db.query(
      `WITH c AS (INSERT INTO contacts (account_id, contact_number, name)
                  SELECT $1, x, 'Member' FROM unnest($2::text[]) x RETURNING id)
       INSERT INTO contact_group_members (group_id, contact_id) SELECT $3, id FROM c`,
      [account.accountId, numbers, group.id],
    );
    const campaign = await t.http.post(
      '/v2/campaigns',
      {
        name: 'Logs',
        messagingPhoneId: account.messagingPhoneId,
        templateName: template,
        group_ids: [Number(group.id)],
      },
      { token: account.token },
    );
    expect(campaign.status).toBe(201);
    const start = await t.http.post(`/v2/campaigns/${campaign.body.data.campaign_id}/start`, undefined, {
      token: account.token,
      headers: { 'x-request-id': 'campaign-start-1' },
    });
    expect(start.status).toBe(200);
    expect(start.headers.get('x-request-id')).toBe('campaign-start-1');
    for (const to of numbers) {
      const [sent] = await eventually(async () => {
        const got = await received(account, to);
        return got.length ? got : null;
      });
      expect(sent.request_id).toBe('campaign-start-1');
    }

    const workflow = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'send',
      nodes: [
        { id: 'send', type: 'send_template', templateName: template, to: '{{payload.phone}}', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    const phone = customer();
    const started = await t.http.post(
      `/webhook/workflow/${workflow.identifier}`,
      { phone },
      { headers: { 'x-request-id': 'workflow-hook-1' } },
    );
    expect(started.status).toBe(200);
    const [fromRun] = await eventually(async () => {
      const got = await received(account, phone);
      return got.length ? got : null;
    });
    expect(fromRun.request_id).toBe('workflow-hook-1');
  });

  it('a 5xx answer is logged at error with its request id (the platform refused: closed 24-hour window)', async () => {
    const { customer } = messagingHelpers(t, () => sandbox);
    const closed = await t.http.post(
      `/v1/send-message/${account.messagingPhoneId}`,
      { typOfmsg: 'normal_message', receipentPhone: customer(), message: 'Hello?' },
      { token: account.token, headers: { 'x-request-id': 'closed-window-1' } },
    );
    expect(closed.status).toBe(500);
    expect(closed.headers.get('x-request-id')).toBe('closed-window-1');
    const access = await eventually(async () => withId('closed-window-1').find((l) => l.context === 'HTTP'));
    expect(access).toMatchObject({ level: 'error', method: 'POST', status: 500 });
    // the platform accepted the call and reported the closed window in a status webhook (a request of its own)
    const worker = withId('closed-window-1').find((l) => l.context === 'SendExecutor');
    expect(worker).toMatchObject({ level: 'debug', msg: 'message accepted by the platform' });
  });

  it('replaces an X-Request-Id that is too long or has other characters; generates one when none is sent', async () => {
    const ok = 'A'.repeat(92) + '.valid_id-0123456789.abcdefghijklmno';
    expect(ok.length).toBe(128);
    const kept = await t.http.get('/health', { headers: { 'x-request-id': ok } });
    expect(kept.headers.get('x-request-id')).toBe(ok);

    for (const bad of ['bad id', 'x'.repeat(129), 'a/b', 'ü']) {
      const res = await t.http.get('/health', { headers: { 'x-request-id': bad } });
      expect(res.status).toBe(200);
      const id = res.headers.get('x-request-id')!;
      expect(id).toMatch(UUID);
      // the access line carries the replacement, never the caller's value
      const line = await eventually(async () => withId(id).find((l) => l.context === 'HTTP'));
      expect(line).toMatchObject({ url: '/health', status: 200 });
    }
    const none = await t.http.get('/health');
    expect(none.headers.get('x-request-id')).toMatch(UUID);

    // the MCP endpoint's answers carry it too
    const mcp = await mcpPost(t.url, { authorization: account.token, 'x-request-id': 'mcp-1' });
    expect(mcp.status).toBe(200);
    expect(mcp.headers.get('x-request-id')).toBe('mcp-1');
  });

  it('keeps secrets out of the access lines (tokens in the query or in the logout path)', async () => {
    const verify = await t.http.get(
      '/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=not-for-logs&hub.challenge=42',
      { headers: { 'x-request-id': 'verify-1' } },
    );
    expect(verify.headers.get('x-request-id')).toBe('verify-1');
    const verifyLine = await eventually(async () => withId('verify-1').find((l) => l.context === 'HTTP'));
    expect(verifyLine.url).toBe('/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=REDACTED&hub.challenge=42');

    const logout = await t.http.delete(`/v1/logout/${account.refreshToken}`, {
      token: account.token,
      headers: { 'x-request-id': 'logout-1' },
    });
    expect(logout.status).toBeLessThan(500);
    const logoutLine = await eventually(async () => withId('logout-1').find((l) => l.context === 'HTTP'));
    expect(logoutLine.url).toBe('/v1/logout/REDACTED');
    expect(JSON.stringify(lines)).not.toContain('not-for-logs');
    expect(JSON.stringify(lines)).not.toContain(account.refreshToken);
  });

  it('a unique violation its statement says it handles is logged at debug; any other failed query at error', async () => {
    const db = t.app.get(DataSource);
    await db.transaction(async (tx) => {
      await tx.query(`CREATE TEMP TABLE log_probe (n int PRIMARY KEY) ON COMMIT DROP`);
      await tx.query(`INSERT INTO log_probe VALUES (1)`);
      for (const [i, sql] of [
        `${HANDLES_UNIQUE_VIOLATION} INSERT INTO log_probe VALUES (1) /* handled */`,
        `INSERT INTO log_probe VALUES (1) /* not handled */`,
      ].entries()) {
        await tx.query(`SAVEPOINT s${i}`);
        await expect(tx.query(sql)).rejects.toMatchObject({ code: '23505' });
        await tx.query(`ROLLBACK TO SAVEPOINT s${i}`);
      }
    });
    const failed = lines.filter(
      (l) => String(l.msg).startsWith('query failed') && String(l.query).includes('log_probe'),
    );
    expect(failed.map((l) => [l.level, String(l.query).includes('/* handled */')])).toEqual([
      ['debug', true],
      ['error', false],
    ]);
  });
});
