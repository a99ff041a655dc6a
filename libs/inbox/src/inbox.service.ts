import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { AccountsService } from '@switchboard/accounts';
import { ContactsService } from '@switchboard/contacts';
import { type AccessCheck, type FieldError, normalizePhone, validationException } from '@switchboard/core';
import {
  dynamicLinks,
  InboxConversations,
  InboxEvents,
  LIST_POSITION,
  mediaHeader,
  MessagesService,
  templateElsewhere,
  type InboxConversation,
  type InboxFilter,
} from '@switchboard/messaging';
import { previewOf, previewText, TemplatesService } from '@switchboard/templates';
import type { EmbedScope, Permission } from './embed-tokens';

/** Who reads the inbox: an embedded session (scope, permissions) or a console agent / API client (whole account). */
export interface InboxPrincipal {
  accountId: string;
  scope: EmbedScope;
  permissions: Permission[];
  /** An embedded session's: whether it may still read (asked by a live stream while it stays open). */
  stillValid?: AccessCheck;
}

export const CONVERSATION_NOT_FOUND = 'Conversation not found';
export const WINDOW_CLOSED =
  'The 24-hour customer-care window is closed: only an approved template can be sent to this customer now';
export const CANNOT_READ = 'This inbox session may not read conversations';
export const CANNOT_SEND = 'This inbox session may not send messages';
export const CANNOT_SEND_TEMPLATE = 'This inbox session may not send templates';

/** /v1/send-message's field names as this API calls them: `message` is `text`, `buttons[i].text` is `quickReplies[i]`. */
const inboxField = (field: string) =>
  field === 'message'
    ? 'text'
    : field.replace(/^buttons\[(\d+)\]\.text$/, 'quickReplies[$1]').replace(/^buttons$/, 'quickReplies');

/** A 400 of the send pipeline's validation, naming the inbox's fields (it named `message` and `buttons[1].text`). */
function inInboxTerms(error: unknown): unknown {
  if (!(error instanceof BadRequestException)) return error;
  const body = error.getResponse() as { errors?: FieldError[] };
  if (!Array.isArray(body.errors)) return error;
  return validationException(
    body.errors.map(({ field, message }) => {
      const renamed = inboxField(field);
      return { field: renamed, message: message.startsWith(field) ? renamed + message.slice(field.length) : message };
    }),
  );
}

export interface SendText {
  text: string;
  /** quick reply buttons (up to 3 titles): sent as an interactive message */
  quickReplies?: string[];
}

/**
 * The inbox: conversations in the principal's scope, threads, sends through messaging's one send pipeline
 * (MessagesService: stored, queued, paced, ticks from status webhooks) and read marks. Out of scope = 404.
 */
@Injectable()
export class InboxService {
  constructor(
    private readonly conversations: InboxConversations,
    private readonly events: InboxEvents,
    private readonly messages: MessagesService,
    private readonly contacts: ContactsService,
    private readonly accounts: AccountsService,
    private readonly templates: TemplatesService,
  ) {}

  /** The scope as SQL filters: numbers by their row ids, groups by their members. */
  async filterOf(principal: InboxPrincipal): Promise<InboxFilter> {
    const { accountId, scope } = principal;
    let phoneNumberIds: string[] | null = null;
    if (scope.messagingPhoneIds?.length) {
      const found = await Promise.all(
        scope.messagingPhoneIds.map((id) => this.accounts.findPhoneNumber(accountId, id)),
      );
      phoneNumberIds = found.filter((p) => p !== null).map((p) => p.id);
    }
    const grouped = scope.groupIds?.length ? await this.contacts.contactIdsInGroups(accountId, scope.groupIds) : null;
    const numbers = scope.contactNumbers?.length
      ? scope.contactNumbers.map((n) => normalizePhone(n)).filter((n): n is string => !!n)
      : null;
    return {
      phoneNumberIds,
      contactIds: grouped ?? (numbers ? [] : null),
      contactNumbers: numbers ?? (grouped ? [] : null),
    };
  }

  async list(
    principal: InboxPrincipal,
    query: { search?: string; unread?: boolean; before?: string; limit?: number },
  ): Promise<{ conversations: InboxConversation[]; unreadTotal: number; nextBefore: string | null }> {
    const filter = await this.filterOf(principal);
    const limit = query.limit ?? 30;
    const conversations = await this.conversations.list(principal.accountId, filter, {
      limit,
      before: query.before,
      search: query.search?.trim() || undefined,
      unreadOnly: query.unread,
    });
    const unread = await this.conversations.list(principal.accountId, filter, { limit: 500, unreadOnly: true });
    return {
      conversations,
      unreadTotal: unread.reduce((sum, c) => sum + c.unreadCount, 0),
      nextBefore:
        conversations.length === limit ? (conversations[conversations.length - 1][LIST_POSITION] ?? null) : null,
    };
  }

  async conversation(principal: InboxPrincipal, contactId: string, filter?: InboxFilter): Promise<InboxConversation> {
    const found = await this.conversations.get(
      principal.accountId,
      filter ?? (await this.filterOf(principal)),
      contactId,
    );
    if (!found) throw new NotFoundException({ message: CONVERSATION_NOT_FOUND });
    return found;
  }

  async thread(principal: InboxPrincipal, contactId: string, query: { before?: string; limit?: number }) {
    const filter = await this.filterOf(principal);
    const conversation = await this.conversation(principal, contactId, filter);
    if (query.before && !/^[0-9a-f-]{36}$/i.test(query.before))
      throw new BadRequestException({ message: 'before must be a message id', errors: [{ field: 'before' }] });
    // a session scoped to some numbers reads only their messages: the customer's messages with another number of the
    // account (another brand, another team) stay out, as the live events leave them out
    const page = await this.conversations.thread(principal.accountId, contactId, {
      limit: query.limit ?? 50,
      before: query.before,
      phoneNumberIds: filter.phoneNumberIds,
    });
    return { conversation, ...page };
  }

