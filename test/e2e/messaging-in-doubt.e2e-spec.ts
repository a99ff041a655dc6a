import { getQueueToken } from '@nestjs/bullmq';
import { QUEUES } from '@switchboard/core';
import { SendQueueService } from '@switchboard/messaging';
import type { Queue } from 'bullmq';
import type { ChildProcess } from 'node:child_process';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startWorkerProcess } from '../helpers/worker-process';

/** The in-doubt wait of this file's workers (30 s by default). */
const IN_DOUBT_MS = 5000;

/**
 * Messages "in doubt" (the platform may have them, we never recorded its answer) are not sent twice:
 * - a worker is SIGKILLed while the platform holds its messages' answers (the sandbox's `sendAnswerDelayMs`) and our
 *   webhook intake lags far behind (its queue paused): the next worker waits for the status webhooks instead of
 *   sending again after a fixed delay;
 * - a worker frozen (SIGSTOP) longer than its job lock while sending a batch: another worker takes the batch over, and
 *   when the first one wakes up it finds its messages claimed by the other (fencing) and never calls the platform.
 */
describe('Messages in doubt after a worker died or froze (messaging in-doubt test)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let phoneRowId: string;
  const workers: ChildProcess[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }); // API only: the workers run as child processes
    sandbox = await startTestSandbox(t, {
      statusDelaysMs: { sent: 50, delivered: 150, read: null },
      enforceCustomerCareWindow: false,
    });
    account = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: 20 });
    [{ id: phoneRowId }] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
  }, 180_000);
  afterAll(async () => {
    for (const w of workers) {
      if (w.exitCode === null && w.signalCode === null) {
        w.kill('SIGCONT');
        w.kill('SIGKILL');
      }
    }
    await sandbox?.close();
    await t?.close();
  });

  function startWorker(): ChildProcess {
    const child = startWorkerProcess(t, logs, 5, { SEND_IN_DOUBT_MS: String(IN_DOUBT_MS) });
    workers.push(child);
    return child;
  }
  const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
  const kill = async (child: ChildProcess) => {
    if (!running(child)) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };

  const recipientsOf = (tag: number, n: number) =>
    Array.from({ length: n }, (_, i) => `49${tag}${String(1_000_000 + i)}${String(10 + (i % 89))}`);
  const textMessage = (to: string, i: number, sendJob?: string) => ({
    accountId: account.accountId,
    phoneNumberId: phoneRowId,
    recipient: to,
    kind: 'text',
    body: `in doubt ${i}`,
    payload: { messaging_product: 'whatsapp' as const, to, type: 'text' as const, text: { body: `in doubt ${i}` } },
    ...(sendJob ? { sendJob } : {}),
  });
  const recorded = async (ids: string[]) => {
    const [{ n }] = await t.db.query(
      `SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::uuid[]) AND wamid IS NOT NULL`,
      [ids],
    );
    return n as number;
  };
  /** What reached the platform for these recipients: copies per recipient. */
  const copiesAtPlatform = async (recipients: string[]) => {
    const wanted = new Set(recipients);
    const sent = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${account.messagingPhoneId}`)).body
      .data as Array<{ to: string }>;
    const copies = new Map<string, number>();
    for (const m of sent) if (wanted.has(m.to)) copies.set(m.to, (copies.get(m.to) ?? 0) + 1);
    return copies;
  };
  const failWithLogs = (error: unknown) => {
    throw new Error(`${(error as Error).message}\n${logs.join('').slice(-4000)}`);
  };

  it('worker SIGKILLed while the platform holds 30+ answers and the status webhooks wait in our intake: each message reaches the platform once', async () => {
    const intake = t.app.get<Queue>(getQueueToken(QUEUES.platformWebhooks));
    await sandbox.control.post('/_sandbox/config', {
      sendAnswerDelayMs: 4000,
      messagesPerSecond: { [account.messagingPhoneId]: 20 },
    });
    await intake.pause(); // the status webhooks are received and stored, not processed
    const recipients = recipientsOf(1, 60);
    const ids = await t.app.get(SendQueueService).enqueueBulk(recipients.map((to, i) => textMessage(to, i)));

    const first = startWorker();
    await eventually(
      async () => (await sandbox.control.get('/_sandbox/stats')).body.accepted >= 30,
      60_000,
      '30 messages accepted by the platform',
    ).catch(failWithLogs);
    await kill(first);
    const acceptedAtKill = (await sandbox.control.get('/_sandbox/stats')).body.accepted as number;
    expect(await recorded(ids)).toBe(0); // every accepted message's answer was still held by the platform

    startWorker();
    // the intake stays behind for longer than the old fixed in-doubt wait (stall detection + 10 s)
    await new Promise((resolve) => setTimeout(resolve, 32_000));
    const copiesWhileBehind = await copiesAtPlatform(recipients);
    await sandbox.control.post('/_sandbox/config', { sendAnswerDelayMs: 0 });
    await intake.resume();
    await eventually(async () => (await recorded(ids)) === 60, 60_000, 'all 60 messages recorded').catch(failWithLogs);
    await sandbox.control.post('/_sandbox/webhooks/flush', {});

    const copies = await copiesAtPlatform(recipients);
    const duplicates = [...copies.values()].reduce((sum, n) => sum + n - 1, 0);
    process.stdout.write(
      `in-doubt (intake behind): ${acceptedAtKill} accepted at the kill, ${[...copiesWhileBehind.values()].length} ` +
        `recipients reached while the intake was paused, ${duplicates} duplicates\n`,
    );
    expect(duplicates).toBe(0);
    expect([...copies.keys()].sort()).toEqual([...recipients].sort());
    const rows = await t.db.query(`SELECT status, wamid FROM messages WHERE id = ANY($1::uuid[])`, [ids]);
    expect(new Set(rows.map((r: { wamid: string }) => r.wamid)).size).toBe(60);
    expect(rows.every((r: { status: string }) => r.status !== 'queued' && r.status !== 'failed')).toBe(true);
    for (const w of workers) await kill(w);
  }, 180_000);

  it('worker frozen past its job lock mid-batch, another takes the batch over, the first wakes up: each message reaches the platform once', async () => {
    await sandbox.control.post('/_sandbox/config', {
      sendAnswerDelayMs: 0,
      messagesPerSecond: { [account.messagingPhoneId]: 10 },
    });
    await t.db.query(`UPDATE phone_numbers SET messages_per_second = 10 WHERE id = $1`, [phoneRowId]);
    const recipients = recipientsOf(2, 80);
    const sends = t.app.get(SendQueueService);
    const batch = `in-doubt-batch-${Date.now()}`;
    const { ids } = await sends.insert(
      recipients.map((to, i) => textMessage(to, i, batch)),
      'bulk',
    );
    await sends.requeue(
      ids.map((id) => ({ id, send_job: batch })),
      'bulk',
    );

    const first = startWorker();
    await eventually(async () => (await recorded(ids)) >= 15, 60_000, '15 messages recorded').catch(failWithLogs);
    first.kill('SIGSTOP');
    const atFreeze = await recorded(ids);
    const frozenAt = Date.now();
    const second = startWorker();
    // the batch's lock expires (15 s), the second worker takes the stalled batch over and sends on
    await eventually(async () => (await recorded(ids)) >= atFreeze + 15, 90_000, 'the second worker sending').catch(
      failWithLogs,
    );
    const takenOverAfterMs = Date.now() - frozenAt;
    first.kill('SIGCONT');
    await eventually(async () => (await recorded(ids)) === 80, 60_000, 'all 80 messages recorded').catch(failWithLogs);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // anything the woken worker still had in hand
    await sandbox.control.post('/_sandbox/webhooks/flush', {});

    const copies = await copiesAtPlatform(recipients);
    const duplicates = [...copies.values()].reduce((sum, n) => sum + n - 1, 0);
    process.stdout.write(
      `in-doubt (frozen worker): ${atFreeze} sent before the freeze, taken over ${takenOverAfterMs} ms after it, ${duplicates} duplicates\n`,
    );
    expect(duplicates).toBe(0);
    expect([...copies.keys()].sort()).toEqual([...recipients].sort());
    await kill(first);
    await kill(second);
  }, 240_000);
});
