import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { ContactsService, contactMatchesSql } from '@switchboard/contacts';
import type { MessageEvent } from '@switchboard/whatsapp';
import { DataSource } from 'typeorm';
import { replyContentOf } from '../message-events.service';
import { isoOrNull, MicroBatcher } from '@switchboard/core';
import { customerOf } from '../sending/send-requests';

const WINDOW_MS = 24 * 3600 * 1000;

/**
 * Which conversations an inbox may see: null means "no restriction" on that axis. A conversation is in scope when its
 * number is one of `phoneNumberIds` and its contact one of `contactIds` or its number one of `contactNumbers` (when
 * either of those is given).
 */
export interface InboxFilter {
  phoneNumberIds: string[] | null;
  contactIds: string[] | null;
  contactNumbers: string[] | null;
}

export interface InboxMessage {
  id: string;
  direction: 'inbound' | 'outbound';
  type: string;
  text: string | null;
  templateName: string | null;
  /** inbound: button / list / Flow replies, media, location, contacts, reaction (see replyContentOf); outbound: buttons */
  content: unknown;
  status: string;
  error: { code: number | null; title: string | null } | null;
  createdAt: string;
  sentAt: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  failedAt: string | null;
}

/**
 * The keyset position of a listed conversation, for the next page's `before`: its last activity to the microsecond and
 * its contact id (`2026-11-28T05:00:00.123456Z_42`). A symbol key: not part of the JSON answer.
 */
export const LIST_POSITION = Symbol('inbox list position');

export interface InboxConversation {
  contactId: string;
  name: string | null;
  contactNumber: string;
  messagingPhoneId: string | null;
  lastMessage: InboxMessage | null;
  lastActivityAt: string;
  unreadCount: number;
  window: { open: boolean; expiresAt: string | null };
  [LIST_POSITION]?: string;
}

function messageOf(m: Record<string, any>): InboxMessage {
  const payload = (m.payload ?? {}) as Record<string, any>;
  let content: unknown = null;
  if (m.direction === 'inbound') content = replyContentOf(payload as MessageEvent).content ?? null;
  else if (payload.interactive?.action?.buttons)
    content = {
      buttons: (payload.interactive.action.buttons as Array<{ reply?: { title?: string } }>).map((b) => b.reply?.title),
    };
  return {
    id: m.id,
    direction: m.direction,
    type: m.kind,
    text: m.body ?? null,
    templateName: m.template_name ?? null,
    content,
    status: m.status,
    error: m.error_code || m.error_title ? { code: m.error_code ?? null, title: m.error_title ?? null } : null,
    createdAt: isoOrNull(m.created_at)!,
    sentAt: isoOrNull(m.sent_at),
    deliveredAt: isoOrNull(m.delivered_at),
    readAt: isoOrNull(m.read_at),
    failedAt: isoOrNull(m.failed_at),
  };
}

/**
 * The inbox's reads and its one write (read marks) on messaging's tables: conversations (with `last_read_at`, and
 * `conversation_number_reads` for sessions scoped to some numbers),
 * messages and customer windows. Scope is applied here, in SQL; contacts and numbers come from their owners.
 */
