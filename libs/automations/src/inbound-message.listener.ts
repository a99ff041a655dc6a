import { Injectable, OnModuleInit } from '@nestjs/common';
import { InboundMessages, type InboundMessage, type InboundMessageListener } from '@switchboard/messaging';
import { WorkflowRunsService } from './workflow-runs.service';

/**
 * Customer messages reach automations here (messaging publishes each stored one, again for a redelivery of the same
 * wamid): replies resume the runs waiting on that contact and number, and keyword-triggered workflows start.
 */
@Injectable()
export class AutomationInboundListener implements InboundMessageListener, OnModuleInit {
  constructor(
    private readonly runs: WorkflowRunsService,
    private readonly inbound: InboundMessages,
  ) {}

  onModuleInit() {
    this.inbound.subscribe(this);
  }

  async onInboundMessage({ accountId, messagingPhoneId, event }: InboundMessage): Promise<void> {
    const reply = {
      text: event.text,
      buttonPayload: event.buttonPayload,
      buttonText: event.buttonText,
      messageId: event.wamid,
    };
    await this.runs.deliverReply(accountId, messagingPhoneId, event.from, reply);
    await this.runs.startFromInboundMessage(accountId, messagingPhoneId, event.from, {
      ...reply,
      name: event.profileName,
    });
  }
}
