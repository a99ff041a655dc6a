import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { ContactsModule } from '@switchboard/contacts';
import { QUEUES } from '@switchboard/core';
import { TemplatesModule, TemplatesService } from '@switchboard/templates';
import { CallbackProcessor } from './callbacks/callback.processor';
import { CallbacksService } from './callbacks/callbacks.service';
import { ConversationsController, ConversationsService } from './conversations/conversations.controller';
import { Message } from './message.entity';
import { MessageEventsService } from './message-events.service';
import { PlatformWebhookEvent } from './platform-webhooks/platform-webhook-event.entity';
import { PlatformWebhookController } from './platform-webhooks/platform-webhook.controller';
import { PlatformWebhookProcessor, TEMPLATE_STATUS_SINK } from './platform-webhooks/platform-webhook.processor';
import { PlatformWebhooksService } from './platform-webhooks/platform-webhooks.service';
import { MessagesController } from './sending/messages.controller';
import { MessagesService } from './sending/messages.service';
import { SendActivitiesService } from './sending/send-activities.service';
import { BulkSendProcessor, SendExecutor, SendProcessor } from './sending/send.processor';
import { SendQueueService } from './sending/send-queue.service';

const shared = {
  imports: [
    TypeOrmModule.forFeature([Message, PlatformWebhookEvent]),
    BullModule.registerQueue({ name: QUEUES.platformWebhooks }, { name: QUEUES.sends }, { name: QUEUES.bulkSends }, { name: QUEUES.callbacks }),
    AccountsModule,
    ContactsModule,
  ],
  providers: [MessageEventsService, PlatformWebhooksService, SendQueueService, CallbacksService],
};
const exported = [MessageEventsService, SendQueueService, CallbacksService, MessagesService, SendActivitiesService];

/** API side: the platform webhook receiver, the send endpoints, conversations. Exports SendQueueService.enqueueBulk for campaigns/automations. */
@Module({
  imports: [...shared.imports, TemplatesModule],
  providers: [...shared.providers, MessagesService, SendActivitiesService, ConversationsService],
  controllers: [PlatformWebhookController, MessagesController, ConversationsController],
  exports: [...exported, ConversationsService],
})
export class MessagingModule {}

/** Worker side: processes stored platform webhooks, sends (API and bulk queues, one pacer), callbacks; MessagesService.prepare* for campaigns/automations. */
@Module({
  imports: [...shared.imports, TemplatesModule],
  providers: [
    ...shared.providers,
    { provide: TEMPLATE_STATUS_SINK, useExisting: TemplatesService }, // message_template_status_update webhooks
    MessagesService,
    SendActivitiesService,
    PlatformWebhookProcessor,
    SendExecutor,
    SendProcessor,
    BulkSendProcessor,
    CallbackProcessor,
  ],
  exports: exported,
})
export class MessagingWorkerModule {}
