import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectRepository } from '@nestjs/typeorm';
import { QUEUES } from '@switchboard/core';
import { parseWebhook, type MessageEvent, type TemplateCategoryEvent, type TemplateStatusEvent, type WebhookEvent } from '@switchboard/whatsapp';
import { Job } from 'bullmq';
import { Repository } from 'typeorm';
import { ContactsService } from '@switchboard/contacts';
import { CallbacksService, type CallbackEvent } from '../callbacks/callbacks.service';
import { MessageEventsService, replyContentOf, type RecordedInbound } from '../message-events.service';
import { PlatformWebhookEvent } from './platform-webhook-event.entity';
import { PlatformWebhooksService } from './platform-webhooks.service';

/** Receives template status changes; provided by the templates module. */
export interface TemplateStatusSink {
  applyPlatformStatus(event: TemplateStatusEvent): Promise<unknown>;
  /** `template_category_update`: Meta changed (or announced it will change) a template's category */
  applyPlatformCategory?(event: TemplateCategoryEvent): Promise<unknown>;
}
export const TEMPLATE_STATUS_SINK = Symbol('TEMPLATE_STATUS_SINK');

/**
 * Receives every inbound customer message of a known number, after it is stored (e.g. automations: resume the runs
 * waiting for a reply, start keyword-triggered workflows). Called again for a redelivered webhook (same `event.wamid`),
 * so it must be idempotent by wamid; a rejection makes the webhook job retry. Provide it anywhere in the worker
 * under this token (looked up across modules at start-up).
 */
export interface InboundMessageListener {
  onInboundMessage(accountId: string, messagingPhoneId: string, event: MessageEvent): Promise<unknown>;
}
export const INBOUND_MESSAGE_LISTENER = Symbol('INBOUND_MESSAGE_LISTENER');

/** Thrown when a status names a wamid we have not stored yet (the send's response may still be in flight). */
class StatusBeforeMessageError extends Error {}

@Processor(QUEUES.platformWebhooks, { concurrency: 16 })
export class PlatformWebhookProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(PlatformWebhookProcessor.name);

  constructor(
    @InjectRepository(PlatformWebhookEvent) private readonly events: Repository<PlatformWebhookEvent>,
    private readonly webhooks: PlatformWebhooksService,
    private readonly messages: MessageEventsService,
    @Optional() @Inject(TEMPLATE_STATUS_SINK) private readonly templates?: TemplateStatusSink,
    @Optional() private readonly callbacks?: CallbacksService,
    @Optional() private readonly contacts?: ContactsService,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {
    super();
  }

  private inboundListener?: InboundMessageListener;

  async onApplicationBootstrap() {
    try {
      this.inboundListener = this.moduleRef?.get<InboundMessageListener>(INBOUND_MESSAGE_LISTENER, { strict: false });
    } catch {
      this.inboundListener = undefined; // nobody listens
    }
    const requeued = await this.webhooks.requeueUnprocessed();
    if (requeued) this.logger.log(`Re-queued ${requeued} unprocessed platform webhooks`);
  }

  async process(job: Job<{ eventId: string }>): Promise<void> {
    const stored = await this.events.findOneBy({ id: job.data.eventId });
    if (!stored || stored.processedAt) return;
    const events = parseWebhook(stored.payload);
    // statuses all at once: MessageEventsService writes statuses that arrive together in one statement
    await Promise.all(events.filter((e) => e.kind === 'status').map((e) => this.dispatch(e)));
    for (const event of events) if (event.kind !== 'status') await this.dispatch(event, stored.receivedAt);
    await this.events.update({ id: stored.id }, { processedAt: new Date(), error: null });
  }

  @OnWorkerEvent('failed')
  async onFailed(job: Job<{ eventId: string }>, error: Error) {
    if (job.attemptsMade < (job.opts.attempts ?? 1)) return;
    this.logger.warn(`Platform webhook ${job.data.eventId} not processed: ${error.message}`);
    await this.events.update({ id: job.data.eventId }, { error: error.message });
  }

  private async dispatch(event: WebhookEvent, receivedAt?: Date): Promise<void> {
    switch (event.kind) {
      case 'status': {
        let applied = await this.messages.applyStatus(event);
        // our message id in biz_opaque_callback_data: the send's answer was never recorded; link it now
        if (!applied && (await this.messages.linkByOpaqueData(event))) applied = await this.messages.applyStatus(event);
        if (!applied && ['sent', 'delivered', 'read', 'failed'].includes(event.status) && (await this.isOurNumber(event.phoneNumberId))) {
          throw new StatusBeforeMessageError(`No message with wamid ${event.wamid} yet`);
        }
        if (applied?.firstTime && this.callbacks) {
          await this.callbacks.notify(
            { messageId: applied.messageId, accountId: applied.accountId, callbackUrl: applied.callbackUrl ?? null, callbackEvents: applied.callbackEvents ?? [], recipient: applied.recipient ?? event.recipientId },
            event.status as CallbackEvent,
            new Date(event.timestamp * 1000),
          );
        }
        return;
      }
      case 'message': {
        const recorded = await this.messages.recordInbound(event, receivedAt);
        if (recorded) await this.afterInbound(event, recorded);
        // system messages, revoked / edited messages and reaction removals are no replies: runs keep waiting
        if (this.inboundListener && !event.informational) {
          const accountId = recorded?.accountId ?? (await this.accountOfNumber(event.phoneNumberId));
          if (accountId) await this.inboundListener.onInboundMessage(accountId, event.phoneNumberId, event);
        }
        return;
      }
      case 'template_status':
        await this.templates?.applyPlatformStatus(event);
        return;
      case 'template_category':
        await this.templates?.applyPlatformCategory?.(event);
        return;
      default:
        return; // stored, not acted upon
    }
  }

  /** A newly stored inbound message: link it to the contact (created when new), call back `replied`. */
  private async afterInbound(event: MessageEvent, recorded: RecordedInbound): Promise<void> {
    if (this.contacts) {
      // a user known by a business-scoped user id is bound by that id (and by the phone when Meta sends it too)
      const phone = event.from !== event.fromUserId ? event.from : null;
      const { contact } = event.fromUserId
        ? await this.contacts.findOrCreateByWhatsAppUser(recorded.accountId, event.fromUserId, phone, event.profileName ?? null)
        : await this.contacts.findOrCreateByNumber(recorded.accountId, event.from, event.profileName ?? null);
      await this.messages.linkContact(recorded.messageId, contact.id);
    }
    if (recorded.repliedMessageId && this.callbacks) {
      const target = await this.messages.callbackTarget(recorded.repliedMessageId);
      if (target) {
        const text = event.text ?? event.buttonText ?? event.media?.caption ?? '';
        await this.callbacks.notify({ messageId: recorded.repliedMessageId, ...target }, 'replied', new Date(event.timestamp * 1000), text, replyContentOf(event));
      }
    }
  }

  private async accountOfNumber(messagingPhoneId: string): Promise<string | null> {
    const [row] = await this.events.query('SELECT account_id FROM phone_numbers WHERE messaging_phone_id = $1', [messagingPhoneId]);
    return row ? String(row.account_id) : null;
  }

  private async isOurNumber(messagingPhoneId: string): Promise<boolean> {
    const [row] = await this.events.query('SELECT 1 FROM phone_numbers WHERE messaging_phone_id = $1', [messagingPhoneId]);
    return Boolean(row);
  }
}
