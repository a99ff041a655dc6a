import { Injectable } from '@nestjs/common';
import type { MessageEvent } from '@switchboard/whatsapp';

/** A customer's message of a connected number, as stored by messaging. */
export interface InboundMessage {
  accountId: string;
  /** the number it was sent to (the platform's phone_number_id) */
  messagingPhoneId: string;
  /** messages.id of the stored message */
  messageId: string;
  event: MessageEvent;
}

/**
 * Receives every inbound customer message after it is stored (automations resume waiting runs and start
 * keyword-triggered workflows; flows record completed forms). Called again for a redelivered webhook (same
 * `event.wamid`, same `messageId`), so it must be idempotent; a rejection makes the webhook job retry.
 */
export interface InboundMessageListener {
  onInboundMessage(message: InboundMessage): Promise<unknown>;
}

/**
 * Where modules that depend on messaging subscribe to inbound messages (messaging cannot import them: they import it).
 * A listener subscribes when its module initialises (`onModuleInit`); the platform webhook processor publishes.
 */
@Injectable()
export class InboundMessages {
  private readonly listeners: InboundMessageListener[] = [];

  subscribe(listener: InboundMessageListener): void {
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  async publish(message: InboundMessage): Promise<void> {
    for (const listener of this.listeners) await listener.onInboundMessage(message);
  }
}
