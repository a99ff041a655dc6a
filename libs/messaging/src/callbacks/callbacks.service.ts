import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { QUEUES, withRequestId } from '@switchboard/core';
import { Queue } from 'bullmq';
import { createHmac } from 'node:crypto';

export const CALLBACK_EVENTS = ['sent', 'delivered', 'read', 'failed', 'replied'] as const;
export type CallbackEvent = (typeof CALLBACK_EVENTS)[number];

/** What a stored message says about its callback (columns of `messages`). */
export interface CallbackTarget {
  messageId: string;
  accountId: string;
  callbackUrl: string | null;
  callbackEvents: string[];
  /** the customer's number (recipient of the message, sender of the reply) */
  recipient: string;
}

export interface CallbackJobData {
  url: string;
  accountId: string;
  body: Record<string, unknown>;
}

export const CALLBACK_JOB = 'callback';

/** `sha256=` + hex HMAC-SHA256 of `timestamp + '.' + body` with the account's callback secret. */
export function signCallback(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * Per-message callbacks (SPEC §6): queued when a message first reaches sent / delivered / read / failed or is
 * replied to, if the message subscribed to that event. The job id (message + event) makes it once-only.
 */
@Injectable()
export class CallbacksService {
  constructor(@InjectQueue(QUEUES.callbacks) private readonly queue: Queue) {}

  /**
   * `reply` (for `replied`): the reply's type (text, location, contacts, reaction, order, image, button_reply, ...,
   * `unsupported`) and its content, sent beside SPEC's `message` text.
   */
  async notify(
    target: CallbackTarget,
    event: CallbackEvent,
    at: Date,
    replyText?: string | null,
    reply?: { type: string; content?: unknown },
  ): Promise<boolean> {
    if (!target.callbackUrl || !target.callbackEvents.includes(event)) return false;
    const body =
      event === 'replied'
        ? {
            message: replyText ?? '',
            senderPhoneNumber: target.recipient,
            messageId: target.messageId,
            timestamp: at.toISOString(),
            ...(reply ?? {}),
          }
        : {
            status: event,
            senderPhoneNumber: target.recipient,
            messageId: target.messageId,
            timestamp: at.toISOString(),
          };
    await this.queue.add(
      CALLBACK_JOB,
      withRequestId({ url: target.callbackUrl, accountId: target.accountId, body }) satisfies CallbackJobData,
      {
        jobId: `cb-${target.messageId}-${event}`,
        attempts: 1, // SPEC §6: once, no retry
        removeOnComplete: { age: 24 * 3600, count: 100_000 }, // kept a day: a repeated notify stays a no-op
        removeOnFail: { age: 24 * 3600, count: 100_000 },
      },
    );
    return true;
  }
}
