import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module, type ModuleMetadata, type Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { QUEUES } from '@switchboard/core';
import { AUTOMATION_ACTIVITIES, type AutomationActivities } from './activities/activities';
import { DefaultAutomationActivities } from './activities/default-activities';
import { AutomationQueue } from './embedded/automation-queue';
import { AutomationsWorker } from './embedded/automations-worker';
import { EmbeddedDriver } from './embedded/embedded-driver';
import { AUTOMATION_ENTITIES } from './entities';
import { TableTemplateCatalog, TEMPLATE_CATALOG, type TemplateCatalog } from './template-catalog';
import { WorkflowRunsService } from './workflow-runs.service';
import { WorkflowWebhookController } from './workflow-webhook.controller';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsService } from './workflows.service';

const shared = [TypeOrmModule.forFeature(AUTOMATION_ENTITIES), BullModule.registerQueue({ name: QUEUES.automations })];

/**
 * API side: workflow definitions (grant /workflows), runs read-out and the inbound webhook. Needs
 * QueueModule.forRoot() in the process. `templateCatalog` replaces the default template-name check
 * (the templates module passes its own, with the module providing it in `imports`).
 */
@Module({})
export class AutomationsModule {
  static forRoot(options: { imports?: ModuleMetadata['imports']; templateCatalog?: Type<TemplateCatalog> } = {}): DynamicModule {
    return {
      module: AutomationsModule,
      imports: [...shared, ...(options.imports ?? [])],
      controllers: [WorkflowsController, WorkflowWebhookController],
      providers: [
        WorkflowsService,
        WorkflowRunsService,
        AutomationQueue,
        { provide: TEMPLATE_CATALOG, useClass: options.templateCatalog ?? TableTemplateCatalog },
      ],
      exports: [WorkflowsService, WorkflowRunsService],
    };
  }
}

/**
 * Worker side: the embedded driver (BullMQ worker of the `automations` queue, recovery sweep) and the
 * activities it calls. `activities` replaces DefaultAutomationActivities under AUTOMATION_ACTIVITIES (the
 * messaging/campaign modules pass a class implementing AutomationActivities, with its dependencies in `imports`).
 * Exports WorkflowRunsService: `deliverReply` and `startFromInboundMessage` for inbound messages.
 */
@Module({})
export class AutomationsWorkerModule {
  static forRoot(options: { imports?: ModuleMetadata['imports']; activities?: Type<AutomationActivities> } = {}): DynamicModule {
    return {
      module: AutomationsWorkerModule,
      imports: [...shared, ...(options.imports ?? [])],
      providers: [
        AutomationQueue,
        WorkflowRunsService,
        EmbeddedDriver,
        AutomationsWorker,
        DefaultAutomationActivities,
        options.activities
          ? { provide: AUTOMATION_ACTIVITIES, useClass: options.activities }
          : { provide: AUTOMATION_ACTIVITIES, useExisting: DefaultAutomationActivities },
      ],
      exports: [WorkflowRunsService, EmbeddedDriver, AutomationsWorker, DefaultAutomationActivities],
    };
  }
}
