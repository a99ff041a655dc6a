import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import type { MessageEvent, StatusEvent } from '@switchboard/whatsapp';
import { isUuid, MicroBatcher } from '@switchboard/core';
import { namedQuery } from '@switchboard/core/database';
import {
  messageReceivedData,
  messageStatusData,
  recordWebhookEvents,
  webhookEventsInsertSql,
  WebhookEndpointPresence,
  type Queryable,
} from '@switchboard/webhooks';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';

/** What changed when a platform status was applied to a stored message. */
export interface AppliedStatus {
  messageId: string;
  accountId: string;
  status: string;
  /** true the first time the message reaches this status (drives once-only callbacks). */
  firstTime: boolean;
  /**
   * The time stored for this status is this event's: it was set now, or by an earlier try of the same webhook (or by
   * Meta's redelivery of it). A retried job calls back again for these (queued once per message and status).
   */
  timeIsThisEvent: boolean;
  /** the message's callback subscription and customer number (for SPEC §6 callbacks) */
  callbackUrl?: string | null;
  callbackEvents?: string[];
  recipient?: string;
  /** the conversation it belongs to (for the inbox's live events) */
  contactId?: string | null;
  phoneNumberId?: string;
}

export interface RecordedInbound {
  messageId: string;
  accountId: string;
  phoneNumberId: string;
  /** the outbound message this one answers (context id, or the latest message to that customer) */
  repliedMessageId: string | null;
}

/** What a `replied` callback carries beside the text: the kind of reply and its content (location, contacts, ...). */
export function replyContentOf(event: MessageEvent): { type: string; content?: unknown } {
  const type = event.interactiveType ?? event.type;
  const content =
    event.location ??
    event.contacts ??
    event.reaction ??
    event.order ??
    event.media ??
    (event.flowResponse ? { response: event.flowResponse } : undefined) ??
    (event.buttonPayload !== undefined || event.buttonText !== undefined
      ? { id: event.buttonPayload ?? null, title: event.buttonText ?? null }
      : undefined) ??
    (event.type === 'unsupported'
      ? {
          originalType: event.originalType ?? 'unsupported',
          raw: event.raw ?? event.content ?? null,
          ...(event.errors ? { errors: event.errors } : {}),
        }
      : undefined);
  return content === undefined ? { type } : { type, content };
}

/** Orders bigint ids given as decimal strings. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

const TIMESTAMP_COLUMN: Record<string, string> = {
  sent: 'sent_at',
  delivered: 'delivered_at',
  read: 'read_at',
  failed: 'failed_at',
};

/**
 * Applies platform webhooks to the message store. Both operations are idempotent, so duplicate or
 * concurrent deliveries of the same webhook leave one consistent state.
 */
