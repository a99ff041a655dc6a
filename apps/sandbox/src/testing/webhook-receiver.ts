/**
 * A tiny HTTP server that records webhooks (raw body + headers) for tests: point the sandbox's
 * webhookUrl at `receiver.url` and await `receiver.waitFor(...)`.
 */
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  rawBody: Buffer;
  headers: IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  receivedAt: number;
}

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** HTTP status answered to every webhook (e.g. 500 to simulate a broken receiver) */
  status = 200;
  /** Per-request answer, before `status`: a status code, `{ status, headers }`, or 'hang' (never answer). */
  /** Answer this long after the request arrived (a slow receiver). */
  delayMs = 0;
  answer:
    | ((w: ReceivedWebhook) => number | { status: number; headers?: Record<string, string> } | 'hang' | undefined)
    | null = null;
  url = '';
  private server: Server | null = null;
  private waiters: Array<() => void> = [];

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks);
        let body: unknown;
        try {
          body = JSON.parse(rawBody.toString('utf8'));
        } catch {
          body = undefined;
        }
        const webhook = { rawBody, headers: req.headers, body, receivedAt: Date.now() };
        this.received.push(webhook);
        const answer = this.answer?.(webhook) ?? this.status;
        if (answer !== 'hang') {
          const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
          const reply = () => {
            res.writeHead(status, headers);
            res.end('ok');
          };
          if (this.delayMs > 0) setTimeout(reply, this.delayMs);
          else reply();
        }
        this.waiters.splice(0).forEach((fn) => fn());
      });
    });
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks/whatsapp`;
    return this.url;
  }

  /** Resolves with the first `count` webhooks matching `predicate` (waits for them, up to timeoutMs). */
  async waitFor(predicate: (w: ReceivedWebhook) => boolean, count = 1, timeoutMs = 5000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const matching = this.received.filter(predicate);
      if (matching.length >= count) return matching.slice(0, count);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `timed out waiting for ${count} webhook(s); got ${matching.length} matching of ${this.received.length}`,
        );
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Forgets what was received and answers every webhook 200 at once again. */
  clear(): void {
    this.received.length = 0;
    this.status = 200;
    this.answer = null;
    this.delayMs = 0;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }
}

/** Every status object in a received `messages` webhook. */
export function statusesOf(w: ReceivedWebhook): Array<{ id: string; status: string; [k: string]: unknown }> {
  const out = [];
  for (const entry of w.body?.entry ?? [])
    for (const ch of entry.changes ?? []) out.push(...(ch.value?.statuses ?? []));
  return out;
}
