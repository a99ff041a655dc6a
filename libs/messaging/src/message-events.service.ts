import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { recordFlowResponse } from '@switchboard/flows';
import type { MessageEvent, StatusEvent } from '@switchboard/whatsapp';
import { DataSource } from 'typeorm';

/** What changed when a platform status was applied to a stored message. */
export interface AppliedStatus {
  messageId: string;
  accountId: string;
  status: string;
  /** true the first time the message reaches this status (drives once-only callbacks). */
  firstTime: boolean;
  /** the message's callback subscription and customer number (for SPEC §6 callbacks) */
  callbackUrl?: string | null;
  callbackEvents?: string[];
  recipient?: string;
}

export interface RecordedInbound {
  messageId: string;
  accountId: string;
  phoneNumberId: string;
  /** the outbound message this one answers (context id, or the latest message to that customer) */
  repliedMessageId: string | null;
}

const TIMESTAMP_COLUMN: Record<string, string> = { sent: 'sent_at', delivered: 'delivered_at', read: 'read_at', failed: 'failed_at' };

/**
 * Applies platform webhooks to the message store. Both operations are idempotent, so duplicate or
 * concurrent deliveries of the same webhook leave one consistent state.
 */
@Injectable()
export class MessageEventsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Moves the message forward (never backwards: a late `delivered` does not undo `read`; `failed` is final) and
   * records the time of each status the first time it is seen. Returns null when no message has that wamid yet.
   */
  async applyStatus(event: StatusEvent): Promise<AppliedStatus | null> {
    const column = TIMESTAMP_COLUMN[event.status];
    if (!column) return null; // 'deleted', 'warning', ...: nothing to track
    const error = event.errors?.[0];
    const [rows] = (await this.db.query(
      `WITH previous AS (SELECT id, ${column} AS seen_at FROM messages WHERE wamid = $1 FOR UPDATE)
       UPDATE messages m SET
         status = CASE WHEN message_status_rank($2) > message_status_rank(m.status) THEN $2 ELSE m.status END,
         ${column} = COALESCE(m.${column}, to_timestamp($3)),
         error_code = CASE WHEN $2 = 'failed' THEN $4::int ELSE m.error_code END,
         error_title = CASE WHEN $2 = 'failed' THEN $5 ELSE m.error_title END,
         error_message = CASE WHEN $2 = 'failed' THEN $6 ELSE m.error_message END,
         updated_at = now()
       FROM previous WHERE m.id = previous.id
       RETURNING m.id, m.account_id, m.status, previous.seen_at IS NULL AS first_time, m.callback_url, m.callback_events, m.recipient`,
      [event.wamid, event.status, event.timestamp, error?.code ?? null, error?.title ?? null, error?.details ?? error?.message ?? null],
    )) as [Array<{ id: string; account_id: string; status: string; first_time: boolean; callback_url: string | null; callback_events: string[]; recipient: string }>, number];
    const row = rows[0];
    return row
      ? {
          messageId: row.id,
          accountId: String(row.account_id),
          status: event.status,
          firstTime: row.first_time,
          callbackUrl: row.callback_url,
          callbackEvents: row.callback_events,
          recipient: row.recipient,
        }
      : null;
  }

  /**
   * Reconciliation: a status for a wamid we never recorded, carrying one of our message ids in
   * biz_opaque_callback_data (the send's answer was lost, e.g. the worker died between the platform's answer and
   * the database write). Links the wamid to that message (same number, no wamid yet) and marks it accepted.
   */
  async linkByOpaqueData(event: StatusEvent): Promise<boolean> {
    const id = event.bizOpaqueCallbackData;
    if (!id || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return false;
    const [rows] = (await this.db.query(
      `UPDATE messages m SET wamid = $1, status = CASE WHEN message_status_rank(m.status) < 1 THEN 'accepted' ELSE m.status END,
              accepted_at = COALESCE(m.accepted_at, now()), updated_at = now()
       FROM phone_numbers p
       WHERE m.id = $2 AND m.wamid IS NULL AND m.direction = 'outbound' AND p.id = m.phone_number_id AND p.messaging_phone_id = $3
       RETURNING m.id`,
      [event.wamid, id, event.phoneNumberId],
    )) as [Array<{ id: string }>, number];
    return rows.length > 0;
  }

  /** The callback subscription of a message (for `replied`). */
  async callbackTarget(messageId: string): Promise<{ accountId: string; callbackUrl: string | null; callbackEvents: string[]; recipient: string } | null> {
    const [row] = await this.db.query(`SELECT account_id, callback_url, callback_events, recipient FROM messages WHERE id = $1`, [messageId]);
    return row ? { accountId: String(row.account_id), callbackUrl: row.callback_url, callbackEvents: row.callback_events, recipient: row.recipient } : null;
  }

  /** Links a stored inbound message to the account's contact (created when new). */
  async linkContact(messageId: string, contactId: string): Promise<void> {
    await this.db.query(`UPDATE messages SET contact_id = $2 WHERE id = $1 AND contact_id IS NULL`, [messageId, contactId]);
  }

  /**
   * Stores a customer's message once (by wamid), opens or extends the 24-hour window of that customer on that
   * number, and marks the outbound message it answers as replied. Returns null for duplicates and unknown numbers.
   */
  async recordInbound(event: MessageEvent, receivedAt?: Date): Promise<RecordedInbound | null> {
    return this.db.transaction(async (tx) => {
      const [phone] = await tx.query(`SELECT id, account_id FROM phone_numbers WHERE messaging_phone_id = $1`, [event.phoneNumberId]);
      if (!phone) return null;
      const text = event.text ?? event.buttonText ?? null;
      const [inserted] = await tx.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, body, payload, status, wamid, context_wamid, created_at)
         VALUES ($1, $2, 'inbound', $3, $4, $5, $6, 'received', $7, $8, COALESCE($9::timestamptz, now()))
         ON CONFLICT (wamid) DO NOTHING RETURNING id`,
        // created_at: when our webhook receiver got it (millisecond order among our own messages); the platform's time is in payload
        [phone.account_id, phone.id, event.from, event.interactiveType ?? event.type, text, JSON.stringify(event), event.wamid, event.contextWamid ?? null, receivedAt ?? null],
      );
      if (!inserted) return null;

      // a completed form (WhatsApp Flow) answering a flow we sent: stored for GET /v2/flows/{flow_id}/responses
      if (event.interactiveType === 'nfm_reply' && event.flowResponse) {
        await recordFlowResponse(tx, { accountId: String(phone.account_id), messageId: inserted.id, from: event.from, flowResponse: event.flowResponse, timestamp: event.timestamp });
      }

      await tx.query(
        `INSERT INTO customer_windows (phone_number_id, customer, last_inbound_at) VALUES ($1, $2, to_timestamp($3))
         ON CONFLICT (phone_number_id, customer) DO UPDATE SET last_inbound_at = GREATEST(customer_windows.last_inbound_at, EXCLUDED.last_inbound_at)`,
        [phone.id, event.from, event.timestamp],
      );

      const [[replied]] = (await tx.query(
        `UPDATE messages SET replied_at = to_timestamp($4), updated_at = now()
         WHERE id = (
           SELECT id FROM messages
           WHERE phone_number_id = $1 AND recipient = $2 AND direction = 'outbound'
           ORDER BY (wamid = $3) DESC NULLS LAST, created_at DESC LIMIT 1
         ) AND replied_at IS NULL
         RETURNING id`,
        [phone.id, event.from, event.contextWamid ?? null, event.timestamp],
      )) as [Array<{ id: string }>, number];

      return { messageId: inserted.id, accountId: String(phone.account_id), phoneNumberId: String(phone.id), repliedMessageId: replied?.id ?? null };
    });
  }
}