@Injectable()
export class InboxConversations {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly contacts: ContactsService,
    private readonly accounts: AccountsService,
  ) {}

  /**
   * Conversations in scope, newest activity first (keyset: `before` = the last one's position). A session scoped to
   * some numbers sees a customer's conversation while any of its messages is on one of them, summed up by those
   * messages only (last message, unread count, the number a reply goes from: the one the customer last wrote to); the
   * order stays the conversation's.
   */
  async list(
    accountId: string,
    filter: InboxFilter,
    options: { limit: number; before?: string; contactIds?: string[] | null; search?: string; unreadOnly?: boolean },
  ): Promise<InboxConversation[]> {
    const params: unknown[] = [accountId];
    const where = ['c.account_id = $1', ...this.scopeSql(filter, params)];
    let numbers = '';
    let lastMessage = 'LEFT JOIN messages m ON m.id = c.last_message_id';
    if (filter.phoneNumberIds) {
      params.push(filter.phoneNumberIds);
      numbers = ` AND u.phone_number_id = ANY($${params.length}::bigint[])`;
      // the conversation's row holds its latest message on any number: a scoped session's is found among its own
      lastMessage = `CROSS JOIN LATERAL (SELECT * FROM messages u
                        WHERE u.account_id = c.account_id AND u.contact_id = c.contact_id${numbers}
                        ORDER BY u.created_at DESC, u.id DESC LIMIT 1) m`;
    }
    // unread: newer than the conversation's read mark (the whole account's agents) and than its number's (a brand's)
    const unread = `FROM messages u
                 LEFT JOIN conversation_number_reads r
                   ON r.account_id = u.account_id AND r.contact_id = u.contact_id AND r.phone_number_id = u.phone_number_id
                 WHERE u.account_id = c.account_id AND u.contact_id = c.contact_id AND u.direction = 'inbound'${numbers}
                   AND u.created_at > COALESCE(c.last_read_at, '-infinity')
                   AND u.created_at > COALESCE(r.last_read_at, '-infinity')`;
    if (options.contactIds) {
      params.push(options.contactIds);
      where.push(`c.contact_id = ANY($${params.length}::bigint[])`);
    }
    if (options.search) where.push(contactMatchesSql('c.contact_id', '$1', options.search, params));
    if (options.before) {
      // Conversations share a time to the microsecond when one statement wrote their messages (a campaign chunk): the
      // contact id breaks the tie, or a page ending inside such a group skipped the rest of it.
      const [time, contactId] = options.before.split('_');
      params.push(time);
      if (contactId) {
        params.push(contactId);
        where.push(
          `(c.last_message_at, c.contact_id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`,
        );
      } else where.push(`c.last_message_at < $${params.length}::timestamptz`);
    }
    if (options.unreadOnly)
      where.push(`c.last_inbound_at > COALESCE(c.last_read_at, '-infinity')`, `EXISTS (SELECT 1 ${unread})`);
    params.push(options.limit);
    // A reply goes from the number the customer last wrote to (in scope): its window is the one that may be open. A
    // later message of ours from another number (a campaign) does not move it; without any, the latest message's.
    // (bounded by the conversation's last inbound time: a customer who never wrote costs no scan of our messages)
    const lastInbound = `LEFT JOIN LATERAL (SELECT u.phone_number_id FROM messages u
                            WHERE c.last_inbound_at IS NOT NULL
                              AND u.account_id = c.account_id AND u.contact_id = c.contact_id
                              AND u.created_at <= c.last_inbound_at AND u.direction = 'inbound'${numbers}
                            ORDER BY u.created_at DESC, u.id DESC LIMIT 1) li ON true`;
    const rows: Array<Record<string, any>> = await this.db.query(
      `SELECT c.contact_id, COALESCE(li.phone_number_id, m.phone_number_id, c.phone_number_id) AS phone_number_id,
              COALESCE(m.phone_number_id, c.phone_number_id) AS latest_number_id,
              COALESCE(m.created_at, c.last_message_at) AS last_activity_at, c.last_read_at,
              to_char(c.last_message_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '_' || c.contact_id AS position,
              m.id, m.direction, m.kind, m.template_name, m.body, m.payload, m.status, m.error_code, m.error_title,
              m.created_at, m.sent_at, m.delivered_at, m.read_at, m.failed_at,
              (SELECT count(*)::int ${unread}) AS unread_count
         FROM conversations c ${lastMessage} ${lastInbound}
        WHERE ${where.join(' AND ')}
        ORDER BY c.last_message_at DESC, c.contact_id DESC
        LIMIT $${params.length}`,
      params,
    );
    return this.present(accountId, rows);
  }

  /** One conversation in scope, or null (not the account's, or out of scope). */
  async get(accountId: string, filter: InboxFilter, contactId: string): Promise<InboxConversation | null> {
    if (!/^\d{1,18}$/.test(contactId)) return null;
    const [found] = await this.list(accountId, filter, { limit: 1, contactIds: [contactId] });
    return found ?? null;
  }

  /**
   * A conversation's messages older than `before` (a message id), newest `limit` of them, returned oldest first; only
   * those of `phoneNumberIds` when given (a scoped session).
   */
  async thread(
    accountId: string,
    contactId: string,
    options: { limit: number; before?: string; phoneNumberIds?: string[] | null },
  ): Promise<{ messages: InboxMessage[]; hasMore: boolean }> {
    const params: unknown[] = [accountId, contactId];
    let older = '';
    if (options.before) {
      params.push(options.before);
      older = ` AND (created_at, id) < (SELECT created_at, id FROM messages WHERE id = $${params.length}::uuid AND account_id = $1)`;
    }
    if (options.phoneNumberIds) {
      params.push(options.phoneNumberIds);
      older += ` AND phone_number_id = ANY($${params.length}::bigint[])`;
    }
    params.push(options.limit + 1);
    const rows: Array<Record<string, any>> = await this.db.query(
      `SELECT * FROM messages WHERE account_id = $1 AND contact_id = $2${older}
        ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    const hasMore = rows.length > options.limit;
    return { messages: rows.slice(0, options.limit).reverse().map(messageOf), hasMore };
  }

  /** One message of the account by id (for live events), or null; the messages asked for at one moment in one query. */
  message(accountId: string, messageId: string): Promise<InboxMessage | null> {
    return this.messagesById.add({ accountId, messageId });
  }

  private readonly messagesById = new MicroBatcher(
    async (keys: Array<{ accountId: string; messageId: string }>) => {
      const rows: Array<Record<string, any>> = await this.db.query(
        `SELECT * FROM messages WHERE id = ANY($1::uuid[])`,
        [keys.map((k) => k.messageId)],
      );
      const byId = new Map(rows.map((row) => [row.id as string, row]));
      return keys.map(({ accountId, messageId }) => {
        const row = byId.get(messageId);
        return row && String(row.account_id) === String(accountId) ? messageOf(row) : null;
      });
    },
    { maxItems: 200 },
  );

  /** The numbers (row ids) the account has messages with this contact on, either direction. */
  async numbersOf(accountId: string, contactId: string): Promise<string[]> {
    const rows: Array<{ phone_number_id: string }> = await this.db.query(
      `SELECT DISTINCT phone_number_id::text FROM messages WHERE account_id = $1 AND contact_id = $2`,
      [accountId, contactId],
    );
    return rows.map((r) => r.phone_number_id);
  }

  /**
   * Everything the customer wrote so far counts as read: for the whole account, or for `phoneNumberIds` only (a
   * session scoped to some numbers: another brand's unread messages of the same customer stay unread).
   */
  async markRead(accountId: string, contactId: string, phoneNumberIds: string[] | null): Promise<void> {
    if (phoneNumberIds) {
      await this.db.query(
        `INSERT INTO conversation_number_reads (account_id, contact_id, phone_number_id, last_read_at)
         SELECT c.account_id, c.contact_id, n, c.last_message_at
           FROM conversations c, (SELECT DISTINCT n FROM unnest($3::bigint[]) n ORDER BY n) numbers
          WHERE c.account_id = $1 AND c.contact_id = $2
          ORDER BY n -- one lock order for every session, whatever the order of its numbers
         ON CONFLICT (account_id, contact_id, phone_number_id) DO UPDATE
           SET last_read_at = GREATEST(conversation_number_reads.last_read_at, EXCLUDED.last_read_at)`,
        [accountId, contactId, phoneNumberIds],
      );
      return;
    }
    await this.db.query(
      // Up to the last message stored, not up to now: a customer message stamped with the time its webhook came (a
      // moment before the agent read) but stored a moment after (the worker's queue) stays unread.
      `UPDATE conversations SET last_read_at = GREATEST(COALESCE(last_read_at, '-infinity'), last_message_at)
        WHERE account_id = $1 AND contact_id = $2`,
      [accountId, contactId],
    );
  }

  private scopeSql(filter: InboxFilter, params: unknown[]): string[] {
    const clauses: string[] = [];
    if (filter.contactIds || filter.contactNumbers) {
      params.push(filter.contactIds ?? []);
      const byId = `c.contact_id = ANY($${params.length}::bigint[])`;
      params.push(filter.contactNumbers ?? []);
      // the conversation's messages carry the customer's number (recipient): no read of the contacts table here
      const byNumber = `EXISTS (SELECT 1 FROM messages n WHERE n.id = c.last_message_id AND n.recipient = ANY($${params.length}::text[]))`;
      clauses.push(`(${byId} OR ${byNumber})`);
    }
    return clauses;
  }

  private async present(accountId: string, rows: Array<Record<string, any>>): Promise<InboxConversation[]> {
    const contacts = await this.contacts.findByIds(
      accountId,
      rows.map((r) => String(r.contact_id)),
    );
    const numbers = await this.accounts.phoneNumbersByIds(
      rows.flatMap((r) => [String(r.phone_number_id), String(r.latest_number_id)]),
    );
    // the number the customer last wrote to, unless it was disconnected since (a brand moved to a new number)
    const connected = (id: unknown) => numbers.get(String(id))?.status === 'CONNECTED';
    for (const r of rows)
      if (!connected(r.phone_number_id) && connected(r.latest_number_id)) r.phone_number_id = r.latest_number_id;
    const listed = rows.filter((r) => contacts.has(String(r.contact_id)));
    const windows = await this.windows(
      listed.map((r) => ({
        phoneNumberId: String(r.phone_number_id),
        customer: customerOf(contacts.get(String(r.contact_id))!),
      })),
    );
    const now = Date.now();
    return listed.map((r) => {
      const contact = contacts.get(String(r.contact_id))!;
      const inboundAt = windows.get(`${r.phone_number_id}\u0000${customerOf(contact)}`);
      const expiresAt = inboundAt ? new Date(new Date(inboundAt).getTime() + WINDOW_MS) : null;
      return {
        contactId: String(r.contact_id),
        name: contact.name ?? null,
        contactNumber: customerOf(contact),
        messagingPhoneId: numbers.get(String(r.phone_number_id))?.messagingPhoneId ?? null,
        lastMessage: r.id ? messageOf(r) : null,
        lastActivityAt: isoOrNull(r.last_activity_at)!,
        unreadCount: r.unread_count,
        window: { open: !!expiresAt && expiresAt.getTime() > now, expiresAt: expiresAt?.toISOString() ?? null },
        [LIST_POSITION]: r.position,
      };
    });
  }

  private async windows(pairs: Array<{ phoneNumberId: string; customer: string }>): Promise<Map<string, Date>> {
    if (!pairs.length) return new Map();
    const rows: Array<{ phone_number_id: string; customer: string; last_inbound_at: Date }> = await this.db.query(
      `SELECT w.phone_number_id, w.customer, w.last_inbound_at FROM customer_windows w
        WHERE (w.phone_number_id, w.customer) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))`,
      [pairs.map((p) => p.phoneNumberId), pairs.map((p) => p.customer)],
    );
    return new Map(rows.map((w) => [`${w.phone_number_id}\u0000${w.customer}`, w.last_inbound_at]));
  }
}