@Injectable()
export class MessageEventsService {
  private readonly statusWriter = new MicroBatcher((events: StatusEvent[]) => this.writeStatuses(events), {
    maxItems: 1000,
  });
  private readonly contactLinks = MicroBatcher.ofWrites(
    (links: Array<{ messageId: string; contactId: string }>) => {
      // In contact order: each link's trigger locks that contact's conversation row, and two processes linking the
      // messages of the same customers in the orders they arrived deadlocked. The nested loop over the array (a few
      // hundred ids probing the primary key) updates in the array's order.
      const sorted = [...links].sort(
        (a, b) => compareIds(a.contactId, b.contactId) || (a.messageId < b.messageId ? -1 : 1),
      );
      return this.db.query(
        `UPDATE messages m SET contact_id = u.contact_id
           FROM unnest($1::uuid[], $2::bigint[]) AS u(id, contact_id)
          WHERE m.id = u.id AND m.contact_id IS NULL`,
        [sorted.map((l) => l.messageId), sorted.map((l) => l.contactId)],
      );
    },
    { maxItems: 200 },
  );
  /** customer messages of one moment, stored together (an Error: that message's own failure) */
  private readonly inboundWriter = new MicroBatcher((items: InboundItem[]) => this.writeInbound(items), {
    maxItems: 100,
    maxConcurrent: 2,
  });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly accounts: AccountsService,
    private readonly endpoints: WebhookEndpointPresence,
  ) {}

  /**
   * Moves the message forward (never backwards: a late `delivered` does not undo `read`; `failed` is final) and
   * records the time of each status the first time it is seen. Returns null when no message has that wamid yet.
   * Statuses applied at the same time (one webhook's list, concurrent webhook jobs) are written in one statement.
   */
  applyStatus(event: StatusEvent): Promise<AppliedStatus | null> {
    if (!TIMESTAMP_COLUMN[event.status]) return Promise.resolve(null); // 'deleted', 'warning', ...: nothing to track
    return this.statusWriter.add(event);
  }

  /**
   * One UPDATE for many statuses: they are folded per wamid first (a message is updated once per statement: the
   * highest status wins, each status column takes its own time), rows are locked in id order (no deadlock with a
   * concurrent batch), and each status learns whether its column was empty before (`first_time`).
   */
  private async writeStatuses(events: StatusEvent[]): Promise<Array<AppliedStatus | null>> {
    const numbers = await Promise.all(
      [...new Set(events.map((e) => e.phoneNumberId))].map((id) => this.accounts.phoneNumberByPlatformId(id)),
    );
    const accountIds = numbers.flatMap((n) => (n ? [String(n.accountId)] : []));
    // No endpoint, no account webhook event to record: the UPDATE alone, one round trip instead of four (a campaign's
    // statuses). A number's messages belong to its account (a number moved to another account since keeps its old
    // messages there: their events are recorded only if the new account has an endpoint too).
    if (!(await this.endpoints.anyOf(accountIds))) return this.updateStatuses(this.db, events);
    // one transaction: the status update and its account webhook events (libs/webhooks outbox) commit together
    return this.db.transaction(async (tx) => {
      const applied = await this.updateStatuses(tx, events);
      await this.recordStatusEvents(tx, events, applied);
      return applied;
    });
  }

  private async updateStatuses(
    db: DataSource | EntityManager,
    events: StatusEvent[],
  ): Promise<Array<AppliedStatus | null>> {
    const errors = events.map((e) => e.errors?.[0]);
    type Row = {
      id: string;
      wamid: string;
      account_id: string;
      callback_url: string | null;
      callback_events: string[];
      recipient: string;
      contact_id: string | null;
      phone_number_id: string;
    } & Record<'sent' | 'delivered' | 'read' | 'failed', boolean> &
      Record<'sent_ts' | 'delivered_ts' | 'read_ts' | 'failed_ts', number | null>;
    // a named statement: planned once per connection (docs/performance.md, "Twelfth round")
    const rows = await namedQuery<Row>(
      db,
      'messages_statuses',
      `WITH event AS (SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::int[], $5::text[], $6::text[]) AS x(wamid, status, ts, code, title, details)),
            folded AS (
              SELECT wamid,
                     (array_agg(status ORDER BY message_status_rank(status) DESC))[1] AS top,
                     min(ts) FILTER (WHERE status = 'sent') AS sent, min(ts) FILTER (WHERE status = 'delivered') AS delivered,
                     min(ts) FILTER (WHERE status = 'read') AS read, min(ts) FILTER (WHERE status = 'failed') AS failed,
                     (array_agg(code) FILTER (WHERE status = 'failed'))[1] AS code,
                     (array_agg(title) FILTER (WHERE status = 'failed'))[1] AS title,
                     (array_agg(details) FILTER (WHERE status = 'failed'))[1] AS details
                FROM event GROUP BY wamid),
            previous AS (
              SELECT m.id, m.wamid, m.sent_at, m.delivered_at, m.read_at, m.failed_at
                FROM messages m WHERE m.wamid IN (SELECT wamid FROM folded) ORDER BY m.id FOR UPDATE)
       UPDATE messages m SET
         status = CASE WHEN message_status_rank(f.top) > message_status_rank(m.status) THEN f.top ELSE m.status END,
         sent_at = COALESCE(m.sent_at, to_timestamp(f.sent)),
         delivered_at = COALESCE(m.delivered_at, to_timestamp(f.delivered)),
         read_at = COALESCE(m.read_at, to_timestamp(f.read)),
         failed_at = COALESCE(m.failed_at, to_timestamp(f.failed)),
         error_code = CASE WHEN f.failed IS NOT NULL THEN f.code ELSE m.error_code END,
         error_title = CASE WHEN f.failed IS NOT NULL THEN f.title ELSE m.error_title END,
         error_message = CASE WHEN f.failed IS NOT NULL THEN f.details ELSE m.error_message END,
         updated_at = now()
       FROM folded f JOIN previous p ON p.wamid = f.wamid
       WHERE m.id = p.id
       RETURNING m.id, m.wamid, m.account_id, m.callback_url, m.callback_events, m.recipient, m.contact_id, m.phone_number_id,
                 p.sent_at IS NULL AS sent, p.delivered_at IS NULL AS delivered, p.read_at IS NULL AS read, p.failed_at IS NULL AS failed,
                 extract(epoch FROM m.sent_at)::float8 AS sent_ts, extract(epoch FROM m.delivered_at)::float8 AS delivered_ts,
                 extract(epoch FROM m.read_at)::float8 AS read_ts, extract(epoch FROM m.failed_at)::float8 AS failed_ts`,
      [
        events.map((e) => e.wamid),
        events.map((e) => e.status),
        events.map((e) => e.timestamp),
        errors.map((e) => e?.code ?? null),
        errors.map((e) => e?.title ?? null),
        errors.map((e) => e?.details ?? e?.message ?? null),
      ],
    );
    const byWamid = new Map(rows.map((r) => [r.wamid, r]));
    const reported = new Set<string>(); // the same status twice in one batch: only the first is the first time
    const applied = events.map((event): AppliedStatus | null => {
      const row = byWamid.get(event.wamid);
      if (!row) return null;
      const key = `${event.wamid}\u0000${event.status}`;
      const status = event.status as 'sent' | 'delivered' | 'read' | 'failed'; // applyStatus lets no other through
      const firstTime = row[status] === true && !reported.has(key);
      reported.add(key);
      const stored = row[`${status}_ts`];
      return {
        messageId: row.id,
        accountId: String(row.account_id),
        status: event.status,
        firstTime,
        // to_timestamp keeps microseconds: a fractional time may come back a hair off
        timeIsThisEvent: stored !== null && Math.abs(stored - event.timestamp) < 0.001,
        callbackUrl: row.callback_url,
        callbackEvents: row.callback_events,
        recipient: row.recipient,
        contactId: row.contact_id === null ? null : String(row.contact_id),
        phoneNumberId: String(row.phone_number_id),
      };
    });
    return applied;
  }

  /** A `message.status` account webhook event for each status applied for the first time. */
  private recordStatusEvents(tx: Queryable, events: StatusEvent[], applied: Array<AppliedStatus | null>) {
    return recordWebhookEvents(
      tx,
      applied.flatMap((a, i) =>
        a?.firstTime
          ? [
              {
                accountId: a.accountId,
                type: 'message.status' as const,
                data: messageStatusData(events[i], { messageId: a.messageId, recipient: a.recipient ?? '' }),
              },
            ]
          : [],
      ),
    );
  }

  /**
   * Reconciliation: a status for a wamid we never recorded, carrying one of our message ids in
   * biz_opaque_callback_data (the send's answer was lost, e.g. the worker died between the platform's answer and
   * the database write). Links the wamid to that message (same number, no wamid yet) and marks it accepted.
   */
  async linkByOpaqueData(event: StatusEvent): Promise<boolean> {
    const id = event.bizOpaqueCallbackData;
    if (!id || !isUuid(id)) return false;
    const phone = await this.accounts.phoneNumberByPlatformId(event.phoneNumberId);
    if (!phone) return false;
    // A message recorded `failed` without a wamid (its last call timed out, or its answer was cut off) was taken by the
    // platform after all, since the platform reports on it: the failure is undone, and the statuses apply as usual.
    const [rows] = (await this.db.query(
      `UPDATE messages m SET wamid = $1,
              status = CASE WHEN m.status = 'failed' OR message_status_rank(m.status) < 1 THEN 'accepted' ELSE m.status END,
              failed_at = NULL, error_code = NULL, error_title = NULL, error_message = NULL,
              accepted_at = COALESCE(m.accepted_at, now()), updated_at = now()
       WHERE m.id = $2 AND m.wamid IS NULL AND m.direction = 'outbound' AND m.phone_number_id = $3
       RETURNING m.id`,
      [event.wamid, id, phone.id],
    )) as [Array<{ id: string }>, number];
    return rows.length > 0;
  }

  /** Of these forms of a customer's number, the one of the newest message between them and this number; or null. */
  async conversationForm(phoneRowId: string, forms: string[]): Promise<string | null> {
    const [row]: Array<{ recipient: string }> = await this.db.query(
      `SELECT recipient FROM messages WHERE phone_number_id = $1 AND recipient = ANY($2::text[])
        ORDER BY created_at DESC LIMIT 1`,
      [phoneRowId, forms],
    );
    return row?.recipient ?? null;
  }

  /** The callback subscription of a message (for `replied`). */
  async callbackTarget(
    messageId: string,
  ): Promise<{ accountId: string; callbackUrl: string | null; callbackEvents: string[]; recipient: string } | null> {
    const [row] = await this.db.query(
      `SELECT account_id, callback_url, callback_events, recipient FROM messages WHERE id = $1`,
      [messageId],
    );
    return row
      ? {
          accountId: String(row.account_id),
          callbackUrl: row.callback_url,
          callbackEvents: row.callback_events,
          recipient: row.recipient,
        }
      : null;
  }

  /**
   * An inbound message stored earlier (a redelivered webhook), by its wamid, with its contact (null: never linked) and
   * the outbound message it marked replied (found again as `insertInbound` chose it; null when it marked none).
   */
  async storedInbound(event: MessageEvent): Promise<(RecordedInbound & { contactId: string | null }) | null> {
    const [row] = await this.db.query(STORED_INBOUND, [event.wamid, event.timestamp]);
    return row
      ? {
          messageId: row.id,
          accountId: String(row.account_id),
          phoneNumberId: String(row.phone_number_id),
          contactId: row.contact_id === null ? null : String(row.contact_id),
          repliedMessageId: event.informational ? null : row.replied_id,
        }
      : null;
  }

  /**
   * Links a stored inbound message to the account's contact (created when new). The links of one moment are one
   * UPDATE, one at a time: its trigger touches each contact's conversation row, which two concurrent batches could
   * otherwise lock in opposite orders.
   */
  linkContact(messageId: string, contactId: string): Promise<void> {
    return this.contactLinks.add({ messageId, contactId });
  }

  /**
   * Stores a customer's message once (by wamid), opens or extends the 24-hour window of that customer on that
   * number, and marks the outbound message it answers as replied. Returns null for duplicates and unknown numbers.
   * Informational events (system messages, revoked and edited messages, reaction removals) are stored as what they
   * are (`kind` system / revoke / edit / reaction) but neither open the window nor mark anything replied.
   * Messages stored at the same moment (concurrent webhook jobs) share one transaction; see `insertInbound`.
   */
  async recordInbound(event: MessageEvent, receivedAt?: Date): Promise<RecordedInbound | null> {
    const recorded = await this.inboundWriter.add({ event, receivedAt });
    if (recorded instanceof Error) throw recorded;
    return recorded;
  }

  /**
   * A batch in one statement; when it fails, each message again on its own, so one message the database refuses fails
   * only its own webhook job (retried), never its neighbours'.
   */
  private async writeInbound(items: InboundItem[]): Promise<Array<RecordedInbound | null | Error>> {
    // looked up once for the batch and its retries
    const numbers = await this.numbersByPlatformId(items.map((i) => i.event.phoneNumberId));
    try {
      return await this.insertInbound(items, numbers);
    } catch (error) {
      if (items.length === 1) return [error as Error];
      return Promise.all(
        items.map((item) =>
          this.insertInbound([item], numbers).then(
            ([recorded]) => recorded,
            (failed: Error) => failed,
          ),
        ),
      );
    }
  }

  /**
   * Any number of messages in one statement (atomic without a transaction: one round trip, not six):
   * - the messages (ON CONFLICT on the unique wamid: a duplicate, in the database or earlier in the batch, is null; inserted in
   *   wamid order, so two batches holding the same two cannot deadlock); their ids are made here, so that
   * - their `message.received` account webhooks are built here too (written only for those inserted);
   * - the customers' windows (one row per number and customer, latest time);
   * - the replied marks: each outbound message once, to the first message that answers it, as if the batch were
   *   stored one message after the other; rows locked in id order.
   */
  private async insertInbound(
    items: InboundItem[],
    numbers: Map<string, OurNumber | null>,
  ): Promise<Array<RecordedInbound | null>> {
    const known = items.flatMap(({ event, receivedAt }, n) => {
      const number = numbers.get(event.phoneNumberId);
      return number ? [{ event, receivedAt, n, number, id: randomUUID() }] : [];
    });
    const recorded: Array<RecordedInbound | null> = items.map(() => null);
    if (known.length === 0) return recorded;
    const rows: Array<{
      n: number;
      id: string;
      account_id: string;
      phone_number_id: string;
      replied_id: string | null;
    }> = await this.db.query(INSERT_INBOUND, [
      known.map((k) => k.id),
      known.map((k) => k.number.accountId),
      known.map((k) => k.number.id),
      known.map((k) => k.event.from),
      known.map((k) => k.event.interactiveType ?? k.event.type),
      known.map((k) => k.event.text ?? k.event.buttonText ?? null),
      known.map((k) => JSON.stringify(k.event)),
      known.map((k) => k.event.wamid),
      known.map((k) => k.event.contextWamid ?? null),
      // created_at: when our webhook receiver got it (millisecond order among our own messages); the platform's time
      // is in payload
      known.map((k) => k.receivedAt?.toISOString() ?? null),
      known.map((k) => k.event.timestamp),
      known.map((k) => Boolean(k.event.informational)),
      known.map((k) => JSON.stringify(messageReceivedData(k.event, k.id))),
      known.map((k) => k.n),
    ]);
    for (const row of rows)
      recorded[row.n] = {
        messageId: row.id,
        accountId: String(row.account_id),
        phoneNumberId: String(row.phone_number_id),
        repliedMessageId: row.replied_id,
      };
    return recorded;
  }

  /** Our numbers by the platform's phone_number_id (null: not connected here), each looked up once. */
  private async numbersByPlatformId(messagingPhoneIds: string[]): Promise<Map<string, OurNumber | null>> {
    const distinct = [...new Set(messagingPhoneIds)];
    const found = await Promise.all(distinct.map((id) => this.accounts.phoneNumberByPlatformId(id)));
    return new Map(
      distinct.map((id, i) => [
        id,
        found[i] ? { id: String(found[i].id), accountId: String(found[i].accountId) } : null,
      ]),
    );
  }
}

