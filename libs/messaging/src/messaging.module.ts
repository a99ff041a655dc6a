import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { QUEUES } from '@switchboard/core';
import { TemplatesModule, TemplatesService } from '@switchboard/templates';
import { Message } from './message.entity';
import { MessageEventsService } from './message-events.service';
import { PlatformWebhookEvent } from './platform-webhooks/platform-webhook-event.entity';
import { PlatformWebhookController } from './platform-webhooks/platform-webhook.controller';
import { PlatformWebhookProcessor, TEMPLATE_STATUS_SINK } from './platform-webhooks/platform-webhook.processor';
import { PlatformWebhooksService } from './platform-webhooks/platform-webhooks.service';

const shared = {
  imports: [TypeOrmModule.forFeature([Message, PlatformWebhookEvent]), BullModule.registerQueue({ name: QUEUES.platformWebhooks })],
  providers: [MessageEventsService, PlatformWebhooksService],
};

/** API side: the platform webhook receiver (and, as they land, the send endpoints). */
@Module({ ...shared, controllers: [PlatformWebhookController], exports: [MessageEventsService] })
export class MessagingModule {}

/** Worker side: processes stored platform webhooks (template reviews go to the templates module). */
@Module({
  imports: [...shared.imports, TemplatesModule],
  providers: [...shared.providers, PlatformWebhookProcessor, { provide: TEMPLATE_STATUS_SINK, useExisting: TemplatesService }],
  exports: [MessageEventsService],
})
export class MessagingWorkerModule {}
