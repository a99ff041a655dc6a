import { Controller, Get, Injectable, NotFoundException, Param, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { ContactsService } from '@switchboard/contacts';
import { isoOrNull, pageMeta, pageOffset, PaginationQuery } from '@switchboard/core';
import { IsIn, IsOptional } from 'class-validator';
import { DataSource } from 'typeorm';
import { customerOf } from '../sending/send-requests';

export class ListConversationsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {}

export class ListConversationMessagesQuery extends PaginationQuery({ defaultPageSize: 50, maxPageSize: 100 }) {
  @ApiPropertyOptional({ enum: ['inbound', 'outbound'], description: 'only one direction' })
  @IsOptional()
  @IsIn(['inbound', 'outbound'])
  direction?: 'inbound' | 'outbound';
}

const WINDOW_MS = 24 * 3600 * 1000;

function messageView(m: Record<string, any>) {
  return {
    id: m.id,
    direction: m.direction,
    type: m.kind,
    template_name: m.template_name ?? null,
    text: m.body ?? null,
    status: m.status,
    wamid: m.wamid ?? null,
    error:
      m.error_code || m.error_title ? { code: m.error_code, title: m.error_title, details: m.error_message } : null,
    created_at: isoOrNull(m.created_at),
    accepted_at: isoOrNull(m.accepted_at),
    sent_at: isoOrNull(m.sent_at),
    delivered_at: isoOrNull(m.delivered_at),
    read_at: isoOrNull(m.read_at),
    failed_at: isoOrNull(m.failed_at),
    replied_at: isoOrNull(m.replied_at),
  };
}

/**
 * Conversations: one per contact of the account (the trigger-maintained `conversations` table), newest activity first.
 * `unread_count` = the customer's messages since the account's last outbound message to them (messages awaiting a
 * reply); the window is the 24-hour customer-care window of the conversation's number.
 */
@Injectable()
export class ConversationsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly contacts: ContactsService,
    private readonly accounts: AccountsService,
  ) {}

  async list(accountId: string, query: ListConversationsQuery) {
    const [{ total }] = await this.db.query(`SELECT count(*)::int AS total FROM conversations WHERE account_id = $1`, [
      accountId,
    ]);
    const rows: Array<Record<string, any>> = await this.db.query(
      `SELECT c.contact_id, c.phone_number_id, c.last_message_at, c.last_inbound_at, c.last_outbound_at,
              m.id, m.direction, m.kind, m.template_name, m.body, m.status, m.wamid, m.error_code, m.error_title, m.error_message,
              m.created_at, m.accepted_at, m.sent_at, m.delivered_at, m.read_at, m.failed_at, m.replied_at,
              (SELECT count(*)::int FROM messages u
                 WHERE u.account_id = c.account_id AND u.contact_id = c.contact_id AND u.direction = 'inbound'
                   AND u.created_at > COALESCE(c.last_outbound_at, '-infinity')) AS unread_count
       FROM conversations c
       LEFT JOIN messages m ON m.id = c.last_message_id
       WHERE c.account_id = $1
       ORDER BY c.last_message_at DESC, c.contact_id DESC
       OFFSET $2 LIMIT $3`,
      [accountId, pageOffset(query), query.pageSize],
    );
    // the contact (libs/contacts), the number (libs/accounts) and the 24-hour window of each conversation
    const contacts = await this.contacts.findByIds(
      accountId,
      rows.map((r) => String(r.contact_id)),
    );
    const numbers = await this.accounts.phoneNumbersByIds(rows.map((r) => String(r.phone_number_id)));
    const listed = rows.filter((r) => contacts.has(String(r.contact_id)));
    const windows = await this.windows(
      listed.map((r) => ({
        phoneNumberId: String(r.phone_number_id),
        customer: customerOf(contacts.get(String(r.contact_id))!),
      })),
    );
    const now = Date.now();
    return {
      success: true,
      data: {
        conversations: listed.map((r) => {
          const contact = contacts.get(String(r.contact_id))!;
          // by user id for a customer known only by one (its window was looked up by a null number: always closed)
          const windowInboundAt = windows.get(`${r.phone_number_id}\u0000${customerOf(contact)}`);
          const expiresAt = windowInboundAt ? new Date(new Date(windowInboundAt).getTime() + WINDOW_MS) : null;
          return {
            contact: {
              contact_id: Number(r.contact_id),
              name: contact.name ?? null,
              contact_number: contact.contactNumber,
              // a customer known only by a business-scoped user id (a WhatsApp username): what to send to
              whatsapp_user_id: contact.whatsappUserId ?? null,
              isBlocked: contact.isBlocked,
            },
            messagingPhoneId: numbers.get(String(r.phone_number_id))?.messagingPhoneId,
            last_message: r.id ? messageView(r) : null,
            last_activity_at: isoOrNull(r.last_message_at),
            unread_count: r.unread_count,
            window: { open: !!expiresAt && expiresAt.getTime() > now, expires_at: expiresAt?.toISOString() ?? null },
          };
        }),
        ...pageMeta(query, total),
      },
    };
  }

  /** Last inbound time of each (number, customer), keyed `${phone_number_id}\u0000${customer}`. */
  private async windows(pairs: Array<{ phoneNumberId: string; customer: string }>): Promise<Map<string, Date>> {
    if (!pairs.length) return new Map();
    const rows: Array<{ phone_number_id: string; customer: string; last_inbound_at: Date }> = await this.db.query(
      `SELECT w.phone_number_id, w.customer, w.last_inbound_at FROM customer_windows w
        WHERE (w.phone_number_id, w.customer) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))`,
      [pairs.map((p) => p.phoneNumberId), pairs.map((p) => p.customer)],
    );
    return new Map(rows.map((w) => [`${w.phone_number_id}\u0000${w.customer}`, w.last_inbound_at]));
  }

  /**
   * The 24-hour customer-care window of one customer (digits) on one connected number (`phone_numbers.id`, resolved
   * within the caller's account, e.g. by MessagesService.phoneOf), as the customer's last inbound message left it.
   */
  async window(phoneNumberId: string, customer: string): Promise<{ open: boolean; expires_at: string | null }> {
    const [row] = await this.db.query(
      `SELECT last_inbound_at FROM customer_windows WHERE phone_number_id = $1 AND customer = $2`,
      [phoneNumberId, customer],
    );
    const expiresAt = row ? new Date(new Date(row.last_inbound_at).getTime() + WINDOW_MS) : null;
    return { open: !!expiresAt && expiresAt.getTime() > Date.now(), expires_at: expiresAt?.toISOString() ?? null };
  }

  async messages(accountId: string, contactId: string, query: ListConversationMessagesQuery) {
    if (!/^\d{1,18}$/.test(contactId)) throw new NotFoundException({ message: 'Conversation not found' });
    const found = await this.contacts.findById(accountId, contactId);
    const contact = found && {
      id: found.id,
      name: found.name,
      contact_number: found.contactNumber,
      whatsapp_user_id: found.whatsappUserId ?? null,
    };
    if (!contact) throw new NotFoundException({ message: 'Conversation not found' });
    const params: unknown[] = [accountId, contactId];
    let filter = '';
    if (query.direction) {
      params.push(query.direction);
      filter = ` AND direction = $${params.length}`;
    }
    const [{ total }] = await this.db.query(
      `SELECT count(*)::int AS total FROM messages WHERE account_id = $1 AND contact_id = $2${filter}`,
      params,
    );
    const rows = await this.db.query(
      `SELECT * FROM messages WHERE account_id = $1 AND contact_id = $2${filter}
       ORDER BY created_at DESC, id DESC OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
      [...params, pageOffset(query), query.pageSize],
    );
    return {
      success: true,
      data: {
        contact: {
          contact_id: Number(contact.id),
          name: contact.name ?? null,
          contact_number: contact.contact_number,
          whatsapp_user_id: contact.whatsapp_user_id,
        },
        messages: rows.map(messageView),
        ...pageMeta(query, total),
      },
    };
  }
}

@ApiTags('Conversations')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/conversations')
@Controller('v2/conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @ApiOperation({
    summary: 'Conversations (one per contact), newest activity first: last message, unread count, 24-hour window',
  })
  list(@AccountId() accountId: string, @Query() query: ListConversationsQuery) {
    return this.conversations.list(accountId, query);
  }

  @Get(':contactId/messages')
  @ApiOperation({ summary: "A contact's messages, both directions, newest first, with statuses and their times" })
  messages(
    @AccountId() accountId: string,
    @Param('contactId') contactId: string,
    @Query() query: ListConversationMessagesQuery,
  ) {
    return this.conversations.messages(accountId, contactId, query);
  }
}
