import { computeSignature } from '@switchboard/whatsapp';
import { Agent, request, type ClientRequest } from 'node:http';
import { join } from 'node:path';
import { BenchContext, DIST } from '../bench-context';
import { freePort } from '../../../scripts/free-ports';
import { inboundWebhook, percentile } from '../helpers';

const APP_SECRET = 'bench-app-secret';
const TARGET_P99_MS = 200;

/**
 * The embedded inbox's live fan-out (issue 18): BENCH_INBOX_CLIENTS (default 500) embedded inbox sessions, each minted
 * and exchanged as the page does (POST /v1/embed/tokens, POST /v1/embed/session, scope: the account's number), each
 * streaming GET /v1/embed/inbox/events from ONE API process; a worker process handles the platform webhooks. Each
 * round posts one signed platform webhook carrying a customer's text message and measures, per client, the time from
 * the POST to that client reading the `message.created` event (p50, p99, max; target p99 < 200 ms). A first round
 * (not counted) proves the worker is up. BENCH_INBOX_ROUNDS rounds (default 5), one second apart.
 */
export async function inboxFanout(ctx: BenchContext) {
  const clients = Number(process.env.BENCH_INBOX_CLIENTS ?? 500);
  const rounds = Number(process.env.BENCH_INBOX_ROUNDS ?? 5);
  const apiPort = await freePort();
  const base = `http://127.0.0.1:${apiPort}`;
  const env = { WHATSAPP_APP_SECRET: APP_SECRET, EMBED_SESSION_RATE_LIMIT_PER_MINUTE: '100000' };
  await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { ...env, PORT: String(apiPort) },
    `${base}/health`,
  );
  await ctx.startProcess('worker', join(DIST, 'apps/worker/src/main.js'), env);

  const account = await ctx.createAccount();
  const phoneId = account.messagingPhoneIds[0];
  const auth = await fetch(`${base}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };

  // the sessions, as the embedded page gets them: mint (customer's server), exchange (the page)
  const sessions: string[] = [];
  await inBatches(clients, 20, async () => {
    const minted = await postJson(
      `${base}/v1/embed/tokens`,
      {
        scope: { messagingPhoneIds: [phoneId] },
        permissions: ['read', 'send'],
        allowedOrigins: ['https://crm.example'],
      },
      { authorization: token },
    );
    const session = await postJson(`${base}/v1/embed/session`, { embedToken: minted.embedToken });
    sessions.push(session.sessionToken);
  });

  // the streams: per client, the bench text of each message.created it read, and when
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  let onArrival: (client: number, text: string, at: number) => void = () => undefined;
  const requests: ClientRequest[] = [];
  let connected = 0;
  await inBatches(clients, 50, async (i) => {
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${base}/v1/embed/inbox/events`,
        { agent, headers: { authorization: `Bearer ${sessions[i]}`, accept: 'text/event-stream' } },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`events: ${res.statusCode}`));
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            const at = performance.now();
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              if (!block.includes('\nevent: message.created\n')) continue;
              const text = /"text":"(inbox bench [^"]*)"/.exec(block)?.[1];
              if (text) onArrival(i, text, at);
            }
          });
          connected++;
          resolve();
        },
      );
      req.on('error', reject);
      req.end();
      requests.push(req);
    });
  });

  let n = 0;
  const round = async (timeoutMs: number) => {
    const text = `inbox bench ${process.pid} ${n}`;
    const body = platformWebhook(phoneId, n++, text);
    const latencies: number[] = [];
    const seen = new Set<number>();
    const all = new Promise<void>((resolve) => {
      onArrival = (client, got, at) => {
        if (got !== text || seen.has(client)) return;
        seen.add(client);
        latencies.push(at - postedAt);
        if (seen.size === clients) resolve();
      };
    });
    const postedAt = performance.now();
    const response = await fetch(`${base}/webhooks/whatsapp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': computeSignature(Buffer.from(body), APP_SECRET),
      },
      body,
    });
    if (!response.ok) throw new Error(`platform webhook refused: ${response.status} ${await response.text()}`);
    const acceptedMs = performance.now() - postedAt;
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs))]);
    return { latencies: latencies.sort((a, b) => a - b), acceptedMs };
  };

  await round(30_000); // warm-up: the worker has booted and every stream is live
  const figures: Record<string, string> = {
    'SSE clients on one API (embed sessions)': `${connected} of ${clients}`,
    'target: webhook → every client p99': `< ${TARGET_P99_MS} ms`,
  };
  const everything: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { latencies, acceptedMs } = await round(10_000);
    everything.push(...latencies);
    const missing = clients - latencies.length;
    figures[`round ${r}: p50 / p99 / max ms`] =
      `${pct(latencies, 0.5)} / ${pct(latencies, 0.99)} / ${pct(latencies, 1)}` +
      ` (webhook answered in ${acceptedMs.toFixed(0)} ms${missing ? `; ${missing} clients got NOTHING in 10 s` : ''})`;
  }
  everything.sort((a, b) => a - b);
  const p99 = Number(pct(everything, 0.99));
  figures['all rounds: p50 / p99 / max ms'] =
    `${pct(everything, 0.5)} / ${pct(everything, 0.99)} / ${pct(everything, 1)}`;
  figures['p99 / target'] =
    `${(p99 / TARGET_P99_MS).toFixed(2)}x ${p99 < TARGET_P99_MS && everything.length === clients * rounds ? 'MET' : 'MISSED'}`;
  ctx.record(`inbox (platform webhook → message.created on ${clients} SSE streams)`, figures);

  for (const req of requests) req.destroy();
  agent.destroy();
}

const pct = (sorted: number[], p: number) => percentile(sorted, p) ?? 'n/a';

/** Runs `task(0..count-1)`, `width` at a time. */
async function inBatches(count: number, width: number, task: (i: number) => Promise<void>) {
  for (let start = 0; start < count; start += width)
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, k) => task(start + k)));
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const parsed = await response.json();
  if (!response.ok) throw new Error(`${url}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** A customer's text message as the platform posts it (one customer per round). */
function platformWebhook(phoneId: string, n: number, text: string): string {
  const from = `4916${String(100_000_000 + n)}`;
  return inboundWebhook(phoneId, from, `wamid.inboxbench.${process.pid}.${n}`, { text, name: `Customer ${n}` });
}
