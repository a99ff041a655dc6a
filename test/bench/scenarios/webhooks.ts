import { computeSignature } from '@switchboard/whatsapp';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { BenchContext, DIST } from '../bench-context';
import { freePort } from '../../../scripts/free-ports';
import { recordCompletedCampaigns } from '../../helpers/webhooks';
import { inboundWebhook, percentile, postLoad } from '../helpers';

const APP_SECRET = 'bench-app-secret';

/**
 * Account webhooks: BENCH_WEBHOOK_EVENTS (default 5,000) customer messages, each posted as a signed platform webhook to
 * the API at BENCH_WEBHOOK_EVENT_RATE per second (default 300), each fanned out as `message.received` to 3 endpoints
 * (receivers in this process, answering 200 at once). API and worker run as their own processes. Measures deliveries
 * per second (first platform webhook posted → last delivery received) and, per delivery, the time from posting the
 * platform webhook to the receiver getting our signed webhook (p50, p99, max).
 */
export async function webhookDeliveries(ctx: BenchContext) {
  const total = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 5_000);
  const rate = Number(process.env.BENCH_WEBHOOK_EVENT_RATE ?? 300);
  const apiPort = await freePort();
  const base = `http://127.0.0.1:${apiPort}`;
  const env = {
    WHATSAPP_APP_SECRET: APP_SECRET,
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: process.env.WEBHOOK_POLL_INTERVAL_MS ?? '50',
  };
  await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { ...env, PORT: String(apiPort) },
    `${base}/health`,
  );
  await ctx.startProcess('worker', join(DIST, 'apps/worker/src/main.js'), env);
  await new Promise((r) => setTimeout(r, 3000)); // the worker boots

  // three receivers: per delivery, the event's bench index and when it arrived
  const postedAt = new Float64Array(total);
  const latencies: number[] = [];
  const ids = new Set<string>();
  let received = 0;
  let lastReceivedAt = 0;
  let done: () => void = () => undefined;
  const allReceived = new Promise<void>((resolve) => (done = resolve));
  const servers: Server[] = [];
  const urls: string[] = [];
  for (let i = 0; i < 3; i++) {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = performance.now();
        res.writeHead(204).end();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const n = Number(/^bench (\d+)$/.exec(body.data?.text ?? '')?.[1]);
        if (Number.isInteger(n)) latencies.push(now - postedAt[n]);
        ids.add(`${i}:${req.headers['webhook-id']}`);
        received++;
        lastReceivedAt = now;
        if (received >= total * 3) done();
      });
    });
    server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as { port: number }).port}/hooks/${i}`);
  }

  const account = await ctx.createAccount();
  const auth = await fetch(`${base}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };
  for (const url of urls) {
    const res = await fetch(`${base}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ url, events: ['message.received'] }),
    });
    if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${await res.text()}`);
  }

  const phoneId = account.messagingPhoneIds[0];
  const platformWebhook = (n: number) =>
    inboundWebhook(phoneId, `4917${String(100_000_000 + n)}`, `wamid.bench.${process.pid}.${n}`, {
      text: `bench ${n}`,
      name: `Customer ${n}`,
    });

  // offered at a steady rate (every 10 ms, the events due by then), at most 64 posts in flight
  const started = performance.now();
  let next = 0;
  let inFlight = 0;
  let rejected = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      while (next < due && inFlight < 64) {
        const n = next++;
        const body = platformWebhook(n);
        inFlight++;
        postedAt[n] = performance.now();
        postLoad(`${base}/webhooks/whatsapp`, body, {
          'x-hub-signature-256': computeSignature(Buffer.from(body), APP_SECRET),
        })
          .then(
            (r) => (r.status >= 200 && r.status < 300 ? undefined : rejected++),
            () => rejected++,
          )
          .finally(() => inFlight--);
      }
      if (next >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  const postedMs = performance.now() - started;
  await Promise.race([allReceived, new Promise((r) => setTimeout(r, 300_000))]);

  const sorted = latencies.sort((a, b) => a - b);
  const spanS = (lastReceivedAt - started) / 1000;
  await new Promise((r) => setTimeout(r, 1000)); // the last outcomes are written in batches
  const [states] = await ctx.db.query(
    `SELECT count(*)::int AS deliveries, count(*) FILTER (WHERE status = 'delivered')::int AS delivered, sum(attempts)::int AS attempts FROM webhook_deliveries WHERE account_id = $1`,
    [account.accountId],
  );
  // the two halves: platform webhook → event recorded (intake, worker) and event recorded → delivered (webhooks worker)
  const [split] = await ctx.db.query(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
            extract(epoch FROM max(created_at) - min(created_at)) AS recorded_span_s
       FROM (SELECT e.created_at, extract(epoch FROM d.delivered_at - e.created_at) * 1000 AS ms
               FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.account_id = $1) x`,
    [account.accountId],
  );
  ctx.record('webhooks (platform webhook → message.received → 3 endpoints)', {
    'events (customer messages)': total,
    'offered platform webhooks/s': rate,
    'posting took s': (postedMs / 1000).toFixed(1),
    'platform webhooks refused by the API': rejected,
    'deliveries received (expected)': `${received} (${total * 3})${received >= total * 3 ? '' : ' INCOMPLETE'}`,
    'distinct (endpoint, webhook-id)': ids.size,
    'deliveries/s (first post → last delivery)': (received / spanS).toFixed(0),
    'platform webhook → receiver p50 ms': percentile(sorted, 0.5) ?? 'n/a',
    'platform webhook → receiver p99 ms': percentile(sorted, 0.99) ?? 'n/a',
    'platform webhook → receiver max ms': percentile(sorted, 1) ?? 'n/a',
    'events recorded per s (intake)': (total / Number(split.recorded_span_s)).toFixed(0),
    'event recorded → delivered p50 / p99 ms': `${Number(split.p50).toFixed(0)} / ${Number(split.p99).toFixed(0)}`,
    'deliveries recorded / delivered / attempts': `${states.deliveries} / ${states.delivered} / ${states.attempts}`,
  });

  // Part 2, delivery alone: the same number of events written straight into the outbox (one statement), fanned out to
  // the same 3 endpoints (another account), with nothing else running.
  if (process.env.BENCH_WEBHOOK_DIRECT !== 'false') {
    const second = await ctx.createAccount();
    for (const url of urls) {
      await ctx.db.query(
        `INSERT INTO webhook_endpoints (account_id, url, events, secret_sealed) SELECT $1, $2, ARRAY['*'], secret_sealed FROM webhook_endpoints WHERE account_id = $3 LIMIT 1`,
        [second.accountId, url, account.accountId],
      );
    }
    received = 0;
    const directDone = new Promise<void>((resolve) => (done = resolve));
    const t0 = performance.now();
    await recordCompletedCampaigns(ctx.db, second.accountId, total);
    await Promise.race([directDone, new Promise((r) => setTimeout(r, 300_000))]);
    const directS = (lastReceivedAt - t0) / 1000;
    await new Promise((r) => setTimeout(r, 1000));
    const [direct] = await ctx.db.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
         FROM (SELECT extract(epoch FROM d.delivered_at - e.created_at) * 1000 AS ms FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.account_id = $1) x`,
      [second.accountId],
    );
    const [attempt] = await ctx.db.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a.latency_ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY a.latency_ms) AS p99
         FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.account_id = $1`,
      [second.accountId],
    );
    ctx.record('webhooks, delivery alone (outbox → 3 endpoints)', {
      'attempt latency (request → answer) p50 / p99 ms': `${Number(attempt.p50).toFixed(0)} / ${Number(attempt.p99).toFixed(0)}`,
      'events written to the outbox': total,
      'deliveries received (expected)': `${received} (${total * 3})${received >= total * 3 ? '' : ' INCOMPLETE'}`,
      'deliveries/s': (received / directS).toFixed(0),
      'all delivered after s': directS.toFixed(1),
      'event recorded → delivered p50 / p99 ms': `${Number(direct.p50).toFixed(0)} / ${Number(direct.p99).toFixed(0)}`,
    });
  }

  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