  async sendText(principal: InboxPrincipal, contactId: string, body: SendText) {
    if (!principal.permissions.includes('send')) throw new ForbiddenException({ message: CANNOT_SEND });
    const conversation = await this.conversation(principal, contactId);
    if (!conversation.window.open) throw new ConflictException({ message: WINDOW_CLOSED, window: conversation.window });
    const quick = body.quickReplies?.length ? body.quickReplies : null;
    const result = await this.messages
      .sendSession(principal.accountId, conversation.messagingPhoneId!, {
        typOfmsg: quick ? 'quick_reply' : 'normal_message',
        receipentPhone: conversation.contactNumber,
        message: body.text,
        ...(quick ? { buttons: quick.map((text) => ({ text })) } : {}),
      })
      .catch((error: unknown) => {
        throw inInboxTerms(error);
      });
    await this.announce(principal.accountId, conversation, result.body.messageId);
    return result;
  }

  async sendTemplate(
    principal: InboxPrincipal,
    contactId: string,
    body: { templateName: string; variables?: Record<string, string> },
  ) {
    if (!principal.permissions.includes('send_template'))
      throw new ForbiddenException({ message: CANNOT_SEND_TEMPLATE });
    const conversation = await this.conversation(principal, contactId);
    const result = await this.messages.sendTemplates(principal.accountId, conversation.messagingPhoneId!, {
      templateName: body.templateName,
      to: conversation.contactNumber,
      variables: body.variables ?? {},
    });
    const item = result.body.results[0];
    if (item.messageId) await this.announce(principal.accountId, conversation, item.messageId);
    return { httpStatus: item.success ? 200 : 422, body: item };
  }

  /**
   * APPROVED templates of the account with their variables and a preview (the picker outside the window): those the
   * inbox can send — no media header or carousel (the inbox takes no media), and for a session of some numbers only
   * the templates of their WhatsApp Business Accounts (another brand's are refused at send, and are not its to see).
   */
  async approvedTemplates(principal: InboxPrincipal) {
    const rows = await this.templates.listApproved(principal.accountId);
    const scoped = principal.scope.messagingPhoneIds?.length
      ? (
          await Promise.all(
            principal.scope.messagingPhoneIds.map((id) => this.accounts.findPhoneNumber(principal.accountId, id)),
          )
        ).filter((p) => p !== null)
      : null;
    const sendable: typeof rows = [];
    for (const t of rows) {
      if (mediaHeader(t)) continue;
      // carousel cards keep their saved media; a card link with a dynamic part needs carouselData the inbox lacks
      if (t.carousel?.some((card) => card.buttons?.some((b) => b.dynamic_suffix))) continue;
      // as the send decides it (templateElsewhere): sendable from one of the session's numbers
      if (scoped) {
        const from = await Promise.all(scoped.map((p) => templateElsewhere(this.accounts, String(t.phoneNumberId), p)));
        if (!from.some((problem) => problem === null)) continue;
      }
      sendable.push(t);
    }
    return sendable.map((t) => ({
      name: t.name,
      language: t.language,
      category: t.category,
      variables: t.variables,
      // a URL button with a dynamic part: the agent fills it in, sent as the variable the send takes it from
      links: dynamicLinks(t).map(({ button, variable }) => ({ variable, button: button.text, url: button.url ?? '' })),
      // placeholders kept as {{name}}: the picker fills them in as the agent types
      preview: previewText(previewOf(t.components, Object.fromEntries(t.variables.map((v) => [v, `{{${v}}}`])))),
    }));
  }

  async markRead(principal: InboxPrincipal, contactId: string) {
    const filter = await this.filterOf(principal);
    const conversation = await this.conversation(principal, contactId, filter);
    await this.conversations.markRead(principal.accountId, contactId, filter.phoneNumberIds);
    if (filter.phoneNumberIds) await this.events.conversationRead(principal.accountId, this.target(conversation));
    else {
      // a whole-account read covers every number's messages: told once per number the customer has messages on, so
      // that a session scoped to one of them hears it, and one scoped to others never sees this customer
      const numbers = await this.accounts.messagingPhoneIds(
        await this.conversations.numbersOf(principal.accountId, contactId),
      );
      for (const messagingPhoneId of new Set(numbers.values()))
        await this.events.conversationRead(principal.accountId, { ...this.target(conversation), messagingPhoneId });
    }
    return { contactId, unreadCount: 0 };
  }

  private target(c: InboxConversation) {
    return { contactId: c.contactId, contactNumber: c.contactNumber, messagingPhoneId: c.messagingPhoneId ?? '' };
  }

  private async announce(accountId: string, conversation: InboxConversation, messageId: string | undefined) {
    if (messageId) await this.events.messageCreated(accountId, this.target(conversation), messageId);
  }

  /** The live-event filter of a principal: events of conversations in its scope only. */
  async eventFilter(principal: InboxPrincipal): Promise<(data: Record<string, unknown>) => boolean> {
    const { scope } = principal;
    const phones = scope.messagingPhoneIds?.length ? new Set(scope.messagingPhoneIds) : null;
    const filter = await this.filterOf(principal);
    const ids = filter.contactIds ? new Set(filter.contactIds) : null;
    const numbers = filter.contactNumbers ? new Set(filter.contactNumbers) : null;
    return (data) => {
      if (phones && !phones.has(String(data.messagingPhoneId))) return false;
      if (!ids && !numbers) return true;
      return !!ids?.has(String(data.contactId)) || !!numbers?.has(String(data.contactNumber));
    };
  }
}
