import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { ContactsService } from '@switchboard/contacts';
import {
  AppConfig,
  inJobContext,
  messageStatusesTotal,
  otherWhatsAppForms,
  PeriodicSweeps,
  QUEUES,
  webhookLagSeconds,
} from '@switchboard/core';
import { TemplatesService } from '@switchboard/templates';
import { parseWebhook, type MessageEvent, type WebhookEvent } from '@switchboard/whatsapp';
import { Job } from 'bullmq';
import { Repository } from 'typeorm';
import { CallbacksService, type CallbackEvent } from '../callbacks/callbacks.service';
import { InboundMessages } from '../inbound-messages';
import { InboxEvents } from '../inbox/inbox-events';
import { MessageEventsService, replyContentOf, type RecordedInbound } from '../message-events.service';
import { PlatformWebhookEvent } from './platform-webhook-event.entity';
import { PlatformWebhooksService } from './platform-webhooks.service';

/** Waits for every promise to settle, then throws the first failure (Promise.all would leave the others running). */
async function settleAll(work: Array<Promise<unknown> | undefined>): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

const RETENTION_SWEEP_EVERY_MS = 3600_000;
/** Every minute, events unprocessed 30 s after they arrived are queued again (a no-op for those whose job exists). */
const REQUEUE_SWEEP_EVERY_MS = 60_000;
const REQUEUE_AFTER_MS = 30_000;
/** The statuses a message records (MessageEventsService.applyStatus); others (`deleted`, `warning`) are not tracked. */
const TRACKED_STATUSES = new Set(['sent', 'delivered', 'read', 'failed']);

/**
 * A job locked by a worker that died is taken over once its lock expires (stalled check). Short jobs, so the locks of
 * the send queues (15 s, checked every 5 s) rather than BullMQ's 30 s checked every 30 s: a crashed worker's webhooks
 * hold the intake, and with it every message in doubt (SendExecutor), for up to about 20 s instead of about a minute.
 * 32 jobs at a time: the messages and statuses of the jobs in flight are written together (MessageEventsService), so
 * a burst of customer replies is worked through in batches of up to 32 (200 replies at once: p99 222–246 ms at 32,
 * 332–446 ms at 16; 64 was no better, docs/performance.md).
 */