interface OurNumber {
  id: string;
  accountId: string;
}

interface InboundItem {
  event: MessageEvent;
  receivedAt?: Date;
}

/**
 * The outbound message an inbound one answers (id, replied_at), given as SQL expressions: the one it quotes, else the
 * latest to that customer on that number created before the inbound reached our receiver (`receivedAt` NULL: any)
 * and handed to the platform before the customer wrote it (`writtenAt`, the platform's timestamp, in whole seconds:
 * 2 s of tolerance for the clocks; a message Meta delivers to us late must not answer what we sent since, nor a
 * campaign message queued before but sent after) that the customer can have
 * seen: accepted by the platform (a wamid) and not failed (a queued, paused or cancelled campaign message, or one the
 * platform refused, answers nothing). INSERT_INBOUND marks it; STORED_INBOUND finds it again for a retry, so both
 * must choose alike.
 */
const answeredMessageSql = (
  inbound: { phoneNumberId: string; sender: string; contextWamid: string; receivedAt: string; writtenAt: string },
  // STORED_INBOUND: the one this inbound marked (a wamid or status that changed since must not change the choice)
  seen = `o.wamid IS NOT NULL AND o.status <> 'failed'`,
) => `
  SELECT o.id, o.replied_at FROM messages o
   WHERE o.phone_number_id = ${inbound.phoneNumberId} AND o.recipient = ${inbound.sender} AND o.direction = 'outbound'
     AND (o.wamid = ${inbound.contextWamid}
          OR ((${inbound.receivedAt} IS NULL OR o.created_at < ${inbound.receivedAt})
              AND COALESCE(o.accepted_at, o.created_at) < to_timestamp(${inbound.writtenAt}) + interval '2 seconds'
              AND ${seen}))
   ORDER BY (o.wamid = ${inbound.contextWamid}) DESC NULLS LAST, o.created_at DESC LIMIT 1`;

