import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AppConfig, createRedis, MicroBatcher, QUEUES, runWithRequestId, withRequestId } from '@switchboard/core';
import type { SendMessageRequest } from '@switchboard/whatsapp';
import { JobsOptions, Queue, QueueEvents } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type Redis from 'ioredis';
import { DataSource, EntityManager } from 'typeorm';
import { namedQuery } from '@switchboard/core/database';

/** One outbound message, ready to store and send: the Cloud API request body is built by the caller. */
export interface OutboundMessage {
  accountId: string;
  /** phone_numbers.id (the row id, not the messagingPhoneId) */
  phoneNumberId: string;
  contactId?: string | null;
  /** digits only */
  recipient: string;
  /** template, text, image, video, document, interactive */
  kind: string;
  templateName?: string | null;
  /** text / caption / interactive body, for conversations */
  body?: string | null;
  /** the Cloud API request body, from libs/whatsapp's message builders; biz_opaque_callback_data is added when sending */
  payload: SendMessageRequest;
  callbackUrl?: string | null;
  callbackEvents?: string[];
  /** unique per account: a second message with the same key is not created (the first one is returned) */
  idempotencyKey?: string | null;
  /** the message id, when the caller must know it before the insert (e.g. to reference it in the same transaction) */
  id?: string;
  /** the campaign it belongs to (campaign fan-out) */
  campaignId?: string | null;
  /** the batch job that sends it (campaign chunks: see requeue) */
  sendJob?: string | null;
}

export type SendLane = 'api' | 'bulk';

export interface SendJobData {
  messageId: string;
  /** set by enqueue at insert time: lets a first attempt skip reading the row (retries, stalls and sweeps read it) */
  phoneNumberId?: string;
  payload?: SendMessageRequest;
  /** the platform accepted it but recording that failed: the retry only records this wamid */
  acceptedWamid?: string;
  /**
   * its last attempt got no readable answer (a timeout, an answer cut off): the platform may have it. The job comes
   * back once the message is no longer in doubt and records this failure only if no status webhook linked it.
   */
  undecided?: SendFailure;
  /** the API request that queued it (request-context.ts): the worker logs and calls the platform under it */
  requestId?: string;
}

export interface MessageOutcome {
  id: string;
  status: string;
  wamid: string | null;
  errorCode: number | null;
  errorTitle: string | null;
  errorMessage: string | null;
}

/** A job that sends several stored messages (a campaign chunk); its id is stored in each message's `send_job`. */
export interface SendBatchJobData {
  messageIds: string[];
  /** accepted by the platform on an earlier attempt whose database write failed: message id → wamid */
  acceptedWamids?: Record<string, string>;
  /** no readable answer on the last attempt (see SendJobData.undecided): message id → the failure to record */
  undecided?: Record<string, SendFailure>;
  requestId?: string;
}

/** What a message that failed for good records: the platform's code (0 without one), title and details. */
export interface SendFailure {
  code: number;
  title: string;
  details: string;
}

/** A stored message to queue again: with its `send_job` when it belongs to a batch job. */
export interface QueuedMessageRef {
  id: string;
  send_job?: string | null;
}

export const SEND_JOB = 'send';
export const SEND_BATCH_JOB = 'send-batch';
const INSERT_CHUNK = 1000;
/** the most messages stored together by storeInBatch: the size of a campaign chunk */
const BULK_BATCH_MAX = 50;

