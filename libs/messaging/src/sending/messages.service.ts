import {
  BadRequestException,
  ForbiddenException,
  Injectable,
  NotFoundException,
  UnprocessableEntityException,
} from '@nestjs/common';
import { AccountsService, PhoneNumber } from '@switchboard/accounts';
import { ContactsService } from '@switchboard/contacts';
import {
  AppConfig,
  assertPublicTarget,
  checkIdempotencyKey,
  FieldError,
  normalizePhone,
  validationException,
} from '@switchboard/core';
import { TemplatesService } from '@switchboard/templates';
import { templateMessage } from '@switchboard/whatsapp';

type FindForSend = Awaited<ReturnType<TemplatesService['findApprovedForSend']>>;
import { buildTemplateComponents, TemplateForSend } from './template-payload';
import { MessageOutcome, OutboundMessage, SendQueueService } from './send-queue.service';
import {
  callbackEventsOf,
  isUserId,
  recipientOf,
  SessionMessageBody,
  sessionPayload,
  TemplateMessageBody,
  validateSessionBody,
  validateTemplateItem,
} from './send-requests';

export const SESSION_SENT = 'Message sent to whatsapp successfully!';
export const SESSION_QUEUED = 'Message queued: the platform has not answered yet';
export const ALL_SENT = 'All messages sent successfully';
export const SOME_FAILED = 'Some messages failed to send';
export const TEMPLATE_SENT = 'Message sent successfully';
export const TEMPLATE_QUEUED = 'Message queued for sending';
export const CONTACT_OPTED_OUT = 'Contact has opted out (blocked)';
export const phoneNotFound = (id: string) =>
  `Phone number not found: ${id} is not a connected number of this account (see GET /account/get)`;

export interface SessionResult {
  httpStatus: 200 | 202 | 500;
  body: {
    statusCode?: number;
    success: boolean;
    message: string;
    messageId: string;
    status: string;
    wamid?: string | null;
    code?: number | null;
  };
}

export type TemplateResultItem =
  | {
      success: true;
      message: string;
      contact: { contact_id: number; contact_number: string };
      messageId: string;
      status: string;
    }
  | { success: false; message: string; contact: unknown; messageId?: string; status?: string; code?: number | null };

export interface TemplateResult {
  httpStatus: 200 | 207;
  body: { message: string; results: TemplateResultItem[] };
}

/** The platform's reason for a failed message, as stored (title and details). */
export function failureReason(o: Pick<MessageOutcome, 'errorTitle' | 'errorMessage'>): string {
  const { errorTitle: title, errorMessage: details } = o;
  if (title && details && title !== details && !details.startsWith(title)) return `${title}: ${details}`;
  return details || title || 'The platform rejected the message';
}

/**
 * Why a template cannot go from this number: it lives in another WhatsApp Business Account of the account (Meta
 * fails such a send with 132001 after we answered "sent"). Null when it can (the same number, or the same WABA).
 */
export async function templateElsewhere(
  accounts: AccountsService,
  templatePhoneId: string,
  phone: PhoneNumber,
): Promise<string | null> {
  if (String(templatePhoneId) === String(phone.id)) return null;
  const owner = await accounts.phoneNumberById(String(templatePhoneId));
  if (!owner || owner.businessAccountId === phone.businessAccountId) return null;
  return `Template belongs to the WhatsApp Business Account of number ${owner.messagingPhoneId}: send it from a number of that account`;
}

