import type { ChildProcess } from 'node:child_process';
import { SendQueueService } from '@switchboard/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

/**
 * The in-doubt wait of this file's workers (30 s by default): the messages claimed by the killed worker wait this long
 * after their claim, or until its jobs are taken over (15 s lock), whichever is later, before they may be sent again.
 */
const IN_DOUBT_MS = 15_000;

/**
 * Nothing lost, nothing sent twice: a worker process is SIGKILLed in the middle of a paced bulk send, another one
 * takes over, and every message reaches the platform exactly once.
 */
describe('Send pipeline survives a killed worker (messaging crash test)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const workers: ChildProcess[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }); // API only: the worker runs as child processes
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 50, delivered: 150, read: null } });
    account = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: 30 });
    await sandbox.control.post('/_sandbox/config', { messagesPerSecond: { [account.messagingPhoneId]: 30 } });
  }, 180_000);
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await sandbox?.close();
    await t?.close();
  });

  function startWorker(): ChildProcess {
    const child = startWorkerProcess(t, logs, 5, { SEND_IN_DOUBT_MS: String(IN_DOUBT_MS) });
    workers.push(child);
    return child;
  }

  const acceptedCount = async () => {
    const [{ n }] = await t.db.query(
      `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND wamid IS NOT NULL`,
      [account.accountId],
    );
    return n as number;
  };

  it('300 paced messages, worker SIGKILLed mid-way, a new worker finishes: each recipient got exactly one message', async () => {
    const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
    const recipients = Array.from({ length: 300 }, (_, i) => `4916${String(1_000_000 + i)}${String(10 + (i % 89))}`);
    const ids = await t.app.get(SendQueueService).enqueueBulk(
      recipients.map((to, i) => ({
        accountId: account.accountId,
        phoneNumberId: phone.id,
        recipient: to,
        kind: 'text',
        body: `crash test ${i}`,
        payload: { messaging_product: 'whatsapp', to, type: 'text', text: { body: `crash test ${i}` } },
      })),
    );
    expect(new Set(ids).size).toBe(300);
    // the platform window: the sandbox only accepts session messages inside it
    await sandbox.control.post('/_sandbox/config', { enforceCustomerCareWindow: false });

    const first = startWorker();
    await eventually(async () => (await acceptedCount()) >= 90, 60_000, 'a third of the messages accepted').catch(
      async (error) => {
        const statuses = await t.db.query(
          `SELECT status, error_message, count(*)::int AS n FROM messages WHERE account_id = $1 GROUP BY 1, 2`,
          [account.accountId],
        );
        throw new Error(`${(error as Error).message}: ${JSON.stringify(statuses)}\n${logs.join('').slice(-3000)}`);
      },
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const atKill = await acceptedCount();
    expect(atKill).toBeLessThan(300);

    startWorker();
    await eventually(async () => (await acceptedCount()) === 300, 120_000, 'all 300 accepted after the restart').catch(
      (error) => {
        throw new Error(
          `${(error as Error).message}; accepted ${atKill} before the kill\n${logs.join('').slice(-3000)}`,
        );
      },
    );

    const sent = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${account.messagingPhoneId}`)).body
      .data as Array<{ to: string; wamid: string }>;
    const perRecipient = new Map<string, number>();
    for (const m of sent) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
    expect(sent).toHaveLength(300);
    expect([...perRecipient.values()].every((n) => n === 1)).toBe(true);
    expect([...perRecipient.keys()].sort()).toEqual([...recipients].sort());
    const rows = await t.db.query(`SELECT status, wamid FROM messages WHERE id = ANY($1::uuid[])`, [ids]);
    expect(rows.every((r: any) => r.wamid && r.status !== 'queued' && r.status !== 'failed')).toBe(true);
    expect(new Set(rows.map((r: any) => r.wamid)).size).toBe(300);
  }, 240_000);
});
