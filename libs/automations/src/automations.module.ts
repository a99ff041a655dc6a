import { RunBacklog } from './run-backlog';
import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module, type Provider, type Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { AppConfig, QUEUES } from '@switchboard/core';
import { CampaignsCoreModule } from '@switchboard/campaigns';
import { ContactsModule } from '@switchboard/contacts';
import { MessagingCoreModule } from '@switchboard/messaging';
import { TemplatesModule } from '@switchboard/templates';
import { AUTOMATION_ACTIVITIES, type AutomationActivities } from './activities/activities';
import { PlatformAutomationActivities } from './activities/platform-activities';
import { AutomationQueue } from './embedded/automation-queue';
import { AutomationsWorker } from './embedded/automations-worker';
import { EmbeddedDriver } from './embedded/embedded-driver';
import { AutomationInboundListener } from './inbound-message.listener';
import { AUTOMATION_DRIVER, type AutomationDriver, type AutomationDriverKind } from './driver/automation-driver';
import { EmbeddedAutomationDriver } from './driver/embedded-automation-driver';
import { AUTOMATION_ENTITIES } from './entities';
import { TemporalActivities } from './temporal/temporal-activities';
import { TemporalClientService } from './temporal/temporal-client.service';
import { TemporalAutomationDriver } from './temporal/temporal-driver';
import { TemporalAutomationWorker } from './temporal/temporal-worker';
import { RunEvents } from './run-events';
import { WorkflowDraftsService } from './workflow-drafts.service';
import { WorkflowRunsService } from './workflow-runs.service';
import { WorkflowWebhookController } from './workflow-webhook.controller';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsService } from './workflows.service';

const shared = [TypeOrmModule.forFeature(AUTOMATION_ENTITIES), BullModule.registerQueue({ name: QUEUES.automations })];

/** Which driver runs automations: `driver` when given, else Temporal when `TEMPORAL_ADDRESS` is set, else embedded. */
export function automationDriverKind(
  config: Pick<AppConfig, 'TEMPORAL_ADDRESS'>,
  driver?: AutomationDriverKind,
): AutomationDriverKind {
  return driver ?? (config.TEMPORAL_ADDRESS ? 'temporal' : 'embedded');
}

/**
 * The AUTOMATION_DRIVER provider and both implementations (the unused one costs nothing: the Temporal client
 * connects lazily). `driver` forces one (tests).
 */
export function automationDriverProviders(driver?: AutomationDriverKind): Provider[] {
  return [
    AutomationQueue,
    EmbeddedAutomationDriver,
    TemporalClientService,
    TemporalAutomationDriver,
    {
      provide: AUTOMATION_DRIVER,
      inject: [AppConfig, EmbeddedAutomationDriver, TemporalAutomationDriver],
      useFactory: (
        config: AppConfig,
        embedded: EmbeddedAutomationDriver,
        temporal: TemporalAutomationDriver,
      ): AutomationDriver => (automationDriverKind(config, driver) === 'temporal' ? temporal : embedded),
    },
  ];
}

/**
 * API side: workflow definitions (grant /workflows; send_template nodes checked against libs/templates), runs
 * read-out and the inbound webhook. Needs QueueModule.forRoot() in the process. Runs are started through
 * AUTOMATION_DRIVER: Temporal when `TEMPORAL_ADDRESS` is set (or `driver: 'temporal'`), else embedded.
 */
@Module({})
export class AutomationsModule {
  static forRoot(options: { driver?: AutomationDriverKind } = {}): DynamicModule {
    return {
      module: AutomationsModule,
      imports: [...shared, TemplatesModule, AccountsModule, ContactsModule],
      controllers: [WorkflowsController, WorkflowWebhookController],
      providers: [
        WorkflowsService,
        WorkflowRunsService,
        WorkflowDraftsService,
        RunEvents,
        RunBacklog,
        ...automationDriverProviders(options.driver),
      ],
      exports: [WorkflowsService, WorkflowRunsService, RunBacklog, AUTOMATION_DRIVER, TemporalClientService],
    };
  }
}

/**
 * Worker side: the embedded driver (BullMQ worker of the `automations` queue, recovery sweep) or, when
 * `TEMPORAL_ADDRESS` is set, the Temporal worker (TemporalAutomationWorker: workflow + TemporalActivities, and the
 * sweep that starts runs left pending), and the activities both call (PlatformAutomationActivities: sends through
 * libs/messaging, campaign triggers through libs/campaigns, contact updates through libs/contacts; `activities`
 * replaces it, for tests). Inbound customer messages arrive through messaging's InboundMessages.
 */
@Module({})
export class AutomationsWorkerModule {
  static forRoot(
    options: { activities?: Type<AutomationActivities>; driver?: AutomationDriverKind } = {},
  ): DynamicModule {
    return {
      module: AutomationsWorkerModule,
      imports: [...shared, MessagingCoreModule, CampaignsCoreModule, ContactsModule],
      providers: [
        ...automationDriverProviders(options.driver),
        WorkflowRunsService,
        RunEvents,
        EmbeddedDriver,
        AutomationsWorker,
        TemporalActivities,
        TemporalAutomationWorker,
        AutomationInboundListener,
        { provide: AUTOMATION_ACTIVITIES, useClass: options.activities ?? PlatformAutomationActivities },
      ],
      exports: [
        WorkflowRunsService,
        EmbeddedDriver,
        AutomationsWorker,
        AUTOMATION_DRIVER,
        TemporalActivities,
        TemporalAutomationWorker,
      ],
    };
  }
}