/**
 * The two send endpoints (SPEC §4 Messages): validate, resolve number / contact / template, store and queue,
 * wait (bounded) for the platform's answer, and shape the SPEC's responses.
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly accounts: AccountsService,
    private readonly contacts: ContactsService,
    private readonly templates: TemplatesService,
    private readonly sends: SendQueueService,
    private readonly config: AppConfig,
  ) {}

  async sendSession(
    accountId: string,
    messagingPhoneId: string,
    raw: unknown,
    idempotencyKey?: string,
  ): Promise<SessionResult> {
    checkIdempotencyKey(idempotencyKey);
    const { value, errors } = validateSessionBody(raw);
    if (!value) throw validationException(errors);
    const phone = await this.phoneOf(accountId, messagingPhoneId);
    await this.checkCallbackTargets([value], '');
    const prepared = await this.prepareSession(accountId, phone, value, idempotencyKey ?? null);
    if (!prepared.ok) throw new ForbiddenException({ success: false, message: prepared.reason });
    await this.refuseReusedKeys([prepared.message], idempotencyKey, false);
    const [id] = await this.sends.store([prepared.message], 'api');
    let outcome = (await this.sends.waitForOutcome([id])).get(id)!;
    // Accepted is not yet sent: outside the window the platform reports 131047 in a failed status. Unless we know the
    // window is open, the answer waits for that first status, so a closed window is still a 500 (SPEC §4).
    if (outcome.status === 'accepted' && !(await this.sends.windowOpen(phone.id, prepared.message.recipient))) {
      outcome = await this.sends.waitForFirstStatus(id);
    }
    if (outcome.status === 'failed') {
      return {
        httpStatus: 500,
        body: {
          statusCode: 500,
          success: false,
          message: failureReason(outcome),
          messageId: id,
          status: 'failed',
          code: outcome.errorCode,
        },
      };
    }
    if (outcome.status === 'queued')
      return { httpStatus: 202, body: { success: true, message: SESSION_QUEUED, messageId: id, status: 'queued' } };
    return {
      httpStatus: 200,
      body: { success: true, message: SESSION_SENT, messageId: id, status: outcome.status, wamid: outcome.wamid },
    };
  }

  async sendTemplates(
    accountId: string,
    messagingPhoneId: string,
    raw: unknown,
    idempotencyKey?: string,
  ): Promise<TemplateResult> {
    checkIdempotencyKey(idempotencyKey);
    const bulk = Array.isArray(raw);
    const items: unknown[] = bulk ? (raw as unknown[]) : [raw];
    if (bulk && items.length === 0)
      throw validationException([
        { field: 'body', message: 'body must be a message object or a non-empty array of them' },
      ]);
    if (items.length > this.config.MAX_BULK_SEND) {
      throw validationException([
        {
          field: 'body',
          message: `at most ${this.config.MAX_BULK_SEND} messages per request (got ${items.length}); split the array`,
        },
      ]);
    }
    const errors: FieldError[] = [];
    const values = items.map((item, i) => {
      const checked = validateTemplateItem(item, bulk ? `[${i}]` : '');
      errors.push(...checked.errors);
      return checked.value!;
    });
    if (errors.length) throw validationException(errors);
    const phone = await this.phoneOf(accountId, messagingPhoneId);
    await this.checkCallbackTargets(values, bulk ? '[i].' : '');

    const results: Array<TemplateResultItem | null> = new Array(values.length).fill(null);
    const toSend: Array<{
      index: number;
      message: OutboundMessage;
      contact: { contact_id: number; contact_number: string };
    }> = [];
    const templateCache = new Map<string, Promise<FindForSend>>();
    for (const [i, m] of values.entries()) {
      const prepared = await this.prepareTemplate(
        accountId,
        phone,
        m,
        idempotencyKey ? (bulk ? `${idempotencyKey}:${i}` : idempotencyKey) : null,
        templateCache,
      );
      if (!prepared.ok) results[i] = { success: false, message: prepared.reason, contact: m.to };
      else toSend.push({ index: i, message: prepared.message, contact: prepared.contact });
    }

    if (toSend.length) {
      await this.refuseReusedKeys(
        toSend.map((s) => s.message),
        idempotencyKey,
        bulk,
        toSend.map((s) => s.index),
      );
      const ids = await this.sends.store(
        toSend.map((s) => s.message),
        'api',
      );
      const outcomes = await this.sends.waitForOutcome(ids);
      toSend.forEach((s, k) => {
        const id = ids[k];
        const o = outcomes.get(id)!;
        results[s.index] =
          o.status === 'failed'
            ? {
                success: false,
                message: failureReason(o),
                contact: values[s.index].to,
                messageId: id,
                status: 'failed',
                code: o.errorCode,
              }
            : {
                success: true,
                message: o.status === 'queued' ? TEMPLATE_QUEUED : TEMPLATE_SENT,
                contact: s.contact,
                messageId: id,
                status: o.status,
              };
      });
    }
    const final = results as TemplateResultItem[];
    const allOk = final.every((r) => r.success);
    return { httpStatus: allOk ? 200 : 207, body: { message: allOk ? ALL_SENT : SOME_FAILED, results: final } };
  }

  /**
   * For automations too: one validated session message (see validateSessionBody) as an OutboundMessage for
   * SendQueueService, or the reason it cannot be sent (the contact opted out).
   */
  async prepareSession(
    accountId: string,
    phone: PhoneNumber,
    value: SessionMessageBody,
    idempotencyKey: string | null = null,
  ): Promise<{ ok: true; message: OutboundMessage } | { ok: false; reason: string }> {
    // a customer known only by a business-scoped user id (WhatsApp usernames) is addressed by that id
    const number = recipientOf(value.receipentPhone);
    if (!number) return { ok: false, reason: 'receipentPhone is not a phone number with country code' };
    const userId = isUserId(number) ? number : null;
    const { contact } = userId
      ? await this.contacts.findOrCreateByWhatsAppUser(accountId, userId, null, value.receipentName)
      : await this.contacts.findOrCreateByNumber(accountId, number, value.receipentName);
    if (contact.isBlocked) return { ok: false, reason: CONTACT_OPTED_OUT };
    const { kind, payload } = sessionPayload(number, value);
    return {
      ok: true,
      message: this.outbound(accountId, phone, contact.id, number, value, {
        kind,
        payload,
        body: value.message || null,
        idempotencyKey,
      }),
    };
  }

  /**
   * For campaigns and automations too: resolves one template message (approved template, variables, contact, opt-out)
   * into an OutboundMessage for SendQueueService.enqueueBulk, or the reason it cannot be sent (nothing is stored then).
   * `phone` is a PhoneNumber row of the account (see `phoneOf` / AccountsService.findPhoneNumber).
   */
  async prepareTemplate(
    accountId: string,
    phone: PhoneNumber,
    m: TemplateMessageBody,
    idempotencyKey: string | null = null,
    templateCache = new Map<string, Promise<FindForSend>>(),
  ): Promise<
    | { ok: true; message: OutboundMessage; contact: { contact_id: number; contact_number: string } }
    | { ok: false; reason: string }
  > {
    if (!templateCache.has(m.templateName))
      templateCache.set(m.templateName, this.templates.findApprovedForSend(accountId, m.templateName));
    const found = await templateCache.get(m.templateName)!;
    if (!found.ok) return { ok: false, reason: found.reason };
    const elsewhere = await templateElsewhere(this.accounts, found.template.phoneNumberId, phone);
    if (elsewhere) return { ok: false, reason: elsewhere };
    const template = found.template as unknown as TemplateForSend;
    const built = buildTemplateComponents(template, m);
    if (!built.ok) return { ok: false, reason: built.reason };
    const number = normalizePhone(m.to);
    if (!number) return { ok: false, reason: 'to is not a phone number with country code' };
    const { contact } = await this.contacts.findOrCreateByNumber(accountId, number, m.receipentName);
    if (contact.isBlocked) return { ok: false, reason: CONTACT_OPTED_OUT };
    const payload = templateMessage(number, template.name, template.language, built.components);
    return {
      ok: true,
      contact: { contact_id: Number(contact.id), contact_number: contact.contactNumber ?? number },
      message: this.outbound(accountId, phone, contact.id, number, m, {
        kind: 'template',
        templateName: template.name,
        payload,
        body: built.bodyText.length ? built.bodyText.join(' | ') : null,
        idempotencyKey,
      }),
    };
  }

  /**
   * 422 when the Idempotency-Key already named another message (another recipient, number or Cloud API body):
   * answering with the first message would report as sent a message that never was (IETF
   * draft-ietf-httpapi-idempotency-key-header: 422 for a key reused with a different request). Nothing is stored.
   */
  private async refuseReusedKeys(
    messages: OutboundMessage[],
    key: string | undefined,
    bulk: boolean,
    indexes = messages.map((_, i) => i),
  ): Promise<void> {
    if (!key) return;
    const [reused] = await this.sends.keysUsedForOtherMessages(messages);
    if (!reused) return;
    const item = bulk ? ` (item [${indexes[reused.index]}], key ${reused.key})` : '';
    throw new UnprocessableEntityException({
      statusCode: 422,
      message: `Idempotency-Key ${key} was already used for another message${item} to ${reused.recipient}: use a new key for a new message`,
      field: 'Idempotency-Key',
    });
  }

  /** Whether a send under this Idempotency-Key was already accepted: a retry of it replays its answer. */
  keyUsed(accountId: string, idempotencyKey: string): Promise<boolean> {
    return this.sends.keyUsed(accountId, idempotencyKey);
  }

  /** The account's connected number by messagingPhoneId, or 404. */
  async phoneOf(accountId: string, messagingPhoneId: string): Promise<PhoneNumber> {
    const phone = await this.accounts.findPhoneNumber(accountId, messagingPhoneId);
    if (!phone) throw new NotFoundException({ success: false, message: phoneNotFound(messagingPhoneId) });
    return phone;
  }

  /** SSRF guard at send time (scheme, literal and resolved addresses); checked again when the callback connects. */
  private async checkCallbackTargets(values: Array<{ callback_url?: string }>, prefix: string): Promise<void> {
    const urls = [...new Set(values.map((v) => v.callback_url).filter((u): u is string => !!u))];
    for (const url of urls) {
      try {
        await assertPublicTarget(url, { allowPrivate: this.config.ALLOW_PRIVATE_NETWORK_TARGETS });
      } catch (error) {
        const field = prefix
          ? `${prefix.replace('[i].', `[${values.findIndex((v) => v.callback_url === url)}].`)}callback_url`
          : 'callback_url';
        const reason =
          (error as NodeJS.ErrnoException).code === 'ENOTFOUND'
            ? 'its host does not resolve'
            : (error as Error).message;
        throw new BadRequestException({
          statusCode: 400,
          message: `${field} is not allowed: ${reason}`,
          errors: [{ field, message: reason }],
        });
      }
    }
  }

  private outbound(
    accountId: string,
    phone: PhoneNumber,
    contactId: string,
    recipient: string,
    m: SessionMessageBody | TemplateMessageBody,
    rest: Pick<OutboundMessage, 'kind' | 'payload'> & Partial<OutboundMessage>,
  ): OutboundMessage {
    return {
      accountId,
      phoneNumberId: phone.id,
      contactId,
      recipient,
      callbackUrl: m.callback_url || null,
      callbackEvents: callbackEventsOf(m),
      ...rest,
    };
  }
}
