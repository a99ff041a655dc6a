import { Module } from '@nestjs/common';
import { WebhookEndpointBodyLimit } from './body-limit';
import { WebhookRetention } from './retention';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhooksController } from './webhooks.controller';

/** API side: the endpoints API, delivery log, replay and events (docs/webhooks.md). */
@Module({
  providers: [WebhookEndpointsService, WebhookEndpointBodyLimit],
  controllers: [WebhooksController],
  exports: [WebhookEndpointsService],
})
export class WebhooksModule {}

/** Worker side: fans the outbox out into deliveries and delivers them (signed, retried); deletes old events. */
@Module({ providers: [WebhookDeliveryWorker, WebhookRetention], exports: [WebhookDeliveryWorker, WebhookRetention] })
export class WebhooksWorkerModule {}
