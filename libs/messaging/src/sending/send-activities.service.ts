import { Injectable } from '@nestjs/common';
import { AccountsService, PhoneNumber } from '@switchboard/accounts';
import { SameMomentCache } from '@switchboard/core';
import { FindForSendResult, TemplatesService } from '@switchboard/templates';
import { MessagesService } from './messages.service';
import { recipientOf, validateSessionBody } from './send-requests';
import { SendQueueService } from './send-queue.service';

/** What an automation step gives (structurally the AutomationActivities inputs of libs/automations). */
interface StepContext {
  accountId: string;
  /** the run's number, or null: the account's first number */
  messagingPhoneId: string | null;
  /** `run:<runId>:step:<seq>`: stored as the message's idempotency key, so a re-performed step sends nothing new */
  idempotencyKey: string;
}

export class SendStepError extends Error {
  readonly code = 'send_failed';
}

/**
 * Sends for automation steps (and anything else that sends one message without an HTTP request): resolve, store with
 * the step's idempotency key, queue on the bulk lane (together with the other steps' sends of the moment, see
 * storeInBatch); resolves with `{messageId, status: 'queued'}` without waiting for the platform. A message that cannot
 * be sent (unknown template, variable count, opted-out contact) rejects with the reason. Meant as the sendTemplate /
 * sendSessionMessage of libs/automations' AutomationActivities.
 */
@Injectable()
export class SendActivitiesService {
  /** steps started together (a batch of runs) read their number and template once */
  private readonly phonesNow = new SameMomentCache<PhoneNumber | null>();
  private readonly templatesNow = new SameMomentCache<FindForSendResult>();

  constructor(
    private readonly messages: MessagesService,
    private readonly sends: SendQueueService,
    private readonly accounts: AccountsService,
    private readonly templates: TemplatesService,
  ) {}

  async sendTemplate(
    input: StepContext & { to: string; templateName: string; variables?: Record<string, string>; mediaUrl?: string },
  ) {
    const phone = await this.phone(input);
    const template = this.templatesNow.get(`${input.accountId}:${input.templateName}`, () =>
      this.templates.findApprovedForSend(input.accountId, input.templateName),
    );
    const prepared = await this.messages.prepareTemplate(
      input.accountId,
      phone,
      { templateName: input.templateName, to: input.to, variables: input.variables, mediaUrl: input.mediaUrl },
      input.idempotencyKey,
      new Map([[input.templateName, template]]),
    );
    if (!prepared.ok) throw new SendStepError(prepared.reason);
    const messageId = await this.sends.storeInBatch(prepared.message);
    return { messageId, status: 'queued' };
  }

  async sendSessionMessage(
    input: StepContext & { to: string; text: string; buttons?: Array<{ text: string; payload?: string }> },
  ) {
    const phone = await this.phone(input);
    if (!recipientOf(input.to)) throw new SendStepError(`"${input.to}" is not a phone number with country code`);
    // a button's payload is the id WhatsApp returns when it is tapped: what a wait's `button` branch matches
    const buttons = input.buttons?.length
      ? input.buttons.map((b) => ({ text: b.text, id: b.payload ?? b.text }))
      : undefined;
    const body = {
      typOfmsg: buttons ? 'quick_reply' : 'normal_message',
      receipentPhone: input.to,
      message: input.text,
      buttons,
    };
    // the REST send's rules (lengths, repeats): the platform would refuse the message after the step completed
    const { value, errors } = validateSessionBody(body);
    if (!value) throw new SendStepError(errors.map((e) => e.message).join('; '));
    const prepared = await this.messages.prepareSession(input.accountId, phone, value, input.idempotencyKey);
    if (!prepared.ok) throw new SendStepError(prepared.reason);
    const messageId = await this.sends.storeInBatch(prepared.message);
    return { messageId, status: 'queued' };
  }

  private async phone(input: StepContext): Promise<PhoneNumber> {
    const { accountId, messagingPhoneId } = input;
    if (messagingPhoneId) {
      const phone = await this.phonesNow.get(`${accountId}:${messagingPhoneId}`, () =>
        this.accounts.findPhoneNumber(accountId, messagingPhoneId),
      );
      if (!phone) throw new SendStepError(`number ${messagingPhoneId} is not connected to this account`);
      return phone;
    }
    const phone = await this.phonesNow.get(`${accountId}:default`, () => this.accounts.defaultPhoneNumber(accountId));
    if (!phone) throw new SendStepError('the account has no connected number');
    return phone;
  }
}
