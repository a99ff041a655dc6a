import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '@switchboard/accounts';
import { QUEUES } from '@switchboard/core';
import { MessagingModule, MessagingWorkerModule } from '@switchboard/messaging';
import { TemplatesModule } from '@switchboard/templates';
import { CampaignFanoutProcessor, CampaignFanoutService } from './campaign-fanout';
import { Campaign } from './campaign.entity';
import { CampaignsController } from './campaigns.controller';
import { CampaignsService } from './campaigns.service';

/** API side: campaigns CRUD, the state machine and the trigger endpoint (grant /campaigns). */
@Module({
  imports: [TypeOrmModule.forFeature([Campaign]), BullModule.registerQueue({ name: QUEUES.campaigns }), AccountsModule, TemplatesModule, MessagingModule],
  controllers: [CampaignsController],
  providers: [CampaignsService],
  exports: [CampaignsService],
})
export class CampaignsModule {}

/** Worker side: the fan-out processor (QUEUES.campaigns) and its sweep; sends go through libs/messaging's bulk queue. */
@Module({
  imports: [BullModule.registerQueue({ name: QUEUES.campaigns }), MessagingWorkerModule],
  providers: [CampaignFanoutService, CampaignFanoutProcessor],
})
export class CampaignsWorkerModule {}