// A stored inbound message, its contact, and the outbound message it marked replied: the one it answers (its
// created_at is when our receiver got it), when this inbound's time is the one that marked it
const STORED_INBOUND = `
  SELECT m.id, m.account_id, m.phone_number_id, m.contact_id,
         (SELECT t.id FROM (${answeredMessageSql(
           {
             phoneNumberId: 'm.phone_number_id',
             sender: 'm.recipient',
             contextWamid: 'm.context_wamid',
             receivedAt: 'm.created_at',
             writtenAt: '$2::float8',
           },
           'o.replied_at = to_timestamp($2::float8)',
         )}) t
           WHERE t.replied_at = to_timestamp($2::float8)) AS replied_id
    FROM messages m WHERE m.wamid = $1 AND m.direction = 'inbound'`;

// Informational messages (system, revoke, edit, reaction removal) are stored but neither open the window nor answer
// anything. Without a context, a message that reached our webhook before ours was created is no reply to it, however
// late the worker handles it.
const INSERT_INBOUND = `
  WITH i AS (
    SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::jsonb[],
                         $8::text[], $9::text[], $10::timestamptz[], $11::float8[], $12::boolean[], $13::jsonb[], $14::int[])
           AS i(id, account_id, phone_number_id, sender, kind, body, payload, wamid, context_wamid, received_at, ts,
                informational, event_data, n)),
  inserted AS (
    INSERT INTO messages (id, account_id, phone_number_id, direction, recipient, kind, body, payload, status, wamid,
                          context_wamid, created_at)
    SELECT i.id, i.account_id, i.phone_number_id, 'inbound', i.sender, i.kind, i.body, i.payload, 'received', i.wamid,
           i.context_wamid, COALESCE(i.received_at, now())
      FROM i ORDER BY i.wamid, i.n
    ON CONFLICT (wamid) WHERE wamid IS NOT NULL DO NOTHING RETURNING id),
  stored AS (SELECT i.* FROM i JOIN inserted USING (id)),
  events AS (${webhookEventsInsertSql(`SELECT account_id, 'message.received' AS type, event_data AS data, n FROM stored`)}),
  windows AS (
    INSERT INTO customer_windows (phone_number_id, customer, last_inbound_at)
    SELECT phone_number_id, sender, to_timestamp(max(ts)) FROM stored WHERE NOT informational
     GROUP BY phone_number_id, sender ORDER BY phone_number_id, sender
    ON CONFLICT (phone_number_id, customer)
    DO UPDATE SET last_inbound_at = GREATEST(customer_windows.last_inbound_at, EXCLUDED.last_inbound_at)),
  target AS (
    SELECT DISTINCT ON (t.id) t.id, s.n, s.ts
      FROM stored s CROSS JOIN LATERAL (${answeredMessageSql({
        phoneNumberId: 's.phone_number_id',
        sender: 's.sender',
        contextWamid: 's.context_wamid',
        receivedAt: 's.received_at',
        writtenAt: 's.ts',
      })}) t
     WHERE NOT s.informational
     ORDER BY t.id, s.n),
  locked AS (SELECT m.id FROM messages m WHERE m.id IN (SELECT id FROM target) ORDER BY m.id FOR UPDATE),
  marked AS (
    UPDATE messages m SET replied_at = to_timestamp(target.ts), updated_at = now()
      FROM target JOIN locked ON locked.id = target.id
     WHERE m.id = target.id AND m.replied_at IS NULL
    RETURNING m.id, target.n)
  SELECT s.n, s.id, s.account_id, s.phone_number_id, marked.id AS replied_id
    FROM stored s LEFT JOIN marked ON marked.n = s.n`;
