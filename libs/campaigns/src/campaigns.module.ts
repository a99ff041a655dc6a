import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { ContactsModule } from '@switchboard/contacts';
import { QUEUES } from '@switchboard/core';
import { MessagingCoreModule } from '@switchboard/messaging';
import { TemplatesModule } from '@switchboard/templates';
import { CampaignFanoutProcessor, CampaignFanoutService } from './campaign-fanout';
import { CampaignLiveService, CampaignLiveTicker } from './campaign-live';
import { Campaign } from './campaign.entity';
import { CampaignsController } from './campaigns.controller';
import { CampaignsService } from './campaigns.service';

const dependencies = [AccountsModule, ContactsModule, TemplatesModule, MessagingCoreModule];
const queue = BullModule.registerQueue({ name: QUEUES.campaigns });

/**
 * Campaigns without controllers or processors: CampaignsService (create, state machine, trigger) for whoever imports it
 * (made once per process); re-exports the campaigns queue and its dependencies for the API and worker halves.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Campaign]), queue, ...dependencies],
  providers: [CampaignsService, CampaignLiveService],
  exports: [CampaignsService, CampaignLiveService, queue, ...dependencies],
})
export class CampaignsCoreModule {}

/** API side: campaigns CRUD, the state machine and the trigger endpoint (grant /campaigns). */
@Module({
  imports: [CampaignsCoreModule],
  controllers: [CampaignsController],
  exports: [CampaignsCoreModule],
})
export class CampaignsModule {}

/** Worker side: the fan-out processor (QUEUES.campaigns) and its sweep; sends go through libs/messaging's bulk queue. */
@Module({
  imports: [CampaignsCoreModule],
  providers: [CampaignFanoutService, CampaignFanoutProcessor, CampaignLiveTicker],
})
export class CampaignsWorkerModule {}
