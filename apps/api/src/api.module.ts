import { DynamicModule, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AccountsModule } from '@switchboard/accounts';
import { AuthModule } from '@switchboard/auth';
import { AutomationsModule } from '@switchboard/automations';
import { CampaignsModule } from '@switchboard/campaigns';
import { ContactsModule } from '@switchboard/contacts';
import { AppConfig, ConfigModule, LiveEventsModule, QueueModule, RedisModule } from '@switchboard/core';
import { DatabaseModule } from '@switchboard/core/database';
import { FlowsModule } from '@switchboard/flows';
import { InboxModule } from '@switchboard/inbox';
import { McpModule } from '@switchboard/mcp';
import { MessagingModule } from '@switchboard/messaging';
import { TemplatesModule } from '@switchboard/templates';
import { WebhooksModule } from '@switchboard/webhooks';
import { UsersModule } from '@switchboard/users';
import { HealthController } from './health/health.controller';
import { MetricsController } from './metrics/metrics.controller';

/** The REST API process: every domain module's controllers behind the global auth and rate-limit guards. */
@Module({})
export class ApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        RedisModule,
        LiveEventsModule,
        QueueModule.forRoot(),
        TerminusModule,
        AuthModule,
        AccountsModule,
        ContactsModule,
        MessagingModule,
        TemplatesModule,
        AutomationsModule.forRoot(),
        FlowsModule,
        CampaignsModule,
        McpModule,
        WebhooksModule,
        UsersModule,
        InboxModule,
      ],
      controllers: [HealthController, MetricsController],
    };
  }
}
