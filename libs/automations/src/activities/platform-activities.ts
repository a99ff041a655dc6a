import { Injectable } from '@nestjs/common';
import { CampaignsService } from '@switchboard/campaigns';
import { ContactsService } from '@switchboard/contacts';
import { AppConfig } from '@switchboard/core';
import type { HttpResult } from '@switchboard/engine';
import { SendActivitiesService } from '@switchboard/messaging';
import { digitsOnly } from '../contact-binding';
import type {
  AutomationActivities,
  HttpRequestInput,
  SendSessionMessageInput,
  SendTemplateInput,
  TriggerCampaignInput,
  UpdateContactInput,
} from './activities';
import { performHttpRequest } from './http-request';

/**
 * The side effects of workflow steps, each through the module that owns it: sends through libs/messaging's send
 * pipeline (stored with the step's idempotency key, paced on the bulk lane), campaign triggers through libs/campaigns
 * (the step's key as the trigger's Idempotency-Key), contact updates through libs/contacts; HTTP requests here.
 */
@Injectable()
export class PlatformAutomationActivities implements AutomationActivities {
  constructor(
    private readonly config: AppConfig,
    private readonly sends: SendActivitiesService,
    private readonly campaigns: CampaignsService,
    private readonly contacts: ContactsService,
  ) {}

  sendTemplate(input: SendTemplateInput) {
    return this.sends.sendTemplate(input);
  }

  sendSessionMessage(input: SendSessionMessageInput) {
    return this.sends.sendSessionMessage(input);
  }

  async triggerCampaign(input: TriggerCampaignInput) {
    // includeExisting: the step names this contact, so it is sent even when already in the campaign's audience.
    return this.campaigns.trigger(
      input.accountId,
      String(input.campaignId),
      { contacts: [input.contact] },
      true,
      input.idempotencyKey,
    );
  }

  httpRequest(input: HttpRequestInput): Promise<HttpResult> {
    return performHttpRequest(this.config, input);
  }

  /** Updates the run's contact (by id, else by phone number) within the account; fails when it is not in the account. */
  async updateContact(input: UpdateContactInput): Promise<unknown> {
    const phone = digitsOnly(input.phone ?? '');
    const contactId = input.contactId && /^\d+$/.test(input.contactId) ? input.contactId : null;
    const updated = await this.contacts.updateFromAutomation(
      input.accountId,
      { contactId, contactNumber: phone },
      input.fields,
    );
    if (!updated)
      throw new Error(
        phone
          ? `no contact with ${phone.includes('.') ? 'WhatsApp user id' : 'phone number'} ${phone} in this account`
          : 'the run has no contact to update',
      );
    return updated;
  }
}
