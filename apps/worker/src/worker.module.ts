import { DynamicModule, Module } from '@nestjs/common';
import { AutomationsWorkerModule, PlatformAutomationActivities } from '@switchboard/automations';
import { CampaignsModule, CampaignsWorkerModule } from '@switchboard/campaigns';
import { AppConfig, ConfigModule, QueueModule, RedisModule } from '@switchboard/core';
import { DatabaseModule } from '@switchboard/core/database';
import { MessagingWorkerModule } from '@switchboard/messaging';
import { WebhooksWorkerModule } from '@switchboard/webhooks';

/**
 * The background process: BullMQ processors of every domain (webhook ingestion, sends, callbacks,
 * campaign fan-out, automation steps) are registered here as their modules land.
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
        QueueModule.forRoot(),
        MessagingWorkerModule,
        // automation steps send through messaging and trigger campaigns (CampaignsModule provides CampaignsService)
        AutomationsWorkerModule.forRoot({ activities: PlatformAutomationActivities, imports: [MessagingWorkerModule, CampaignsModule] }),
        CampaignsWorkerModule,
        WebhooksWorkerModule,
      ],
    };
  }
}
