import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { ContactsModule } from '@switchboard/contacts';
import { QUEUES } from '@switchboard/core';
import { TemplatesModule } from '@switchboard/templates';
import { WebhookEndpointPresence } from '@switchboard/webhooks';
import { CallbackProcessor } from './callbacks/callback.processor';
import { CallbacksService } from './callbacks/callbacks.service';
import { ConversationsController, ConversationsService } from './conversations/conversations.controller';
import { InboundMessages } from './inbound-messages';
import { InboxConversations } from './inbox/inbox-conversations';
import { InboxEvents } from './inbox/inbox-events';
import { Message } from './message.entity';
import { MessageEventsService } from './message-events.service';
import { PlatformWebhookEvent } from './platform-webhooks/platform-webhook-event.entity';
import { PlatformWebhookController } from './platform-webhooks/platform-webhook.controller';
import { PlatformWebhookProcessor } from './platform-webhooks/platform-webhook.processor';
import { PlatformWebhooksService } from './platform-webhooks/platform-webhooks.service';
import { MessagesController } from './sending/messages.controller';
import { MessagesService } from './sending/messages.service';
import { SendActivitiesService } from './sending/send-activities.service';
import { BulkSendProcessor, SendExecutor, SendProcessor } from './sending/send.processor';
import { CampaignHolds } from './sending/campaign-holds';
import { SendQueueService } from './sending/send-queue.service';

const services = [
  MessageEventsService,
  PlatformWebhooksService,
  SendQueueService,
  CallbacksService,
  MessagesService,
  SendActivitiesService,
  InboundMessages,
  InboxConversations,
  InboxEvents,
  CampaignHolds,
  WebhookEndpointPresence, // libs/webhooks: whether a status write needs the outbox
];
const entities = TypeOrmModule.forFeature([Message, PlatformWebhookEvent]);
const queues = BullModule.registerQueue(
  { name: QUEUES.platformWebhooks },
  { name: QUEUES.sends },
  { name: QUEUES.bulkSends },
  { name: QUEUES.callbacks },
);

/**
 * The message store and the door to the send pipeline, without controllers or processors: what other modules import
 * to send (MessagesService.prepare*, SendQueueService, SendActivitiesService) or to hear inbound messages
 * (InboundMessages). A static module: Nest makes it once per process, whatever imports it, so each service (and each
 * queue) exists once. Re-exports what the API and worker halves use (queues, repositories, accounts, contacts, templates).
 */
@Module({
  imports: [entities, queues, AccountsModule, ContactsModule, TemplatesModule],
  providers: services,
  exports: [...services, entities, queues, AccountsModule, ContactsModule, TemplatesModule],
})
export class MessagingCoreModule {}

/** API side: the platform webhook receiver, the send endpoints, conversations. */
@Module({
  imports: [MessagingCoreModule],
  providers: [ConversationsService],
  controllers: [PlatformWebhookController, MessagesController, ConversationsController],
  exports: [MessagingCoreModule, ConversationsService],
})
export class MessagingModule {}

/** Worker side: processes stored platform webhooks, sends (API and bulk queues, one pacer), callbacks. */
@Module({
  imports: [MessagingCoreModule],
  providers: [PlatformWebhookProcessor, SendExecutor, SendProcessor, BulkSendProcessor, CallbackProcessor],
  exports: [MessagingCoreModule],
})
export class MessagingWorkerModule {}