@Processor(QUEUES.platformWebhooks, { concurrency: 32, lockDuration: 15_000, stalledInterval: 5_000 })
export class PlatformWebhookProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(PlatformWebhookProcessor.name);

  constructor(
    @InjectRepository(PlatformWebhookEvent) private readonly events: Repository<PlatformWebhookEvent>,
    private readonly webhooks: PlatformWebhooksService,
    private readonly messages: MessageEventsService,
    private readonly templates: TemplatesService,
    private readonly callbacks: CallbacksService,
    private readonly contacts: ContactsService,
    private readonly accounts: AccountsService,
    private readonly inbound: InboundMessages,
    private readonly inboxEvents: InboxEvents,
    private readonly sweeps: PeriodicSweeps,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async onApplicationBootstrap() {
    const requeued = await this.webhooks.requeueUnprocessed();
    if (requeued) this.logger.log(`Re-queued ${requeued} unprocessed platform webhooks`);
    // Stored but never queued (Redis down, the API killed in between, a job lost): until queued, such an event is
    // never processed, and it holds back every message in doubt (SendExecutor.inDoubt) for IN_DOUBT_GIVE_UP_MS.
    await this.sweeps.register('platform-webhook-requeue', REQUEUE_SWEEP_EVERY_MS, async () => {
      const again = await this.webhooks.requeueUnprocessed(REQUEUE_AFTER_MS);
      if (again) this.logger.log({ msg: 'unprocessed platform webhooks queued again', count: again });
    });
    // the table would grow with every webhook forever: processed ones are kept PLATFORM_WEBHOOK_RETENTION_DAYS
    await this.sweeps.register('platform-webhook-retention', RETENTION_SWEEP_EVERY_MS, async () => {
      const deleted = await this.webhooks.prune(this.config.PLATFORM_WEBHOOK_RETENTION_DAYS);
      if (deleted) this.logger.log({ msg: 'old platform webhooks deleted', deleted });
    });
  }

  process(job: Job<{ eventId: string; requeued?: boolean }>): Promise<void> {
    return inJobContext(job, () => this.handle(job));
  }

  private async handle(job: Job<{ eventId: string; requeued?: boolean }>): Promise<void> {
    const stored = await this.webhooks.load(job.data.eventId);
    if (!stored || stored.processedAt) return;
    const events = parseWebhook(stored.payload);
    // a job started again (it failed, or its worker died), or queued again by the sweep (a job lost, or failed for
    // good unrecorded), may follow a try that wrote its events and did not finish with them
    const retry = job.attemptsStarted > 1 || job.data.requeued === true;
    // statuses all at once: MessageEventsService writes statuses that arrive together in one statement. A failed status
    // does not hold back the customer messages of the same webhook: they are stored, then the job fails (retried).
    const statuses = settleAll(
      events.filter((e) => e.kind === 'status').map((e) => this.dispatch(e, undefined, retry)),
    );
    statuses.catch(() => undefined); // awaited below, after the messages
    for (const event of events) if (event.kind !== 'status') await this.dispatch(event, stored.receivedAt, retry);
    await statuses;
    await this.webhooks.markProcessed(stored.id);
  }

  @OnWorkerEvent('failed')
  async onFailed(job: Job<{ eventId: string }>, error: Error) {
    if (job.attemptsMade < (job.opts.attempts ?? 1)) return;
    this.logger.warn(`Platform webhook ${job.data.eventId} not processed: ${error.message}`);
    // an event handler's rejection would be unhandled (and end the process): not recorded, the sweep queues it again
    await this.events.update({ id: job.data.eventId }, { error: error.message }).catch((cause: Error) =>
      this.logger.warn({
        msg: 'platform webhook failure not recorded; the sweep will queue it again',
        eventId: job.data.eventId,
        err: cause.message,
      }),
    );
  }

  private async dispatch(event: WebhookEvent, receivedAt?: Date, retry = false): Promise<void> {
    switch (event.kind) {
      case 'status': {
        let applied = await this.messages.applyStatus(event);
        // our message id in biz_opaque_callback_data: the send's answer was never recorded; link it now
        if (!applied && (await this.messages.linkByOpaqueData(event))) applied = await this.messages.applyStatus(event);
        if (!applied) {
          // Every send of ours carries its message id, so a status that names neither a wamid we stored nor a message
          // it can be linked to is not ours: sent by another app on the same business account, or the first answer of
          // a message sent again while in doubt. Retrying would never find it (docs/platform-webhooks.md).
          if (TRACKED_STATUSES.has(event.status)) {
            messageStatusesTotal.inc({ status: 'not_ours' });
            this.logger.debug({
              msg: 'status of a message not ours, skipped',
              wamid: event.wamid,
              status: event.status,
            });
          }
          return;
        }
        // The first time, or again when this job is a retry and the stored time is this event's: an earlier try may
        // have written the status and failed before its callback (queued once per message and status) or inbox event.
        const followUp = applied.firstTime || (retry && applied.timeIsThisEvent);
        if (applied.firstTime) {
          messageStatusesTotal.inc({ status: event.status });
          webhookLagSeconds.observe({ kind: 'status' }, Math.max(0, Date.now() / 1000 - event.timestamp));
        }
        if (followUp) {
          await this.callbacks.notify(
            {
              messageId: applied.messageId,
              accountId: applied.accountId,
              callbackUrl: applied.callbackUrl ?? null,
              callbackEvents: applied.callbackEvents ?? [],
              recipient: applied.recipient ?? event.recipientId,
            },
            event.status as CallbackEvent,
            new Date(event.timestamp * 1000),
          );
        }
        if (followUp && applied.contactId) {
          // the inbox's ticks (sent → delivered → read, or failed)
          await this.inboxEvents.messageStatus(
            applied.accountId,
            {
              contactId: applied.contactId,
              contactNumber: applied.recipient ?? event.recipientId,
              messagingPhoneId: event.phoneNumberId,
            },
            {
              messageId: applied.messageId,
              status: applied.status,
              at: new Date(event.timestamp * 1000).toISOString(),
            },
          );
        }
        return;
      }
      case 'message': {
        event = await this.fromKnownForm(event);
        const recorded = await this.messages.recordInbound(event, receivedAt);
        if (recorded) webhookLagSeconds.observe({ kind: 'message' }, Math.max(0, Date.now() / 1000 - event.timestamp));
        // A duplicate (Meta's redelivery, or this job again) is followed up once more when an earlier try may have
        // stored it and failed before the end: on a retry, or while no contact is linked. Each step is idempotent.
        const stored: (RecordedInbound & { contactId?: string | null }) | null =
          recorded ?? (await this.messages.storedInbound(event));
        if (!stored) return; // a number not connected here
        const followUp = recorded !== null || retry || stored.contactId === null;
        // The contact, the inbox and the `replied` callback beside the listeners (a waiting run's next step), not before
        // them: neither needs the other, and a reply reaches its run a few round trips sooner. Both settle before the
        // job ends, so a retry never overlaps either.
        await settleAll([followUp ? this.afterInbound(event, stored) : undefined, this.publishInbound(event, stored)]);
        return;
      }
      case 'template_status':
        await this.templates.applyPlatformStatus(event);
        return;
      case 'template_category':
        await this.templates.applyPlatformCategory(event);
        return;
      default:
        return; // stored, not acted upon
    }
  }

  /**
   * A message whose sender's WhatsApp id is another form of a number this account already knows (Mexico, Brazil,
   * Argentina: `otherWhatsAppForms`) is taken as from that number: the form a contact has (the id itself first: a
   * contact made by earlier messages keeps them), else the form of the conversation (the newest message with either).
   * Its contact, inbox conversation and replied mark are then the number's, not a second contact nobody sent to.
   */
  private async fromKnownForm(event: MessageEvent): Promise<MessageEvent> {
    const others = event.from === event.fromUserId ? [] : otherWhatsAppForms(event.from);
    if (!others.length) return event;
    const phone = await this.accounts.phoneNumberByPlatformId(event.phoneNumberId);
    if (!phone) return event;
    const forms = [event.from, ...others];
    const known =
      (await this.contacts.firstKnownNumber(String(phone.accountId), forms)) ??
      (await this.messages.conversationForm(String(phone.id), forms));
    return known && known !== event.from ? { ...event, from: known } : event;
  }

  /**
   * Tells the listeners (automations, flows). They also hear a redelivered message (stored before): they are
   * idempotent, and a failed first try is retried. System messages, revoked / edited messages and reaction removals are
   * no replies: runs keep waiting.
   */
  private async publishInbound(event: MessageEvent, stored: RecordedInbound): Promise<void> {
    if (event.informational) return;
    await this.inbound.publish({
      accountId: stored.accountId,
      messagingPhoneId: event.phoneNumberId,
      messageId: stored.messageId,
      event,
    });
  }

  /** A stored inbound message: link it to the contact (created when new), tell the inbox, call back `replied`. */
  private async afterInbound(event: MessageEvent, recorded: RecordedInbound): Promise<void> {
    // a user known by a business-scoped user id is bound by that id (and by the phone when Meta sends it too)
    const phone = event.from !== event.fromUserId ? event.from : null;
    const { contact } = event.fromUserId
      ? await this.contacts.findOrCreateByWhatsAppUser(
          recorded.accountId,
          event.fromUserId,
          phone,
          event.profileName ?? null,
        )
      : await this.contacts.findOrCreateByNumber(recorded.accountId, event.from, event.profileName ?? null);
    await this.messages.linkContact(recorded.messageId, contact.id);
    await this.inboxEvents.messageCreated(
      recorded.accountId,
      {
        contactId: contact.id,
        contactNumber: contact.contactNumber ?? event.from,
        messagingPhoneId: event.phoneNumberId,
      },
      recorded.messageId,
    );
    if (recorded.repliedMessageId) {
      const target = await this.messages.callbackTarget(recorded.repliedMessageId);
      if (target) {
        const text = event.text ?? event.buttonText ?? event.media?.caption ?? '';
        await this.callbacks.notify(
          { messageId: recorded.repliedMessageId, ...target },
          'replied',
          new Date(event.timestamp * 1000),
          text,
          replyContentOf(event),
        );
      }
    }
  }
}
