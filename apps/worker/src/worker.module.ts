import { DynamicModule, Module } from '@nestjs/common';
import { AutomationsWorkerModule } from '@switchboard/automations';
import { CampaignsWorkerModule } from '@switchboard/campaigns';
import { ContactsWorkerModule } from '@switchboard/contacts';
import {
  AppConfig,
  ConfigModule,
  LiveEventsModule,
  QueueModule,
  RedisModule,
  WorkerHeartbeat,
  WorkerMetricsServer,
} from '@switchboard/core';
import { DatabaseModule } from '@switchboard/core/database';
import { FlowsWorkerModule } from '@switchboard/flows';
import { MessagingWorkerModule } from '@switchboard/messaging';
import { WebhooksWorkerModule } from '@switchboard/webhooks';

/**
 * The background process: BullMQ processors of every domain (webhook ingestion, sends, callbacks,
 * campaign fan-out, automation steps) and the listeners of inbound messages (automations, flows). Each domain's
 * services come from its core module, imported once however many modules need it (see worker.module.spec.ts).
 */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        RedisModule,
        LiveEventsModule,
        QueueModule.forRoot(),
        MessagingWorkerModule,
        AutomationsWorkerModule.forRoot(),
        CampaignsWorkerModule,
        ContactsWorkerModule,
        FlowsWorkerModule,
        WebhooksWorkerModule,
      ],
      // liveness for GET /health/ready (a heartbeat in Redis) and the worker's /metrics on WORKER_METRICS_PORT
      providers: [WorkerHeartbeat, WorkerMetricsServer],
    };
  }
}
