import { Injectable } from '@nestjs/common';
import { CampaignsService } from '@switchboard/campaigns';
import { AppConfig } from '@switchboard/core';
import { SendActivitiesService } from '@switchboard/messaging';
import { DataSource } from 'typeorm';
import type { SendSessionMessageInput, SendTemplateInput, TriggerCampaignInput } from './activities';
import { DefaultAutomationActivities } from './default-activities';

/**
 * The activities of a full installation: sends go through libs/messaging (stored with the step's idempotency key,
 * paced on the bulk lane), campaign triggers through libs/campaigns (the step's key as the trigger's
 * Idempotency-Key); HTTP requests and contact updates as in DefaultAutomationActivities.
 */
@Injectable()
export class PlatformAutomationActivities extends DefaultAutomationActivities {
  constructor(
    config: AppConfig,
    dataSource: DataSource,
    private readonly sends: SendActivitiesService,
    private readonly campaigns: CampaignsService,
  ) {
    super(config, dataSource);
  }

  override sendTemplate(input: SendTemplateInput) {
    return this.sends.sendTemplate(input);
  }

  override sendSessionMessage(input: SendSessionMessageInput) {
    return this.sends.sendSessionMessage(input);
  }

  override async triggerCampaign(input: TriggerCampaignInput) {
    // includeExisting: the step names this contact, so it is sent even when already in the campaign's audience.
    return this.campaigns.trigger(input.accountId, String(input.campaignId), { contacts: [input.contact] }, true, input.idempotencyKey);
  }
}
