import type { ChildProcess } from 'node:child_process';
import { SendQueueService } from '@switchboard/messaging';
import { createWorkflow } from '../helpers/automations';
import { pgProblemsInOutput } from '../helpers/pg-guard';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startApiProcess, startWorkerProcess } from '../helpers/worker-process';

/**
 * SIGTERM stops the API and the worker gracefully (real processes, compiled): the API stops accepting, answers what it
 * was serving and closes its pool only afterwards; the worker lets its active jobs finish. Nothing is lost and the next
 * start finishes what was left queued.
 */
describe('Graceful shutdown (SIGTERM)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' }); // API only: the worker runs as child processes
    sandbox = await startTestSandbox(t, {
      statusWebhooks: false,
      enforceCustomerCareWindow: false,
      defaultMessagesPerSecond: 0,
      messageLogLimit: 20_000,
    });
    account = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: 1000 });
  }, 120_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await sandbox?.close();
    await t?.close();
  });

  const exited = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
    });

  it('the API under concurrent reads: SIGTERM → every request answered 200 (or 503 while closing), exit 0, no pg misuse', async () => {
    await t.db.query(
      `INSERT INTO contacts (account_id, name, contact_number) SELECT $1, 'Contact ' || n, (4917100000000 + n)::text FROM generate_series(1, 1000) n`,
      [account.accountId],
    );
    const logs: string[] = [];
    const { child, url } = await startApiProcess(t, logs, 5, { SHUTDOWN_TIMEOUT_MS: '20000' });
    children.push(child);

    // a client watching a run (Server-Sent Events): its stream is closed at shutdown, not waited for
    const workflow = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'done',
      nodes: [{ id: 'done', type: 'end' }],
    });
    const run = await t.http.post(`/v1/workflows/${workflow.id}/test-runs`, { payload: {} }, { token: account.token });
    const events = await fetch(`${url}/v1/workflow-runs/${run.body.data.runId}/events`, {
      headers: { authorization: account.token, accept: 'text/event-stream' },
    });
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    const stream = events.body!.getReader();
    expect(new TextDecoder().decode((await stream.read()).value)).toContain('event: run');
    const streamEnded = (async () => {
      try {
        while (!(await stream.read()).done);
        return 'ended';
      } catch {
        return 'closed';
      }
    })();

    const statuses = new Map<string, number>();
    const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
    let stopAt = 0;
    let refusedBeforeStop = 0;
    const reader = async () => {
      for (let i = 0; ; i++) {
        try {
          const path = i % 2 ? '/v2/contacts?pageSize=100&search=Contact' : '/v2/contacts?pageSize=100';
          const response = await fetch(`${url}${path}`, { headers: { authorization: account.token } });
          await response.arrayBuffer();
          count(String(response.status));
        } catch {
          if (!stopAt) refusedBeforeStop++;
          count('connection closed');
          return; // the server is gone: this reader stops
        }
      }
    };
    const readers = Array.from({ length: 20 }, reader);
    await eventually(async () => (statuses.get('200') ?? 0) >= 100, 30_000, '100 reads answered');
    stopAt = Date.now();
    child.kill('SIGTERM');
    const code = await exited(child);
    const stoppedInMs = Date.now() - stopAt;
    await Promise.all(readers);
    expect(['ended', 'closed']).toContain(await streamEnded);
    const output = logs.join('');
    console.log(
      `API: stopped ${stoppedInMs} ms after SIGTERM; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );

    expect(code).toBe(0);
    expect(refusedBeforeStop).toBe(0);
    expect([...statuses.keys()].filter((k) => !['200', '503', 'connection closed'].includes(k))).toEqual([]);
    expect(pgProblemsInOutput(output)).toEqual([]);
    expect(stoppedInMs).toBeLessThan(10_000); // the open event stream did not hold it up to SHUTDOWN_TIMEOUT_MS
  }, 90_000);

  it('the worker during a 5,000-message send: SIGTERM → active jobs finish, exit 0; the next start sends the rest, none lost', async () => {
    const logs: string[] = [];
    const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
    const began = Date.now();
    const recipients = Array.from({ length: 5000 }, (_, i) => `4917${String(2_000_000 + i)}${String(10 + (i % 89))}`);
    const ids = await t.app.get(SendQueueService).enqueueBulk(
      recipients.map((to, i) => ({
        accountId: account.accountId,
        phoneNumberId: phone.id,
        recipient: to,
        kind: 'text',
        body: `shutdown test ${i}`,
        payload: { messaging_product: 'whatsapp', to, type: 'text', text: { body: `shutdown test ${i}` } },
      })),
    );
    expect(new Set(ids).size).toBe(5000);
    const enqueuedInMs = Date.now() - began;
    const accepted = async () => {
      const [{ n }] = await t.db.query(
        `SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::uuid[]) AND wamid IS NOT NULL`,
        [ids],
      );
      return n as number;
    };

    const first = startWorkerProcess(t, logs, 10, {
      SHUTDOWN_TIMEOUT_MS: '20000',
      LOG_LEVEL: 'info',
      BULK_SEND_CONCURRENCY: '200',
    });
    children.push(first);
    await eventually(async () => (await accepted()) >= 1000, 90_000, '1,000 messages accepted').catch((error) => {
      throw new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);
    });
    const stopAt = Date.now();
    const firstRanMs = stopAt - began - enqueuedInMs;
    first.kill('SIGTERM');
    const code = await exited(first);
    const stoppedInMs = Date.now() - stopAt;
    const atStop = await accepted();
    const firstOutput = logs.join('');
    expect(code).toBe(0);
    expect(atStop).toBeLessThan(5000);
    expect(pgProblemsInOutput(firstOutput)).toEqual([]);
    expect(firstOutput).toContain('queue workers closed, active jobs finished');
    // nothing in flight was dropped: every message is either accepted by the platform or still queued for the next start
    const [stuck] = await t.db.query(
      `SELECT count(*) FILTER (WHERE status = 'failed')::int AS failed FROM messages WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    expect(stuck.failed).toBe(0);

    const second = startWorkerProcess(t, logs, 10, { BULK_SEND_CONCURRENCY: '200' });
    children.push(second);
    await eventually(async () => (await accepted()) === 5000, 120_000, 'all 5,000 accepted after the restart').catch(
      (error) => {
        throw new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);
      },
    );
    const secondRanMs = Date.now() - stopAt - stoppedInMs;
    second.kill('SIGTERM');
    expect(await exited(second)).toBe(0);

    const sent = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${account.messagingPhoneId}`)).body
      .data as Array<{ to: string }>;
    const perRecipient = new Map<string, number>();
    for (const m of sent) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
    const duplicates = [...perRecipient.values()].filter((n) => n > 1).length;
    console.log(
      `worker: 5,000 stored and queued in ${enqueuedInMs} ms, first worker ${firstRanMs} ms, stopped ${stoppedInMs} ms after SIGTERM with ${atStop}/5000 accepted, the next one sent the rest in ${secondRanMs} ms; platform received ${sent.length} messages for ${perRecipient.size} recipients, ${duplicates} recipients twice or more`,
    );
    expect([...perRecipient.keys()].sort()).toEqual([...recipients].sort()); // none lost
    expect(duplicates).toBe(0); // active jobs finished before the exit: nothing to send twice
    const rows = await t.db.query(`SELECT count(DISTINCT wamid)::int AS n FROM messages WHERE id = ANY($1::uuid[])`, [
      ids,
    ]);
    expect(rows[0].n).toBe(5000);
  }, 240_000);
});
