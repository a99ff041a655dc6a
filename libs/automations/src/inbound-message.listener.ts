import { Injectable } from '@nestjs/common';
import type { InboundMessageListener } from '@switchboard/messaging';
import type { MessageEvent } from '@switchboard/whatsapp';
import { WorkflowRunsService } from './workflow-runs.service';

/**
 * Customer messages reach automations here (messaging calls it after storing each one, once per wamid): replies
 * resume the runs waiting on that contact and number, and keyword-triggered workflows start.
 */
@Injectable()
export class AutomationInboundListener implements InboundMessageListener {
  constructor(private readonly runs: WorkflowRunsService) {}

  async onInboundMessage(accountId: string, messagingPhoneId: string, event: MessageEvent): Promise<void> {
    const reply = { text: event.text, buttonPayload: event.buttonPayload, buttonText: event.buttonText, messageId: event.wamid };
    await this.runs.deliverReply(accountId, messagingPhoneId, event.from, reply);
    await this.runs.startFromInboundMessage(accountId, messagingPhoneId, event.from, { ...reply, name: event.profileName });
  }
}
