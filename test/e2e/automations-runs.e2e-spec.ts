import { PRIVATE_TARGETS_HINT } from '@switchboard/core';
import {
  AutomationQueue,
  EmbeddedDriver,
  REMEMBERED_TOTAL_FROM,
  REMEMBERED_TOTAL_MS,
  WorkflowRunsService,
} from '@switchboard/automations';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWorkflow, seedTemplate, waitForRun } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** A customer's backend on 127.0.0.1: records requests; /tier/<x> answers {tier: x}, /status/<n> answers that status. */
async function startReceiver() {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      });
      const tier = req.url!.match(/^\/tier\/(\w+)/);
      const status = req.url!.match(/^\/status\/(\d+)/);
      const big = req.url!.match(/^\/big\/(\d+)/);
      res.writeHead(status ? Number(status[1]) : 200, { 'content-type': 'application/json' });
      if (big)
        return res.end(
          JSON.stringify({ tier: 'gold', items: Array.from({ length: Number(big[1]) }, (_, i) => ({ id: i })) }),
        );
      res.end(JSON.stringify(tier ? { tier: tier[1] } : { ok: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

jest.setTimeout(30_000);

describe('Workflow runs (embedded driver)', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let runs: WorkflowRunsService;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp(
      {
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        WORKFLOW_WEBHOOK_MAX_BODY_BYTES: '4096',
        RATE_LIMIT_PER_MINUTE: '100000',
      },
      { worker: true },
    );
    account = await t.createAccount();
    runs = t.worker!.get(WorkflowRunsService);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const webhook = (identifier: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http.post(`/webhook/workflow/${identifier}`, body, { headers });

  describe('webhook → http_request → condition → end', () => {
    const definition = (url: string) => ({
      trigger: { type: 'webhook' },
      startNodeId: 'lookup',
      nodes: [
        {
          id: 'lookup',
          type: 'http_request',
          method: 'POST',
          url: `${url}/tier/{{payload.tier}}`,
          headers: { 'x-order': '{{payload.order.id}}' },
          body: { order: '{{payload.order}}', phone: '{{contact.phone}}' },
          saveAs: 'crm',
          next: 'check',
        },
        {
          id: 'check',
          type: 'condition',
          rules: [{ left: '{{vars.crm.body.tier}}', operator: 'equals', right: 'gold', next: 'vip' }],
          else: 'regular',
        },
        { id: 'vip', type: 'end' },
        { id: 'regular', type: 'end' },
      ],
    });

    it('runs to completion, calling the receiver with bound values, and records the history', async () => {
      const wf = await createWorkflow(t, account.token, definition(receiver.url));
      const payload = { tier: 'gold', phone: '+1 (555) 010-2030', order: { id: 'A-17', total: 42.5 } };
      const res = await webhook(wf.identifier, payload);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Workflow started',
        runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });

      const run = await waitForRun(t, account.token, res.body.runId, ['completed', 'failed']);
      expect(run).toEqual({
        runId: res.body.runId,
        workflowId: wf.id,
        workflowVersion: 1,
        status: 'completed',
        currentNodeId: 'vip',
        waitingFor: null,
        error: null,
        payload,
        contact: { phone: '15550102030' },
        reply: null,
        vars: { crm: { status: 200, body: { tier: 'gold' }, headers: { 'content-type': 'application/json' } } },
        // each entry: when it happened; the effect's input and output (docs/console.md "Watching runs")
        history: [
          {
            seq: 1,
            nodeId: 'lookup',
            type: 'http_request',
            outcome: 'completed',
            at: expect.any(String),
            detail: {
              input: expect.objectContaining({ method: 'POST', saveAs: 'crm' }),
              output: expect.objectContaining({ status: 200, body: { tier: 'gold' } }),
            },
          },
          { seq: 2, nodeId: 'check', type: 'condition', outcome: 'rule:0', at: expect.any(String) },
          { seq: 3, nodeId: 'vip', type: 'end', outcome: 'end', at: expect.any(String) },
        ],
        historyCount: 3,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        finishedAt: expect.any(String),
      });
      const call = receiver.received.find((r) => r.headers['x-order'] === 'A-17')!;
      expect(call).toMatchObject({
        method: 'POST',
        url: '/tier/gold',
        body: { order: { id: 'A-17', total: 42.5 }, phone: '15550102030' },
      });
      expect(call.headers['idempotency-key']).toBe(`run:${res.body.runId}:step:1`);
      expect(call.headers['content-type']).toBe('application/json');
    });

    it('a large answer is kept whole in vars for the next steps; the history keeps its status and a preview', async () => {
      const wf = await createWorkflow(t, account.token, {
        ...definition(receiver.url),
        nodes: definition(receiver.url).nodes.map((n) =>
          n.id === 'lookup' ? { ...n, url: `${receiver.url}/big/20000` } : n,
        ),
      });
      const run = await waitForRun(t, account.token, (await webhook(wf.identifier, {})).body.runId, [
        'completed',
        'failed',
      ]);
      expect(run.currentNodeId).toBe('vip'); // the condition read vars.crm.body.tier
      expect(run.vars.crm.body.items).toHaveLength(20_000);
      const output = run.history[0].detail.output;
      expect(output.status).toBe(200);
      expect(output.body).toEqual({
        truncated: true,
        chars: JSON.stringify(run.vars.crm.body).length,
        preview: expect.any(String),
      });
      expect(output.body.preview).toBe(JSON.stringify(run.vars.crm.body).slice(0, 1024));
    });

    it('takes the else branch on another answer, and a non-2xx status is a result, not a failure', async () => {
      const wf = await createWorkflow(t, account.token, definition(receiver.url));
      const silver = await waitForRun(t, account.token, (await webhook(wf.identifier, { tier: 'silver' })).body.runId, [
        'completed',
        'failed',
      ]);
      expect(silver.currentNodeId).toBe('regular');
      expect(silver.history.map((h: any) => h.outcome)).toEqual(['completed', 'else', 'end']);

      const notFound = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'call',
        nodes: [
          {
            id: 'call',
            type: 'http_request',
            method: 'GET',
            url: `${receiver.url}/status/404`,
            saveAs: 'r',
            next: 'check',
          },
          {
            id: 'check',
            type: 'condition',
            rules: [{ left: '{{vars.r.status}}', operator: 'gte', right: '400', next: 'bad' }],
            else: 'good',
          },
          { id: 'bad', type: 'end' },
          { id: 'good', type: 'end' },
        ],
      });
      const run = await waitForRun(t, account.token, (await webhook(notFound.identifier, {})).body.runId, [
        'completed',
        'failed',
      ]);
      expect(run).toMatchObject({ status: 'completed', currentNodeId: 'bad', vars: { r: { status: 404 } } });
    });

    it('lists runs newest first, paginated, filtered by status', async () => {
      const wf = await createWorkflow(t, account.token, definition(receiver.url));
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await webhook(wf.identifier, { tier: 'gold' })).body.runId);
      for (const id of ids) await waitForRun(t, account.token, id, ['completed']);

      const page1 = await t.http.get(`/v1/workflows/${wf.id}/runs?pageSize=2`, { token: account.token });
      expect(page1.status).toBe(200);
      expect(page1.body).toEqual({
        success: true,
        data: [ids[2], ids[1]].map((runId) => ({
          runId,
          status: 'completed',
          workflowVersion: 1,
          currentNodeId: 'vip',
          contactPhone: null,
          error: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          finishedAt: expect.any(String),
        })),
        pagination: { page: 1, pageSize: 2, total: 3, totalPages: 2 },
      });
      const page2 = await t.http.get(`/v1/workflows/${wf.id}/runs?pageSize=2&page=2`, { token: account.token });
      expect(page2.body.data.map((r: any) => r.runId)).toEqual([ids[0]]);
      const failed = await t.http.get(`/v1/workflows/${wf.id}/runs?status=failed`, { token: account.token });
      expect(failed.body).toMatchObject({ data: [], pagination: { total: 0 } });
      const bad = await t.http.get(`/v1/workflows/${wf.id}/runs?status=done&pageSize=500`, { token: account.token });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: any) => e.field).sort()).toEqual(['pageSize', 'status']);
    });

    it('counts a long run list about once a second: the page is always fresh, the total at most a second old', async () => {
      const wf = await createWorkflow(t, account.token, definition(receiver.url));
      const insertRuns = (count: number, status: string) =>
        t.db.query(
          `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, created_at)
           SELECT gen_random_uuid(), $1, $2, 1, $3, now() - (g || ' seconds')::interval FROM generate_series(1, $4) g`,
          [account.accountId, wf.id, status, count],
        );
      await insertRuns(REMEMBERED_TOTAL_FROM, 'completed');
      const list = (query = '') => t.http.get(`/v1/workflows/${wf.id}/runs${query}`, { token: account.token });
      const first = await list();
      expect(first.body.pagination).toEqual({
        page: 1,
        pageSize: 20,
        total: REMEMBERED_TOTAL_FROM,
        totalPages: REMEMBERED_TOTAL_FROM / 20,
      });

      // a run stored at once (not a webhook's, which could take longer than the second the total is remembered)
      const [{ id: newest }] = await t.db.query(
        `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, created_at)
         VALUES (gen_random_uuid(), $1, $2, 1, 'completed', now()) RETURNING id::text`,
        [account.accountId, wf.id],
      );
      const within = await list();
      expect(within.body.data[0].runId).toBe(newest);
      expect(within.body.pagination.total).toBe(REMEMBERED_TOTAL_FROM); // remembered: counted less than a second ago
      // a status filter is its own total, and another account still gets 404 for the workflow
      expect((await list('?status=failed')).body.pagination.total).toBe(0);
      const stranger = await t.createAccount();
      expect((await t.http.get(`/v1/workflows/${wf.id}/runs`, { token: stranger.token })).status).toBe(404);

      await new Promise((resolve) => setTimeout(resolve, REMEMBERED_TOTAL_MS));
      expect((await list()).body.pagination.total).toBe(REMEMBERED_TOTAL_FROM + 1);
    });
  });

  describe('the inbound webhook', () => {
    let identifier: string;
    let workflowId: number;
    beforeAll(async () => {
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'pause',
        nodes: [
          { id: 'pause', type: 'delay', duration: 3600, next: 'done' },
          { id: 'done', type: 'end' },
        ],
      });
      identifier = wf.identifier;
      workflowId = wf.id;
    });

    it('the run row is committed when the answer comes (persist before enqueue)', async () => {
      const res = await webhook(identifier, { contact: { phone: '447700900123', name: 'Ann' } });
      const [row] = await t.db.query(
        'SELECT status, contact_phone, workflow_version FROM workflow_runs WHERE id = $1',
        [res.body.runId],
      );
      expect(row).toEqual({
        status: expect.stringMatching(/^(pending|waiting)$/),
        contact_phone: '447700900123',
        workflow_version: 1,
      });
      const run = await waitForRun(t, account.token, res.body.runId, ['waiting']);
      expect(run.contact).toEqual({ phone: '447700900123', name: 'Ann' });
      expect(run.waitingFor).toEqual({ kind: 'timer', nodeId: 'pause', seq: 1, until: expect.any(String) });
      expect(new Date(run.waitingFor.until).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    });

    it('the same Idempotency-Key starts one run; a retry gets the same runId', async () => {
      const key = `order-${Date.now()}`;
      const answers = await Promise.all([1, 2, 3].map(() => webhook(identifier, { n: 1 }, { 'idempotency-key': key })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(new Set(answers.map((a) => a.body.runId)).size).toBe(1);
      const later = await webhook(identifier, { n: 2 }, { 'idempotency-key': key });
      expect(later.body.runId).toBe(answers[0].body.runId);
      const rows = await t.db.query(
        'SELECT payload FROM workflow_runs WHERE workflow_id = $1 AND idempotency_key = $2',
        [workflowId, key],
      );
      expect(rows).toEqual([{ payload: { n: 1 } }]);
      const other = await webhook(identifier, { n: 3 }, { 'idempotency-key': `${key}-other` });
      expect(other.body.runId).not.toBe(answers[0].body.runId);
    });

    it('the same keys retried on another process in the opposite order start each run once (no deadlock, no 500)', async () => {
      // Two processes (here the API's and the worker's services, each with its own pool) each insert a batch of 100
      // runs; the shop's retries put the keys in the other order. Row locks taken in opposite orders deadlocked.
      const apiRuns = t.app.get(WorkflowRunsService);
      for (let round = 0; round < 3; round++) {
        const keys = Array.from({ length: 100 }, (_, i) => `crossed-${Date.now()}-${round}-${i}`);
        const [first, second] = await Promise.all([
          Promise.all(keys.map((key) => apiRuns.startFromWebhook(identifier, { key }, key))),
          Promise.all([...keys].reverse().map((key) => runs.startFromWebhook(identifier, { key }, key))),
        ]);
        expect(first.map((r) => r?.runId)).toEqual([...second].reverse().map((r) => r?.runId));
        expect(first.concat(second).filter((r) => r?.created).length).toBe(100);
        const [{ n }] = await t.db.query(
          'SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1 AND idempotency_key = ANY($2)',
          [workflowId, keys],
        );
        expect(n).toBe(100);
      }
    });

    it('unknown and inactive identifiers are 404 Workflow ID not found', async () => {
      expect(await webhook('no-such-workflow-identifier', {})).toMatchObject({
        status: 404,
        body: { message: 'Workflow ID not found' },
      });
      expect(await webhook('bad%20id!', {})).toMatchObject({ status: 404, body: { message: 'Workflow ID not found' } });
      const inactive = await createWorkflow(
        t,
        account.token,
        { trigger: { type: 'webhook' }, startNodeId: 'e', nodes: [{ id: 'e', type: 'end' }] },
        'Off',
        false,
      );
      const res = await webhook(inactive.identifier, {});
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Workflow ID not found' });
      await t.http.post('/v1/workflows', { mode: 'edit', id: inactive.id, isActive: true }, { token: account.token });
      expect((await webhook(inactive.identifier, {})).status).toBe(200);
    });

    it('413 over the size limit, 400 for a body that is not JSON; no token needed and no run written', async () => {
      const before = (await t.db.query('SELECT count(*)::int AS n FROM workflow_runs'))[0].n;
      const big = await webhook(identifier, { blob: 'x'.repeat(5000) });
      expect(big.status).toBe(413);
      expect(big.body).toEqual({ statusCode: 413, message: 'Request body is too large (limit 4096 bytes)' });
      // Bodies are JSON only (docs/errors.md): any other media type is refused before the route runs.
      const text = await t.http.post(`/webhook/workflow/${identifier}`, 'hello', {
        headers: { 'content-type': 'text/plain' },
      });
      expect(text.status).toBe(415);
      expect(text.body).toEqual({
        statusCode: 415,
        message: 'Unsupported media type: send the request body as application/json',
      });
      const broken = await t.http.post(`/webhook/workflow/${identifier}`, '{"a":', {
        headers: { 'content-type': 'application/json' },
      });
      expect(broken.status).toBe(400);
      const form = await t.http.post(`/webhook/workflow/${identifier}`, 'a=1&b=2', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(415);
      expect(form.body).toEqual({
        statusCode: 415,
        message: 'Unsupported media type: send the request body as application/json',
      });
      expect((await t.db.query('SELECT count(*)::int AS n FROM workflow_runs'))[0].n).toBe(before);
    });

    it('accepts any JSON value, and an empty body as {}', async () => {
      const array = await webhook(identifier, [1, 2, 3]);
      expect(array.status).toBe(200);
      const empty = await t.http.post(`/webhook/workflow/${identifier}`);
      expect(empty.status).toBe(200);
      const [a, e] = await Promise.all(
        [array, empty].map((r) => t.db.query('SELECT payload FROM workflow_runs WHERE id = $1', [r.body.runId])),
      );
      expect(a[0].payload).toEqual([1, 2, 3]);
      expect(e[0].payload).toEqual({});
    });
  });

  describe('timers and replies', () => {
    const replyDefinition = (timeout: number | string) => ({
      trigger: { type: 'webhook' },
      startNodeId: 'ask',
      nodes: [
        {
          id: 'ask',
          type: 'wait_for_reply',
          timeout,
          branches: [
            { match: { type: 'button', payload: 'CANCEL' }, next: 'cancelled' },
            { match: { type: 'keyword', keywords: ['yes', 'confirm'] }, next: 'confirmed' },
          ],
          onTimeout: 'timed_out',
        },
        { id: 'confirmed', type: 'end' },
        { id: 'cancelled', type: 'end' },
        { id: 'timed_out', type: 'end' },
      ],
    });

    it('a 1 s delay completes after about a second', async () => {
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'pause',
        nodes: [
          { id: 'pause', type: 'delay', duration: '1s', next: 'done' },
          { id: 'done', type: 'end' },
        ],
      });
      const startedAt = Date.now();
      const { runId } = (await webhook(wf.identifier, {})).body;
      // (its waiting state may last less than a poll on a slow machine: the history below shows the timer fired)
      const done = await waitForRun(t, account.token, runId, ['completed'], 10_000);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950);
      // and not much later, by the run's own times (a slow poll does not move them)
      expect(Date.parse(done.history[0].at) - Date.parse(done.createdAt)).toBeLessThan(4000);
      expect(done.history.map((h: any) => [h.nodeId, h.outcome])).toEqual([
        ['pause', 'timer_fired'],
        ['done', 'end'],
      ]);
    });

    it('deliverReply resumes the waiting run on the matching branch; unmatched and duplicate replies are ignored', async () => {
      const wf = await createWorkflow(t, account.token, replyDefinition('1h'));
      const { runId } = (await webhook(wf.identifier, { phone: '+44 7700 900001' })).body;
      await waitForRun(t, account.token, runId, ['waiting']);

      expect(
        await runs.deliverReply(account.accountId, account.messagingPhoneId, '+447700900001', {
          text: 'maybe',
          messageId: 'wamid.1',
        }),
      ).toEqual([runId]);
      // another account's customer with the same number, and another number of ours: no effect
      const other = await t.createAccount();
      expect(
        await runs.deliverReply(other.accountId, undefined, '447700900001', { text: 'yes', messageId: 'wamid.x' }),
      ).toEqual([]);
      expect(
        await runs.deliverReply(account.accountId, undefined, '447700900002', { text: 'yes', messageId: 'wamid.y' }),
      ).toEqual([]);
      await new Promise((r) => setTimeout(r, 200));
      expect((await waitForRun(t, account.token, runId, ['waiting'])).waitingFor).toMatchObject({
        kind: 'reply',
        nodeId: 'ask',
      });

      await runs.deliverReply(account.accountId, account.messagingPhoneId, '447700900001', {
        text: ' Yes ',
        messageId: 'wamid.2',
      });
      const run = await waitForRun(t, account.token, runId, ['completed']);
      expect(run.currentNodeId).toBe('confirmed');
      expect(run.reply).toEqual({ text: ' Yes ', messageId: 'wamid.2' });
      expect(run.history.map((h: any) => h.outcome)).toEqual(['branch:1', 'end']);
      // the hour-long timeout of the wait is not left behind as a delayed job
      const queue = t.worker!.get(AutomationQueue, { strict: false }).queue;
      const timeoutJobs = (await queue.getDelayed()).filter((j) => j.id?.startsWith(`${runId}:`));
      expect(timeoutJobs).toEqual([]);
      expect(
        await runs.deliverReply(account.accountId, undefined, '447700900001', { text: 'yes', messageId: 'wamid.3' }),
      ).toEqual([]);
    });

    it('a button reply takes its branch', async () => {
      const wf = await createWorkflow(t, account.token, replyDefinition(600));
      const { runId } = (await webhook(wf.identifier, { customer: { phone: '447700900010' } })).body;
      await waitForRun(t, account.token, runId, ['waiting']);
      await runs.deliverReply(account.accountId, null, '447700900010', {
        buttonPayload: 'CANCEL',
        buttonText: 'Cancel order',
        messageId: 'wamid.b1',
      });
      expect((await waitForRun(t, account.token, runId, ['completed'])).currentNodeId).toBe('cancelled');
    });

    it('without a reply the timeout branch is taken', async () => {
      const wf = await createWorkflow(t, account.token, replyDefinition(1));
      const { runId } = (await webhook(wf.identifier, { phone: '447700900020' })).body;
      const run = await waitForRun(t, account.token, runId, ['completed'], 5000);
      expect(run.currentNodeId).toBe('timed_out');
      expect(run.history.map((h: any) => h.outcome)).toEqual(['timeout', 'end']);
      expect(await runs.deliverReply(account.accountId, null, '447700900020', { text: 'yes' })).toEqual([]);
    });

    it('runs driven together (a batch job) each perform their effect once and take their own reply', async () => {
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'call',
        nodes: [
          {
            id: 'call',
            type: 'http_request',
            method: 'GET',
            url: `${receiver.url}/together/{{payload.n}}`,
            next: 'ask',
          },
          {
            id: 'ask',
            type: 'wait_for_reply',
            timeout: '1h',
            branches: [{ match: { type: 'any' }, next: 'done' }],
            onTimeout: 'done',
          },
          { id: 'done', type: 'end' },
        ],
      });
      // 20 runs accepted and not yet started (as a busy webhook leaves them for one start-runs job)
      const rows: Array<{ id: string }> = await t.db.query(
        `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, payload)
         SELECT gen_random_uuid(), $1, $2, 1, 'pending', json_build_object('n', i) FROM generate_series(1, 20) i
         RETURNING id`,
        [account.accountId, wf.id],
      );
      const ids = rows.map((r) => r.id);
      const driver = t.worker!.get(EmbeddedDriver);
      // the first run named twice: its second start finds it started and does nothing
      await driver.driveMany([...ids, ids[0]].map((runId) => ({ runId, input: { kind: 'start' as const } })));
      const waiting: Array<{ id: string; status: string; waiting_seq: number }> = await t.db.query(
        `SELECT id, status, waiting_seq FROM workflow_runs WHERE id = ANY($1::uuid[])`,
        [ids],
      );
      expect(waiting.map((r) => r.status)).toEqual(ids.map(() => 'waiting'));
      const calls = receiver.received.filter((r) => r.url.startsWith('/together/')).map((r) => r.url);
      expect(calls.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `/together/${i + 1}`).sort());

      const seq = waiting[0].waiting_seq;
      const reply = (runId: string, text: string) => ({
        runId,
        input: { kind: 'event' as const, event: { type: 'reply_received' as const, seq, reply: { text } } },
      });
      // every run's reply, a second reply to the first run and a late timeout of the second: both come too late
      await driver.driveMany([
        ...ids.map((id, i) => reply(id, `answer ${i}`)),
        reply(ids[0], 'second answer'),
        { runId: ids[1], input: { kind: 'event', event: { type: 'timer_fired', seq } } },
      ]);
      for (const [i, id] of ids.entries()) {
        const run = await waitForRun(t, account.token, id, ['completed'], 1000);
        expect(run.reply).toEqual({ text: `answer ${i}` });
        expect(run.history.map((h: any) => [h.nodeId, h.outcome])).toEqual([
          ['call', 'completed'],
          ['ask', 'branch:0'],
          ['done', 'end'],
        ]);
      }

      // two jobs' replies to one run in the same moment: one transaction takes the first, the second finds it answered
      const [{ id: late }] = await t.db.query(
        `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, payload)
         VALUES (gen_random_uuid(), $1, $2, 1, 'pending', '{"n": 21}') RETURNING id`,
        [account.accountId, wf.id],
      );
      await driver.drive(late, { kind: 'start' });
      await Promise.all([driver.drive(late, reply(late, 'one').input), driver.drive(late, reply(late, 'two').input)]);
      const run = await waitForRun(t, account.token, late, ['completed'], 1000);
      expect(run.reply).toEqual({ text: 'one' });
      expect(run.history.map((h: any) => h.outcome)).toEqual(['completed', 'branch:0', 'end']);
    });

    // 1,000 runs waiting for replies at once: automations-waiting.e2e-spec.ts (both drivers).

    it('keyword-triggered workflows start from inbound messages, once per message', async () => {
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'keyword', keywords: ['JOIN', 'start'] },
        startNodeId: 'ask',
        nodes: [
          {
            id: 'ask',
            type: 'wait_for_reply',
            timeout: '1d',
            branches: [{ match: { type: 'any' }, next: 'done' }],
            onTimeout: 'done',
          },
          { id: 'done', type: 'end' },
        ],
      });
      expect(
        await runs.startFromInboundMessage(account.accountId, account.messagingPhoneId, '+15550001111', {
          text: 'hello',
          messageId: 'in.0',
        }),
      ).toEqual([]);
      const [runId] = await runs.startFromInboundMessage(account.accountId, account.messagingPhoneId, '+15550001111', {
        text: ' join ',
        messageId: 'in.1',
        name: 'Bo',
      });
      expect(runId).toBeDefined();
      expect(
        await runs.startFromInboundMessage(account.accountId, account.messagingPhoneId, '+15550001111', {
          text: ' join ',
          messageId: 'in.1',
        }),
      ).toEqual([]);
      const run = await waitForRun(t, account.token, runId, ['waiting']);
      expect(run).toMatchObject({
        workflowId: wf.id,
        payload: {
          text: ' join ',
          messageId: 'in.1',
          name: 'Bo',
          from: '15550001111',
          messagingPhoneId: account.messagingPhoneId,
        },
        contact: { phone: '15550001111', name: 'Bo' },
      });
      // the keyword message delivered again (Meta's redelivery, a retried job): it starts nothing and answers nothing
      expect(
        await runs.deliverReply(account.accountId, account.messagingPhoneId, '15550001111', {
          text: ' join ',
          messageId: 'in.1',
        }),
      ).toEqual([]);
      expect((await waitForRun(t, account.token, runId, ['waiting'])).reply ?? null).toBeNull();
      await runs.deliverReply(account.accountId, account.messagingPhoneId, '15550001111', {
        text: 'thanks',
        messageId: 'in.2',
      });
      const done = await waitForRun(t, account.token, runId, ['completed']);
      expect(done.reply).toMatchObject({ text: 'thanks' });
    });
  });

  describe('versions, missing activities and isolation', () => {
    it('a run started on version 1 continues on version 1 after an edit', async () => {
      const v = (path: string) => ({
        trigger: { type: 'webhook' },
        startNodeId: 'pause',
        nodes: [
          { id: 'pause', type: 'delay', duration: 4, next: 'call' }, // the edit comes while the first run waits
          { id: 'call', type: 'http_request', method: 'GET', url: `${receiver.url}/${path}`, next: 'done' },
          { id: 'done', type: 'end' },
        ],
      });
      const wf = await createWorkflow(t, account.token, v('version-one'));
      const first = (await webhook(wf.identifier, {})).body.runId;
      await waitForRun(t, account.token, first, ['waiting']);
      const edited = await t.http.post(
        '/v1/workflows',
        { mode: 'edit', id: wf.id, ...v('version-two') },
        { token: account.token },
      );
      expect(edited.body.data.version).toBe(2);
      const second = (await webhook(wf.identifier, {})).body.runId;
      const [a, b] = await Promise.all([
        waitForRun(t, account.token, first, ['completed'], 15_000),
        waitForRun(t, account.token, second, ['completed'], 15_000),
      ]);
      expect([a.workflowVersion, b.workflowVersion]).toEqual([1, 2]);
      expect(receiver.received.filter((r) => r.url === '/version-one')).toHaveLength(1);
      expect(receiver.received.filter((r) => r.url === '/version-two')).toHaveLength(1);
    });

    it('send_template stores the message through messaging with the step idempotency key; a failing step takes onError', async () => {
      await seedTemplate(t, account, 'order_confirm');
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'send',
        nodes: [
          {
            id: 'send',
            type: 'send_template',
            templateName: 'order_confirm',
            to: '{{payload.phone}}',
            next: 'campaign',
          },
          {
            id: 'campaign',
            type: 'trigger_campaign',
            campaignId: 999999,
            contact: { phoneNumber: '{{payload.phone}}' },
            next: 'done',
            onError: 'fallback',
          },
          { id: 'fallback', type: 'end' },
          { id: 'done', type: 'end' },
        ],
      });
      const run = await waitForRun(
        t,
        account.token,
        (await webhook(wf.identifier, { phone: '15550009999' })).body.runId,
        ['completed', 'failed'],
      );
      expect(run).toMatchObject({ status: 'completed', currentNodeId: 'fallback' });
      expect(run.vars.lastError).toMatchObject({
        nodeId: 'campaign',
        message: expect.stringContaining('Campaign not found'),
      });

      const messages = await t.db.query(
        `SELECT recipient, template_name, idempotency_key FROM messages WHERE account_id = $1 AND idempotency_key LIKE $2`,
        [account.accountId, `run:${run.runId}:%`],
      );
      expect(messages).toEqual([
        {
          recipient: '15550009999',
          template_name: 'order_confirm',
          idempotency_key: expect.stringMatching(new RegExp(`^run:${run.runId}:step:\\d+$`)),
        },
      ]);
    });

    it("update_contact: updates the run's contact in its account (name, email, custom fields); an unknown contact fails the run", async () => {
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'tag',
        nodes: [
          {
            id: 'tag',
            type: 'update_contact',
            fields: { name: '{{payload.name}}', email: '{{payload.email}}', custom_order: '{{payload.order}}' },
            next: 'done',
          },
          { id: 'done', type: 'end' },
        ],
      });
      const payload = { phone: '15550004444', name: 'Dee', email: 'dee@example.com', order: 'A-1' };
      const other = await t.createAccount();
      for (const [who, name] of [
        [account, 'Old'],
        [other, 'Other account'],
      ] as const) {
        const created = await t.http.post(
          '/contacts/create-contact',
          { contact_number: '15550004444', name },
          { token: who.token },
        );
        expect(created.status).toBe(200);
      }

      const done = await waitForRun(t, account.token, (await webhook(wf.identifier, payload)).body.runId, [
        'completed',
        'failed',
      ]);
      expect(done.status).toBe('completed');
      expect(done.contact).toEqual({
        phone: '15550004444',
        name: 'Dee',
        email: 'dee@example.com',
        custom_order: 'A-1',
      });
      const rows = await t.db.query(
        "SELECT account_id, name, email, custom_fields FROM contacts WHERE account_id = ANY($1) AND contact_number = '15550004444' ORDER BY id",
        [[account.accountId, other.accountId]],
      );
      expect(rows).toEqual([
        {
          account_id: account.accountId,
          name: 'Dee',
          email: 'dee@example.com',
          custom_fields: { custom_order: 'A-1' },
        },
        { account_id: other.accountId, name: 'Other account', email: null, custom_fields: {} },
      ]);

      const unknown = await waitForRun(
        t,
        account.token,
        (await webhook(wf.identifier, { ...payload, phone: '15550005555' })).body.runId,
        ['completed', 'failed'],
      );
      expect(unknown.error.message).toBe(
        'node "tag" (update_contact) failed: no contact with phone number 15550005555 in this account',
      );
    });

    it("another account's runs are not found", async () => {
      const wf = await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'e',
        nodes: [{ id: 'e', type: 'end' }],
      });
      const { runId } = (await webhook(wf.identifier, {})).body;
      await waitForRun(t, account.token, runId, ['completed']);
      const intruder = await t.createAccount();
      const res = await t.http.get(`/v1/workflow-runs/${runId}`, { token: intruder.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Workflow run not found' });
      expect((await t.http.get(`/v1/workflows/${wf.id}/runs`, { token: intruder.token })).status).toBe(404);
    });
  });
});

