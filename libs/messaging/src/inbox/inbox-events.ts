import { Injectable } from '@nestjs/common';
import { LiveEvents } from '@switchboard/core';
import { InboxConversations, type InboxMessage } from './inbox-conversations';

/** The live topic of an account's inbox: every inbox client of the account reads it, filtered by its scope. */
export const inboxTopic = (accountId: string) => `inbox:${accountId}`;

/** Event names of the inbox stream (docs/inbox.md). */
export const INBOX_EVENTS = {
  messageCreated: 'message.created',
  messageStatus: 'message.status',
  conversationUpdated: 'conversation.updated',
} as const;

/** What every inbox event carries to place it: the conversation (contact) and the number it belongs to. */
export interface InboxEventTarget {
  contactId: string;
  contactNumber: string;
  messagingPhoneId: string;
}

/**
 * Publishes the inbox's live events (libs/core LiveEvents) when messaging stores an inbound message, applies a status
 * or sends from the inbox. Best effort: the stored state is the truth, a client that missed an event reloads. Only
 * while an inbox of the account is open (`publishIfWatched`): a campaign's statuses would otherwise be thousands of
 * events a second that nobody reads.
 */
@Injectable()
export class InboxEvents {
  constructor(
    private readonly live: LiveEvents,
    private readonly conversations: InboxConversations,
  ) {}

  async messageCreated(accountId: string, target: InboxEventTarget, messageId: string): Promise<void> {
    // no inbox of the account open (as far as this process knows): the message is not read for an event nobody keeps
    if (this.live.skipIfUnwatched(inboxTopic(accountId))) return;
    const message = await this.conversations.message(accountId, messageId).catch(() => null);
    if (!message) return;
    await this.publishMessage(accountId, target, message);
  }

  async publishMessage(accountId: string, target: InboxEventTarget, message: InboxMessage): Promise<void> {
    await this.live.publishIfWatched(inboxTopic(accountId), INBOX_EVENTS.messageCreated, { ...target, message });
    await this.live.publishIfWatched(inboxTopic(accountId), INBOX_EVENTS.conversationUpdated, {
      ...target,
      lastActivityAt: message.createdAt,
      direction: message.direction,
    });
  }

  async messageStatus(
    accountId: string,
    target: InboxEventTarget,
    status: { messageId: string; status: string; at: string },
  ): Promise<void> {
    await this.live.publishIfWatched(inboxTopic(accountId), INBOX_EVENTS.messageStatus, { ...target, ...status });
  }

  async conversationRead(accountId: string, target: InboxEventTarget): Promise<void> {
    await this.live.publishIfWatched(inboxTopic(accountId), INBOX_EVENTS.conversationUpdated, {
      ...target,
      unreadCount: 0,
    });
  }
}
