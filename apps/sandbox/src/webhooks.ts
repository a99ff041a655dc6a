import { BSUID } from './json';
import { createHash, createHmac } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import { titleOf } from './errors';
import { Fifo, SandboxState, WebhookLogEntry } from './state';

export interface DeliveryResult {
  statusCode: number | null;
  error: string | null;
}

interface PendingDelivery {
  field: string;
  body: unknown;
  resolve: (result: DeliveryResult) => void;
  /** failed deliveries so far (webhookRetries) */
  failures?: number;
}

/** `sha256=` + hex HMAC-SHA256 of the exact bytes sent, keyed with the app secret (Meta's X-Hub-Signature-256). */
export function sign(rawBody: string | Buffer, appSecret: string): string {
  return 'sha256=' + createHmac('sha256', appSecret).update(rawBody).digest('hex');
}

/**
 * Sends signed webhooks with bounded concurrency (FIFO). A failed delivery is logged and counted,
 * never thrown: the receiver may not be up yet. Meta retries failed deliveries; the sandbox does only with
 * `webhookRetries` (the promise of `send` then settles with the last attempt).
 */
export class WebhookDispatcher {
  private queue = new Fifo<PendingDelivery>();
  private inFlight = 0;
  private seq = 0;
  private closed = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly state: SandboxState,
    private readonly log: (msg: string) => void,
  ) {}

  /** failed deliveries waiting for their next try: the timer, and how to settle them if it never fires */
  private readonly retrying = new Map<NodeJS.Timeout, () => void>();

  get pending(): number {
    return this.queue.length + this.inFlight + this.retrying.size;
  }

  /** Queue one webhook; the promise settles when it was delivered (or failed, or dropped). */
  send(field: string, body: unknown): Promise<DeliveryResult> {
    return new Promise((resolve) => {
      if (this.closed) return resolve({ statusCode: null, error: 'sandbox closed' });
      if (this.queue.length >= this.state.config.maxPendingWebhooks) {
        this.state.stats.webhooksDropped++;
        return resolve({ statusCode: null, error: 'dropped: too many pending webhooks' });
      }
      this.queue.push({ field, body, resolve });
      this.pump();
    });
  }

  /** Resolves when nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.drop('sandbox closed');
  }

  /** Forget queued (not yet started) deliveries; their senders get an error result. */
  reset(): void {
    this.drop('sandbox reset');
  }

  private drop(reason: string): void {
    let item: PendingDelivery | undefined;
    while ((item = this.queue.shift())) item.resolve({ statusCode: null, error: reason });
    // deliveries waiting to be tried again end with their last failure
    for (const [timer, settle] of this.retrying) {
      clearTimeout(timer);
      settle();
    }
    this.retrying.clear();
    if (this.pending === 0) this.idle.splice(0).forEach((fn) => fn());
  }

  private pump(): void {
    while (this.inFlight < Math.max(1, this.state.config.webhookConcurrency) && this.queue.length > 0) {
      const item = this.queue.shift()!;
      this.inFlight++;
      this.deliver(item)
        .then((result) => this.settle(item, result))
        .finally(() => {
          this.inFlight--;
          this.pump();
          if (this.pending === 0) this.idle.splice(0).forEach((fn) => fn());
        });
    }
  }

  /** A failed delivery with retries left goes back into the queue after its delay; anything else is done. */
  private settle(item: PendingDelivery, result: DeliveryResult): void {
    const failures = (item.failures ?? 0) + (result.error ? 1 : 0);
    if (!result.error || this.closed || failures > this.state.config.webhookRetries) return item.resolve(result);
    const timer = setTimeout(
      () => {
        this.retrying.delete(timer);
        this.queue.push({ ...item, failures });
        this.pump();
      },
      this.state.config.webhookRetryDelayMs * 2 ** (failures - 1),
    );
    timer.unref();
    this.retrying.set(timer, () => item.resolve(result));
  }

  // node:http with keep-alive agents: much cheaper per webhook than fetch at thousands per second
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };

  private post(url: string, raw: string, signature: string, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const isHttps = target.protocol === 'https:';
      const req = (isHttps ? https : http).request(
        target,
        {
          method: 'POST',
          agent: isHttps ? this.agents.https : this.agents.http,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(raw),
            'x-hub-signature-256': signature,
            'user-agent': 'facebookexternalua',
          },
          timeout: timeoutMs,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      req.end(raw);
    });
  }

  private lastFailureLog = 0;
  private suppressedFailures = 0;

  /** At most one failure line every 5 s (a receiver that is down must not flood the console). */
  private logFailure(line: string): void {
    const now = Date.now();
    if (now - this.lastFailureLog < 5000) {
      this.suppressedFailures++;
      return;
    }
    const more = this.suppressedFailures ? ` (+${this.suppressedFailures} more failures since the last report)` : '';
    this.lastFailureLog = now;
    this.suppressedFailures = 0;
    this.log(line + more);
  }

  private async deliver(item: PendingDelivery): Promise<DeliveryResult> {
    const { config } = this.state;
    const raw = metaJson(item.body);
    const signature = sign(raw, config.appSecret);
    const url = config.webhookUrl;
    const started = Date.now();
    let result: DeliveryResult;
    if (!url) {
      result = { statusCode: null, error: 'no webhookUrl configured' };
    } else {
      try {
        const statusCode = await this.post(url, raw, signature, config.webhookTimeoutMs);
        result = { statusCode, error: statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}` };
      } catch (err) {
        result = { statusCode: null, error: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
      }
    }
    if (result.error) {
      this.state.stats.webhooksFailed++;
      this.logFailure(`webhook ${item.field} to ${url ?? '(none)'} failed: ${result.error}`);
    } else {
      this.state.stats.webhooksDelivered++;
    }
    const entry: WebhookLogEntry = {
      id: ++this.seq,
      at: new Date(started).toISOString(),
      url,
      field: item.field,
      body: item.body,
      signature,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: Date.now() - started,
    };
    this.state.webhooks.add(entry);
    return result;
  }
}

/** Meta's envelope around one change. */
/**
 * JSON as Meta serialises webhook bodies: every non-ASCII character escaped as `\\uXXXX` (UTF-16 units, so an emoji is
 * a surrogate pair) and `/` escaped as `\\/`. A receiver that re-serialises the parsed body gets other bytes, so its
 * signature check fails: it must verify the raw body.
 */
export function metaJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
    .replace(/\//g, '\\/');
}

export function envelope(wabaId: string, field: string, value: unknown): unknown {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: wabaId, changes: [{ value, field }] }],
  };
}

type Stage = 'sent' | 'delivered' | 'read' | 'failed';

interface ScheduledStatus {
  acceptedAt: number;
  dueAt: number;
  wamid: string;
  phoneNumberId: string;
  recipientId: string;
  stage: Stage;
  category: string;
  /** `beforeSent`: the platform accepted the message but never sent it (131047): `failed` comes instead of `sent` */
  failure?: { code: number; details?: string; beforeSent?: boolean };
  bizOpaque?: string;
}

/**
 * Emits the status webhooks of accepted messages from one ticker (no timer per message).
 * One FIFO per stage: the delay of a stage is the same for every message, so each FIFO stays
 * ordered by due time and a tick only looks at the heads. sent -> delivered -> read, or
 * sent -> failed for recipients a failure rule matches. Due statuses of one phone number are
 * grouped into webhooks of up to `statusBatchSize` statuses.
 */
export class StatusScheduler {
  private queues: Record<Stage, Fifo<ScheduledStatus>> = {
    sent: new Fifo(),
    delivered: new Fifo(),
    read: new Fifo(),
    failed: new Fifo(),
  };
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly state: SandboxState,
    private readonly dispatcher: WebhookDispatcher,
    private readonly now: () => number = Date.now,
  ) {}

  get pending(): number {
    return Object.values(this.queues).reduce((n, q) => n + q.length, 0);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), Math.max(1, this.state.config.tickMs));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  restart(): void {
    if (!this.timer) return;
    this.stop();
    this.start();
  }

  reset(): void {
    for (const q of Object.values(this.queues)) q.clear();
  }

  schedule(
    msg: {
      wamid: string;
      phoneNumberId: string;
      recipientId: string;
      category: string;
      failure?: { code: number; details?: string; beforeSent?: boolean };
      bizOpaque?: string;
    },
    acceptedAt: number,
  ): void {
    if (!this.state.config.statusWebhooks) return;
    this.queues.sent.push({
      ...msg,
      acceptedAt,
      stage: 'sent',
      dueAt: acceptedAt + this.state.config.statusDelaysMs.sent,
    });
  }

  /** Emit every status that is due (called by the ticker; tests may call it directly). */
  tick(): void {
    const now = this.now();
    const { statusDelaysMs } = this.state.config;
    const due: ScheduledStatus[] = [];
    for (const stage of ['sent', 'delivered', 'read', 'failed'] as Stage[]) {
      const q = this.queues[stage];
      while (q.length > 0 && q.peek()!.dueAt <= now) due.push(q.shift()!);
    }
    if (due.length === 0) return;
    for (let i = 0; i < due.length; i++) {
      const s = due[i];
      if (s.stage === 'sent' && s.failure?.beforeSent) {
        due[i] = { ...s, stage: 'failed' }; // never sent: the failed status is the only one
        continue;
      }
      // each stage is due `delay` after acceptance, never before the previous stage
      const at = (delay: number) => Math.max(s.dueAt, s.acceptedAt + delay);
      if (s.stage === 'sent') {
        if (s.failure) this.queues.failed.push({ ...s, stage: 'failed', dueAt: at(statusDelaysMs.delivered) });
        else this.queues.delivered.push({ ...s, stage: 'delivered', dueAt: at(statusDelaysMs.delivered) });
      } else if (s.stage === 'delivered' && statusDelaysMs.read !== null) {
        this.queues.read.push({ ...s, stage: 'read', dueAt: at(statusDelaysMs.read) });
      }
    }
    this.emit(due, now);
  }

  private emit(due: ScheduledStatus[], now: number): void {
    const byPhone = new Map<string, ScheduledStatus[]>();
    for (const s of due) {
      const list = byPhone.get(s.phoneNumberId);
      if (list) list.push(s);
      else byPhone.set(s.phoneNumberId, [s]);
    }
    const batch = Math.max(1, this.state.config.statusBatchSize);
    const timestamp = String(Math.floor(now / 1000));
    for (const [phoneNumberId, list] of byPhone) {
      for (let i = 0; i < list.length; i += batch) {
        const statuses = list.slice(i, i + batch).map((s) => statusObject(s, timestamp));
        const value = {
          messaging_product: 'whatsapp',
          metadata: {
            display_phone_number: this.state.displayPhoneNumber(phoneNumberId),
            phone_number_id: phoneNumberId,
          },
          statuses,
        };
        void this.dispatcher.send('messages', envelope(this.state.wabaOf(phoneNumberId), 'messages', value));
      }
    }
  }
}

function statusObject(s: ScheduledStatus, timestamp: string): Record<string, unknown> {
  const base: Record<string, unknown> = {
    id: s.wamid,
    status: s.stage,
    timestamp,
    // sent to a business-scoped user id: Meta names the recipient by that id and withholds the phone
    ...(BSUID.test(s.recipientId) ? { recipient_user_id: s.recipientId } : { recipient_id: s.recipientId }),
  };
  if (s.bizOpaque) base.biz_opaque_callback_data = s.bizOpaque;
  if (s.stage === 'failed' && s.failure) {
    const title = titleOf(s.failure.code);
    base.errors = [
      {
        code: s.failure.code,
        title,
        message: title,
        error_data: { details: s.failure.details ?? title },
        href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
      },
    ];
    return base;
  }
  if (s.stage === 'sent' || s.stage === 'delivered') {
    // From v24.0 Meta sends `conversation` only for free entry point conversations; statuses carry `pricing` alone.
    if (s.category === 'free_entry_point') {
      base.conversation = {
        id: conversationId(s.phoneNumberId, s.recipientId),
        ...(s.stage === 'sent' ? { expiration_timestamp: String(Number(timestamp) + 24 * 3600) } : {}),
        origin: { type: 'free_entry_point' },
      };
    }
    base.pricing = {
      billable: s.category !== 'free_entry_point',
      pricing_model: 'PMP',
      category: s.category === 'free_entry_point' ? 'service' : s.category,
      type:
        s.category === 'free_entry_point'
          ? 'free_entry_point'
          : s.category === 'service'
            ? 'free_customer_service'
            : 'regular',
    };
  }
  return base;
}

function conversationId(phoneNumberId: string, recipient: string): string {
  return createHash('md5').update(`${phoneNumberId}:${recipient}`).digest('hex');
}