/** Job id = message id, or the batch's id: a second enqueue of the same message (or batch) is a no-op while the first waits. */
export function sendJobOptions(jobId: string): JobsOptions {
  return {
    jobId,
    attempts: 12,
    backoff: { type: 'platform' }, // see sendBackoff: honours retryAfterMs
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/**
 * Stores outbound messages (status `queued`) and only then queues them: nothing acknowledged is lost, and a crash
 * between the two is repaired by the worker's sweep of queued messages. API sends go on `QUEUES.sends` and may wait
 * for the platform's answer; campaign/automation sends go on `QUEUES.bulkSends` without waiting. Both share the
 * per-number pacer in the worker, where API sends go first.
 */
@Injectable()
export class SendQueueService implements OnModuleDestroy {
  private readonly logger = new Logger(SendQueueService.name);
  private events?: QueueEvents;
  private eventsConnection?: Redis;
  private readonly waiters = new Map<string, Set<() => void>>();
  /** automation steps' sends stored at the same moment: one INSERT and one batch job (storeInBatch) */
  private readonly bulkBatcher = new MicroBatcher((messages: OutboundMessage[]) => this.storeBatch(messages), {
    maxItems: BULK_BATCH_MAX,
    retryEachAlone: true, // one step's message that cannot be stored fails that step only
  });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.sends) private readonly apiQueue: Queue,
    @InjectQueue(QUEUES.bulkSends) private readonly bulkQueue: Queue,
    private readonly config: AppConfig,
  ) {}

  /** Campaigns and automations: store and queue, no waiting. Returns the message ids in input order. */
  enqueueBulk(messages: OutboundMessage[]): Promise<string[]> {
    return this.store(messages, 'bulk');
  }

  /**
   * One message on the bulk lane, stored and queued together with the others stored at the same moment (automation
   * steps): one INSERT and one batch job for all of them, sent like a campaign chunk, instead of a statement and a job
   * each. Resolves with the message id (an existing id for a repeated idempotency key).
   */
  storeInBatch(message: OutboundMessage): Promise<string> {
    return this.bulkBatcher.add(message);
  }

  private async storeBatch(messages: OutboundMessage[]): Promise<string[]> {
    const jobId = `bulk-batch-${randomUUID()}`; // BullMQ refuses custom ids with ":"
    const { ids, created } = await this.insert(
      messages.map((m) => ({ ...m, sendJob: jobId })),
      'bulk',
    );
    const fresh = ids.filter((id) => created.has(id));
    try {
      if (fresh.length) await this.enqueueBatches([{ jobId, messageIds: fresh }]);
      // a repeated idempotency key (a step performed again after a crash): queue the existing message under its job
      await this.requeue(await this.stillQueued(ids.filter((id) => !created.has(id))), 'bulk');
    } catch (error) {
      // Stored: the sweep of queued messages sends them; the steps must not fail for a message that will go out.
      this.logger.warn({ msg: 'stored messages not queued; the sweep will', jobId, error: (error as Error).message });
    }
    return ids;
  }

  /**
   * The messages whose idempotency key already names a different message (another number, recipient, kind, or Cloud
   * API body: template, variables, link, media), with the recipient of the first one: a key reused by mistake must not
   * answer for a message never sent.
   */
  async keysUsedForOtherMessages(
    messages: OutboundMessage[],
  ): Promise<Array<{ index: number; key: string; recipient: string }>> {
    const keyed = messages.flatMap((m, index) => (m.idempotencyKey ? [{ m, index, key: m.idempotencyKey }] : []));
    if (!keyed.length) return [];
    const rows: Array<{
      idempotency_key: string;
      phone_number_id: string;
      recipient: string;
      kind: string;
      payload: unknown;
      callback_url: string | null;
      callback_events: string[];
    }> = await this.db.query(
      `SELECT idempotency_key, phone_number_id, recipient, kind, payload, callback_url, callback_events FROM messages
        WHERE account_id = $1 AND idempotency_key = ANY($2::text[])`,
      [keyed[0].m.accountId, keyed.map((k) => k.key)],
    );
    const first = new Map(rows.map((r) => [r.idempotency_key, r]));
    return keyed.flatMap(({ m, index, key }) => {
      const r = first.get(key);
      const same =
        !r ||
        (String(r.phone_number_id) === String(m.phoneNumberId) &&
          r.recipient === m.recipient &&
          r.kind === m.kind &&
          isDeepStrictEqual(r.payload, JSON.parse(JSON.stringify(m.payload))) &&
          // the callback too: the same key with another callback_url answered 200, and the new one was never called
          (r.callback_url ?? null) === (m.callbackUrl ?? null) &&
          isDeepStrictEqual([...(r.callback_events ?? [])].sort(), [...(m.callbackEvents ?? [])].sort()));
      return same ? [] : [{ index, key, recipient: r.recipient }];
    });
  }

  /** Whether the account already has a message under this idempotency key (whatever it was). */
  async keyUsed(accountId: string, key: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM messages WHERE account_id = $1 AND idempotency_key = $2 LIMIT 1`,
      [accountId, key],
    );
    return rows.length > 0;
  }

  /** Stores then queues; returns the message ids in input order (an existing id for a repeated idempotency key). */
  async store(messages: OutboundMessage[], lane: SendLane): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < messages.length; i += INSERT_CHUNK) {
      const chunk = messages.slice(i, i + INSERT_CHUNK);
      const { ids: chunkIds, created } = await this.insert(chunk, lane);
      // Freshly created messages carry their payload in the job; a repeated idempotency key gets a bare job (reads the row).
      const inline = new Map(
        chunk
          .map((m, k) => [chunkIds[k], { phoneNumberId: m.phoneNumberId, payload: m.payload }] as const)
          .filter(([id]) => created.has(id)),
      );
      await this.enqueue(chunkIds, lane, inline);
      ids.push(...chunkIds);
    }
    return ids;
  }

  /** Queues already stored messages (idempotent: the job id is the message id). */
  async enqueue(
    messageIds: string[],
    lane: SendLane,
    inline?: Map<string, Pick<SendJobData, 'phoneNumberId' | 'payload'>>,
  ): Promise<void> {
    if (!messageIds.length) return;
    const queue = lane === 'api' ? this.apiQueue : this.bulkQueue;
    await queue.addBulk(
      messageIds.map((messageId) => ({
        name: SEND_JOB,
        data: withRequestId({ messageId, ...inline?.get(messageId) }) satisfies SendJobData,
        opts: sendJobOptions(messageId),
      })),
    );
  }

  /** Queues stored batches (campaign chunks) on the bulk queue; each message's `send_job` must be its batch's jobId. */
  private async enqueueBatches(batches: Array<{ jobId: string; messageIds: string[] }>): Promise<void> {
    if (!batches.length) return;
    await this.bulkQueue.addBulk(
      batches.map((b) => ({
        name: SEND_BATCH_JOB,
        data: withRequestId({ messageIds: b.messageIds }) satisfies SendBatchJobData,
        opts: sendJobOptions(b.jobId),
      })),
    );
  }

  /**
   * Queues stored messages under their job: a message that belongs to a batch (`send_job`, campaign fan-out) goes under
   * its batch's id, never under a second job, so it cannot be sent by two jobs at once; others get a job of their own.
   * Used for the first queueing of campaign chunks and for every re-queue (recovery, fan-out replay, resume).
   */
  async requeue(messages: QueuedMessageRef[], lane: SendLane): Promise<void> {
    const batches = new Map<string, string[]>();
    const single: string[] = [];
    for (const m of messages) {
      if (!m.send_job) single.push(m.id);
      else batches.set(m.send_job, [...(batches.get(m.send_job) ?? []), m.id]);
    }
    await this.enqueue(single, lane);
    await this.enqueueBatches([...batches].map(([jobId, messageIds]) => ({ jobId, messageIds })));
  }

  /**
   * The one INSERT of outbound messages (status `queued`). Pass `db` to write inside the caller's transaction, then
   * queue after its commit (`enqueue` / `requeue`): a crash between the two is repaired by the sweep of queued messages.
   * A repeated idempotency key creates nothing and answers the first message's id.
   */
  async insert(
    messages: OutboundMessage[],
    lane: SendLane,
    db: DataSource | EntityManager = this.db,
  ): Promise<{ ids: string[]; created: Set<string> }> {
    const rows = messages.map((m) => ({
      id: m.id ?? randomUUID(),
      account_id: m.accountId,
      phone_number_id: m.phoneNumberId,
      contact_id: m.contactId ?? null,
      recipient: m.recipient,
      kind: m.kind,
      template_name: m.templateName ?? null,
      body: m.body ?? null,
      payload: m.payload,
      idempotency_key: m.idempotencyKey ?? null,
      callback_url: m.callbackUrl ?? null,
      callback_events: m.callbackEvents ?? [],
      campaign_id: m.campaignId ?? null,
      send_job: m.sendJob ?? null,
    }));
    // Without an idempotency key nothing can conflict: no ON CONFLICT, so PostgreSQL skips the speculative insertion
    // (one WAL record less per message, and less work: a campaign's messages have no key). Rows go in contact order:
    // the insert trigger locks each contact's conversation row, and two processes storing messages to the same
    // customers (a bulk send beside a campaign, two automation batches) in other orders deadlocked. A key belongs to
    // one contact, so the key index is taken in one order too.
    const keyed = rows.some((r) => r.idempotency_key !== null);
    const inserted = await namedQuery<{ id: string }>(
      db,
      keyed ? 'messages_insert_keyed' : 'messages_insert',
      `INSERT INTO messages (id, account_id, phone_number_id, contact_id, direction, recipient, kind, template_name, body, payload, status,
                             idempotency_key, callback_url, callback_events, queue, campaign_id, send_job)
       SELECT x.id, x.account_id, x.phone_number_id, x.contact_id, 'outbound', x.recipient, x.kind, x.template_name, x.body, x.payload, 'queued',
              x.idempotency_key, x.callback_url, ARRAY(SELECT jsonb_array_elements_text(x.callback_events)), $2, x.campaign_id, x.send_job
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, account_id bigint, phone_number_id bigint, contact_id bigint, recipient text, kind text,
            template_name text, body text, payload jsonb, idempotency_key text, callback_url text, callback_events jsonb, campaign_id bigint, send_job text)
       ORDER BY x.account_id, x.contact_id, x.idempotency_key
       ${keyed ? 'ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING' : ''}
       RETURNING id`,
      [JSON.stringify(rows), lane],
    );
    const created = new Set(inserted.map((r) => r.id));
    if (inserted.length === rows.length) return { ids: rows.map((r) => r.id), created };
    // Some idempotency keys were already used: answer with the messages they created.
    const repeated = rows.filter((r) => !created.has(r.id));
    const existing: Array<{ id: string; account_id: string; idempotency_key: string }> = await db.query(
      `SELECT id, account_id, idempotency_key FROM messages WHERE (account_id, idempotency_key) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))`,
      [repeated.map((r) => r.account_id), repeated.map((r) => r.idempotency_key)],
    );
    const byKey = new Map(existing.map((e) => [`${e.account_id}\u0000${e.idempotency_key}`, e.id]));
    return {
      ids: rows.map((r) =>
        created.has(r.id) ? r.id : (byKey.get(`${r.account_id}\u0000${r.idempotency_key}`) ?? r.id),
      ),
      created,
    };
  }

  // ------------------------------------------------------------------ campaign messages (libs/campaigns)

  /** Of these messages, the ones still `queued`, with their batch job (for a fan-out replay or a repeated step) */
  async stillQueued(messageIds: string[]): Promise<QueuedMessageRef[]> {
    if (!messageIds.length) return [];
    return this.db.query(`SELECT id, send_job FROM messages WHERE id = ANY($1::uuid[]) AND status = 'queued'`, [
      messageIds,
    ]);
  }

  /** The campaign's failed messages grouped by the platform's error code (the live view), most frequent first. */
  async campaignFailures(
    campaignId: string,
  ): Promise<Array<{ code: number | null; title: string | null; count: number }>> {
    const rows: Array<{ code: number | null; title: string | null; count: number }> = await this.db.query(
      `SELECT error_code AS code, min(COALESCE(error_title, error_message)) AS title, count(*)::int AS count
         FROM messages WHERE campaign_id = $1 AND status = 'failed' GROUP BY error_code ORDER BY count(*) DESC LIMIT 20`,
      [campaignId],
    );
    return rows;
  }

  /**
   * Pause: the campaign's messages not yet handed to the platform wait (the send worker skips what is not `queued`).
   * Pause, resume and cancel lock the rows in id order first, as the send answers and statuses do: updated in scan
   * order, a pause during sending deadlocked with the worker's writes (seen in a CI-shaped run: the pause answered 500).
   */
  async holdCampaign(tx: EntityManager, campaignId: string): Promise<void> {
    await this.moveCampaignMessages(tx, campaignId, ['queued'], 'paused');
  }

  /** Resume: the paused messages are `queued` again; returns them to re-queue after the commit. */
  async releaseCampaign(tx: EntityManager, campaignId: string): Promise<QueuedMessageRef[]> {
    return this.moveCampaignMessages(tx, campaignId, ['paused'], 'queued');
  }

  /** Cancel: the campaign's messages not yet sent are never sent. */
  async cancelCampaign(tx: EntityManager, campaignId: string): Promise<void> {
    await this.moveCampaignMessages(tx, campaignId, ['queued', 'paused'], 'cancelled');
  }

  private async moveCampaignMessages(
    tx: EntityManager,
    campaignId: string,
    from: string[],
    to: string,
  ): Promise<QueuedMessageRef[]> {
    const [rows] = (await tx.query(
      `WITH locked AS (SELECT id FROM messages WHERE campaign_id = $1 AND status = ANY($2::text[]) ORDER BY id FOR UPDATE)
       UPDATE messages m SET status = $3, updated_at = now()
         FROM locked WHERE m.id = locked.id AND m.status = ANY($2::text[])
       RETURNING m.id, m.send_job`,
      [campaignId, from, to],
    )) as [QueuedMessageRef[], number];
    return rows;
  }

  /**
   * Waits (at most `timeoutMs`) until every message has left `queued` (accepted by the platform, or failed), then
   * returns each message's state; messages still queued at the deadline are returned as `queued`.
   */
  async waitForOutcome(
    ids: string[],
    timeoutMs = this.config.SEND_WAIT_TIMEOUT_MS,
  ): Promise<Map<string, MessageOutcome>> {
    const unique = [...new Set(ids)];
    await this.queueEvents();
    const pending = new Set(unique);
    let wake!: () => void;
    const done = new Promise<void>((resolve) => (wake = resolve));
    const settle = (id: string) => {
      if (pending.delete(id) && pending.size === 0) wake();
    };
    // several requests may wait on one message (a retry with the same idempotency key): each has its own waiter
    const mine = new Map(unique.map((id) => [id, () => settle(id)]));
    for (const [id, waiter] of mine) {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      set.add(waiter);
    }
    try {
      // Jobs that finished before we listened: the database already says so.
      for (const row of await this.outcomes(unique)) if (row.status !== 'queued') settle(row.id);
      // Queue events wake us at once; a slow poll of the database covers events missed while connecting.
      const deadline = Date.now() + timeoutMs;
      while (pending.size && Date.now() < deadline) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          done,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(1000, deadline - Date.now())))),
        ]);
        clearTimeout(timer);
        if (pending.size)
          for (const row of await this.outcomes([...pending])) if (row.status !== 'queued') settle(row.id);
      }
    } finally {
      for (const [id, waiter] of mine) {
        const set = this.waiters.get(id);
        if (set?.delete(waiter) && set.size === 0) this.waiters.delete(id);
      }
    }
    return new Map((await this.outcomes(unique)).map((o) => [o.id, o]));
  }

  /**
   * The platform accepts a session message outside the 24-hour window and reports error 131047 in a `failed` status
   * webhook afterwards (Meta's behaviour). For a message accepted while the customer's window is not known to be open:
   * waits (at most `timeoutMs`) for its first status webhook (`sent` or later, or `failed`), polling the row.
   */
  async waitForFirstStatus(id: string, timeoutMs = this.config.SEND_WAIT_TIMEOUT_MS): Promise<MessageOutcome> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [outcome] = await this.outcomes([id]);
      if (!outcome || (outcome.status !== 'queued' && outcome.status !== 'accepted') || Date.now() >= deadline)
        return outcome;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** True while the customer's 24-hour window on that number (phone_numbers.id) is open, as far as we have been told. */
  async windowOpen(phoneNumberId: string, customer: string): Promise<boolean> {
    const [row] = await this.db.query(
      `SELECT 1 FROM customer_windows WHERE phone_number_id = $1 AND customer = $2 AND last_inbound_at > now() - interval '24 hours'`,
      [phoneNumberId, customer],
    );
    return Boolean(row);
  }

  async outcomes(ids: string[]): Promise<MessageOutcome[]> {
    const rows: Array<Record<string, any>> = await this.db.query(
      `SELECT id, status, wamid, error_code, error_title, error_message FROM messages WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return rows.map((r) => ({
      id: r.id,
      status: r.status,
      wamid: r.wamid,
      errorCode: r.error_code,
      errorTitle: r.error_title,
      errorMessage: r.error_message,
    }));
  }

  /** One QueueEvents (a blocking Redis stream reader) per process, created on the first wait. */
  private async queueEvents(): Promise<QueueEvents> {
    if (this.events) return this.events;
    // created by the first waiting request, but serves every later one: outside that request's id (request-context.ts)
    const events = runWithRequestId(undefined, () => {
      this.eventsConnection = createRedis(this.config.REDIS_URL);
      return new QueueEvents(QUEUES.sends, {
        connection: this.eventsConnection,
        prefix: `${this.config.REDIS_PREFIX}:bull`,
        autorun: true,
      });
    });
    const finished = ({ jobId }: { jobId: string }) => this.waiters.get(jobId)?.forEach((waiter) => waiter());
    events.on('completed', finished);
    events.on('failed', finished);
    events.on('error', (error) => this.logger.warn(`send queue events: ${error.message}`));
    this.events = events;
    await events.waitUntilReady();
    return events;
  }

  async onModuleDestroy() {
    const events = this.events;
    this.events = undefined;
    if (events) {
      await events.close().catch(() => undefined);
    }
    this.eventsConnection?.disconnect();
    this.eventsConnection = undefined;
  }
}
