import { provisionAccount } from '@switchboard/accounts';
import { AppConfig, createRedis, loadConfig, QUEUES, SecretBox } from '@switchboard/core';
import { OutboundMessage, SendQueueService } from '@switchboard/messaging';
import { Queue } from 'bullmq';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchContext, DIST } from '../bench-context';
import { freePorts } from '../../../scripts/free-ports';
import { waitForWorkers } from '../bench-platform';

/**
 * ARCHITECTURE.md target: sends paced at the number's rate (1,000 msg/s here), never above it in any 1-second
 * window; 100,000 recipients within 110 s on 2 cores. Sandbox, API (webhook receiver) and worker each run as their own
 * process; messages go in through SendQueueService.enqueueBulk (the campaigns' entry point), 1,000 per insert.
 *
 * BENCH_SENDS (default 10000) messages, BENCH_SEND_RATE (default 1000) msg/s, BENCH_WORKERS (default 1) worker processes
 * sharing the pacer.
 */
export async function sends(ctx: BenchContext) {
  const total = Number(process.env.BENCH_SENDS ?? 10_000);
  const rate = Number(process.env.BENCH_SEND_RATE ?? 1000);
  // free ports: benchmarks of other worktrees may be running on this machine
  const [apiPort, sandboxPort] = (await freePorts(2)).map(String);
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const env = { WHATSAPP_APP_SECRET: 'bench-app-secret' };

  await ctx.startProcess(
    'sandbox',
    join(DIST, 'apps/sandbox/src/main.js'),
    { ...env, SANDBOX_PORT: sandboxPort, SANDBOX_WEBHOOK_URL: `http://127.0.0.1:${apiPort}/webhooks/whatsapp` },
    `${sandboxUrl}/_sandbox/health`,
  );
  await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { ...env, PORT: apiPort },
    `http://127.0.0.1:${apiPort}/health`,
  );
  const workerCount = Math.max(1, Number(process.env.BENCH_WORKERS ?? 1));
  const workers: ChildProcess[] = [];
  for (let i = 0; i < workerCount; i++)
    workers.push(await ctx.startProcess(`worker-${i}`, join(DIST, 'apps/worker/src/main.js'), env));

  const config: AppConfig = loadConfig({ ...ctx.env, ...env });
  const account = await provisionAccount(ctx.db, new SecretBox(config.ENCRYPTION_KEY), {
    name: 'Bench sends',
    apiBaseUrl: sandboxUrl,
    apiVersion: config.WHATSAPP_API_VERSION,
    messagesPerSecond: rate,
  });
  const phoneId = account.messagingPhoneIds[0];
  const control = (path: string, body?: unknown) =>
    fetch(
      `${sandboxUrl}/_sandbox/${path}`,
      body === undefined
        ? {}
        : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
    ).then((r) => r.json() as Promise<any>);
  await control('config', {
    messagesPerSecond: { [phoneId]: rate },
    statusBatchSize: 100,
    statusWebhooks: process.env.BENCH_STATUS_WEBHOOKS !== 'false',
    statusDelaysMs: { sent: 200, delivered: 600, read: null },
    enforceCustomerCareWindow: false,
    messageLogLimit: total + 1000,
    messageLogPayloads: false,
  });
  await waitForWorkers(config, workers);

  const [phone] = await ctx.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [phoneId]);
  const connection = createRedis(config.REDIS_URL);
  const queueOpts = { connection, prefix: `${config.REDIS_PREFIX}:bull` };
  const apiQueue = new Queue(QUEUES.sends, queueOpts);
  const bulkQueue = new Queue(QUEUES.bulkSends, queueOpts);
  const service = new SendQueueService(ctx.db, apiQueue, bulkQueue, config);

  const messages: OutboundMessage[] = Array.from({ length: total }, (_, i) => {
    const to = `4915${String(100_000_000 + i)}`;
    return {
      accountId: account.accountId,
      phoneNumberId: phone.id,
      recipient: to,
      kind: 'text',
      body: `bench ${i}`,
      payload: { messaging_product: 'whatsapp', to, type: 'text', text: { body: `bench ${i}` } },
    };
  });

  const rss = { peakKb: 0 };
  const rssTimer = setInterval(() => {
    for (const worker of workers) {
      try {
        const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${worker.pid}/status`, 'utf8'));
        if (hwm) rss.peakKb = Math.max(rss.peakKb, Number(hwm[1]));
      } catch {
        // process gone
      }
    }
  }, 500);

  const started = Date.now();
  await service.enqueueBulk(messages);
  const enqueuedMs = Date.now() - started;
  let accepted = 0;
  const deadline = Date.now() + Math.max(120_000, (total / rate) * 3000);
  while (Date.now() < deadline) {
    const stats = await control('stats');
    accepted = stats.accepted;
    if (accepted >= total) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const doneMs = Date.now() - started;
  clearInterval(rssTimer);

  const stats = await control('stats');
  const log = await control(`messages?phone_number_id=${phoneId}`);
  const times = (log.data as Array<{ acceptedAt: string }>)
    .map((m) => new Date(m.acceptedAt).getTime())
    .sort((a, b) => a - b);
  let maxWindow = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= 1000) j++;
    maxWindow = Math.max(maxWindow, i - j + 1);
  }
  const spanS = (times[times.length - 1] - times[0]) / 1000;
  const achieved = (times.length - 1) / spanS;
  // the worker records each answer right after it: give the last UPDATEs a moment
  let queued = total;
  for (let i = 0; i < 40 && queued > 0; i++) {
    [{ queued }] = await ctx.db.query(
      `SELECT count(*) FILTER (WHERE wamid IS NULL)::int AS queued FROM messages WHERE account_id = $1`,
      [account.accountId],
    );
    if (queued > 0) await new Promise((r) => setTimeout(r, 250));
  }
  const per100k = (100_000 / achieved).toFixed(0);

  ctx.record('sends (enqueueBulk → worker → sandbox)', {
    messages: total,
    'configured rate msg/s': rate,
    'enqueue (insert + addBulk) ms': enqueuedMs,
    'accepted by the platform': `${stats.accepted}${stats.accepted >= total ? '' : ' (INCOMPLETE)'}`,
    'first → last acceptance s': spanS.toFixed(2),
    'achieved msg/s': `${achieved.toFixed(0)} (${((achieved / rate) * 100).toFixed(1)}% of configured)`,
    'enqueue → all accepted s': (doneMs / 1000).toFixed(2),
    'max in any 1-second window': `${maxWindow} ${maxWindow <= rate ? 'OK' : 'ABOVE RATE'}`,
    'platform rejections': JSON.stringify(stats.rejected),
    'still without wamid in DB': queued,
    'projected 100k recipients s (target <= 110)': per100k,
    'worker processes': workerCount,
    'worker peak RSS MB (largest)': (rss.peakKb / 1024).toFixed(0),
    'webhooks delivered / failed / dropped': `${stats.webhooksDelivered} / ${stats.webhooksFailed} / ${stats.webhooksDropped}`,
  });

  await apiQueue.close();
  await bulkQueue.close();
  connection.disconnect();
}