describe('http_request SSRF guard (private targets not allowed)', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    account = await t.createAccount();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it.each([
    [
      'http://169.254.169.254/latest/meta-data/',
      `target 169.254.169.254 is not allowed (link-local / metadata address); ${PRIVATE_TARGETS_HINT}`,
    ],
    ['RECEIVER', `target 127.0.0.1 is not allowed (loopback address); ${PRIVATE_TARGETS_HINT}`],
    [
      'http://localhost:9/x',
      `target localhost resolves to 127.0.0.1, which is not allowed (loopback address); ${PRIVATE_TARGETS_HINT}`,
    ],
    ['file:///etc/passwd', 'URL scheme "file" is not allowed (http or https only)'],
  ])('%s fails the run with a clear error', async (url, message) => {
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'call',
      nodes: [
        { id: 'call', type: 'http_request', method: 'GET', url: '{{payload.url}}', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    const target = url === 'RECEIVER' ? `${receiver.url}/secret` : url;
    const res = await t.http.post(`/webhook/workflow/${wf.identifier}`, { url: target });
    const run = await waitForRun(t, account.token, res.body.runId, ['completed', 'failed']);
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({
      code: 'effect_failed',
      message: `node "call" (http_request) failed: ${message}`,
      nodeId: 'call',
    });
    expect(receiver.received).toEqual([]);
  });
});
