import type { FieldError } from '@switchboard/core';
import { normalizePhone, PHONE_FORMAT_HINT } from '@switchboard/core';
import {
  BUSINESS_SCOPED_USER_ID,
  buttonsMessage,
  ctaUrlMessage,
  mediaMessage,
  textMessage,
  type InteractiveHeader,
  type SendMessageRequest,
} from '@switchboard/whatsapp';
import { CALLBACK_EVENTS } from '../callbacks/callbacks.service';
import { ctaLinkIndex } from './template-payload';

/**
 * Validation of the two send bodies (SPEC §4 Messages). Structural problems are 400s naming the field
 * (`receipentPhone`, `[3].to`, `buttons[1].text`, ...); per-message business failures of template sends
 * (unknown template, variable count, opted-out contact) are reported in the 207 results instead.
 */
type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const nonEmpty = (v: unknown): v is string => isStr(v) && v.trim().length > 0;

export const SESSION_TYPES = ['normal_message', 'quick_reply', 'cta'] as const;
export const FILE_TYPES = ['image', 'video', 'document'] as const;
const HEADER_TYPES = ['text', 'image', 'video', 'document'] as const;
const LIMITS = {
  text: 4096,
  caption: 1024,
  interactiveBody: 1024,
  buttonTitle: 20,
  buttonId: 256,
  buttons: 3,
  ctaText: 20,
  headerText: 60,
  fileName: 240,
  name: 200,
  url: 2000,
};

/** A customer known only by a business-scoped user id (WhatsApp usernames): addressed with `recipient`. */
export function isUserId(value: unknown): value is string {
  return isStr(value) && BUSINESS_SCOPED_USER_ID.test(value.trim());
}

/** Whom a recipient field names: a business-scoped user id as given (trimmed), else the phone normalized; null: neither. */
export function recipientOf(value: string): string | null {
  return isUserId(value) ? value.trim() : normalizePhone(value);
}

/** How the platform addresses a contact: the number, or the business-scoped user id of a contact known only by it. */
export function customerOf(c: { contactNumber: string | null; whatsappUserId?: string | null }): string {
  return (c.contactNumber ?? c.whatsappUserId)!;
}

export function isHttpUrl(value: unknown): value is string {
  if (!isStr(value) || value.length > LIMITS.url) return false;
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
  } catch {
    return false;
  }
}

export interface CallbackFields {
  callback_url?: string;
  event?: string[];
}

function checkCallback(body: Json, at: (f: string) => string, errors: FieldError[]) {
  if (body.callback_url !== undefined && body.callback_url !== null && !isHttpUrl(body.callback_url)) {
    errors.push({ field: at('callback_url'), message: `${at('callback_url')} must be an http(s) URL` });
  }
  if (body.event !== undefined && body.event !== null) {
    if (!Array.isArray(body.event) || body.event.some((e) => !CALLBACK_EVENTS.includes(e as never))) {
      errors.push({ field: at('event'), message: `${at('event')} must be an array of: ${CALLBACK_EVENTS.join(', ')}` });
    } else if (body.event.length && !body.callback_url) {
      errors.push({ field: at('callback_url'), message: `${at('callback_url')} is required when event is given` });
    }
  }
  if (
    body.receipentName !== undefined &&
    body.receipentName !== null &&
    (!isStr(body.receipentName) || body.receipentName.length > LIMITS.name)
  ) {
    errors.push({
      field: at('receipentName'),
      message: `${at('receipentName')} must be a string of at most ${LIMITS.name} characters`,
    });
  }
}

/** Events a message subscribes to: exactly the ones listed in `event` (SPEC §6: only kinds listed are sent). */
export function callbackEventsOf(body: CallbackFields): string[] {
  if (!body.callback_url) return [];
  return [...new Set(body.event ?? [])];
}

// ------------------------------------------------------------------ session messages

export interface SessionMessageBody extends CallbackFields {
  typOfmsg: (typeof SESSION_TYPES)[number];
  receipentPhone: string;
  message: string;
  mediaUrl?: string;
  fileType?: (typeof FILE_TYPES)[number];
  fileName?: string;
  /** quick_reply: `id` is what WhatsApp returns when the button is tapped (default: its text); cta: `url` */
  buttons?: Array<{ text: string; id?: string; url?: string }>;
  header?: { type: (typeof HEADER_TYPES)[number]; text?: string; url?: string };
  receipentName?: string;
}

export function validateSessionBody(body: unknown): { value?: SessionMessageBody; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!isObj(body)) return { errors: [{ field: 'body', message: 'body must be a JSON object' }] };
  const at = (f: string) => f;
  if (!SESSION_TYPES.includes(body.typOfmsg as never))
    errors.push({ field: 'typOfmsg', message: `typOfmsg must be one of: ${SESSION_TYPES.join(', ')}` });
  if (!nonEmpty(body.receipentPhone) && typeof body.receipentPhone !== 'number')
    errors.push({ field: 'receipentPhone', message: 'receipentPhone is required' });
  else if (!normalizePhone(body.receipentPhone) && !isUserId(body.receipentPhone)) {
    errors.push({
      field: 'receipentPhone',
      message: `receipentPhone must be ${PHONE_FORMAT_HINT} or a WhatsApp business-scoped user id (e.g. US.13491208655302741918)`,
    });
  }
  const type = body.typOfmsg;
  const media = body.mediaUrl !== undefined && body.mediaUrl !== null && body.mediaUrl !== '';
  const max = type === 'normal_message' ? (media ? LIMITS.caption : LIMITS.text) : LIMITS.interactiveBody;
  if (
    !nonEmpty(body.message) &&
    !(type === 'normal_message' && media && (body.message === undefined || body.message === ''))
  ) {
    errors.push({ field: 'message', message: 'message is required (the text, or the caption of a media message)' });
  } else if (isStr(body.message) && body.message.length > max) {
    errors.push({ field: 'message', message: `message must be at most ${max} characters` });
  }
  if (type === 'normal_message') {
    if (media) {
      if (!isHttpUrl(body.mediaUrl))
        errors.push({ field: 'mediaUrl', message: 'mediaUrl must be a public http(s) URL' });
      if (!FILE_TYPES.includes(body.fileType as never))
        errors.push({
          field: 'fileType',
          message: `fileType is required with mediaUrl: one of ${FILE_TYPES.join(', ')}`,
        });
    } else if (body.fileType !== undefined && body.fileType !== null) {
      errors.push({ field: 'mediaUrl', message: 'mediaUrl is required with fileType' });
    }
    if (
      body.fileName !== undefined &&
      body.fileName !== null &&
      (!isStr(body.fileName) || body.fileName.length > LIMITS.fileName)
    ) {
      errors.push({ field: 'fileName', message: `fileName must be a string of at most ${LIMITS.fileName} characters` });
    }
  }
  if (type === 'quick_reply' || type === 'cta') {
    const buttons = body.buttons;
    if (!Array.isArray(buttons) || buttons.length === 0) {
      errors.push({ field: 'buttons', message: `buttons is required for ${type}: a non-empty array` });
    } else if (type === 'quick_reply') {
      if (buttons.length > LIMITS.buttons)
        errors.push({ field: 'buttons', message: `quick_reply allows at most ${LIMITS.buttons} buttons` });
      const seen = new Set<string>(); // titles and ids, each unique in a message (Meta)
      buttons.forEach((b, i) => {
        if (!isObj(b) || !nonEmpty(b.text) || b.text.length > LIMITS.buttonTitle) {
          errors.push({
            field: `buttons[${i}].text`,
            message: `buttons[${i}].text is required, at most ${LIMITS.buttonTitle} characters`,
          });
        } else if (b.id !== undefined && (!nonEmpty(b.id) || b.id.length > LIMITS.buttonId)) {
          errors.push({
            field: `buttons[${i}].id`,
            message: `buttons[${i}].id must be text of at most ${LIMITS.buttonId} characters`,
          });
        } else if (seen.has(`title:${b.text}`)) {
          errors.push({ field: `buttons[${i}].text`, message: `buttons[${i}].text repeats "${b.text}"` });
        } else if (seen.has(`id:${b.id ?? b.text}`)) {
          const field = b.id === undefined ? 'text' : 'id';
          errors.push({
            field: `buttons[${i}].${field}`,
            message: `buttons[${i}].${field} repeats "${b.id ?? b.text}"`,
          });
        } else seen.add(`title:${b.text}`).add(`id:${b.id ?? b.text}`);
      });
    } else {
      const b = buttons[0];
      if (!isObj(b) || !nonEmpty(b.text) || b.text.length > LIMITS.ctaText)
        errors.push({
          field: 'buttons[0].text',
          message: `buttons[0].text is required, at most ${LIMITS.ctaText} characters`,
        });
      if (!isObj(b) || !isHttpUrl(b.url))
        errors.push({ field: 'buttons[0].url', message: 'buttons[0].url must be an http(s) URL' });
    }
    const header = body.header;
    if (header !== undefined && header !== null) {
      if (!isObj(header) || !HEADER_TYPES.includes(header.type as never)) {
        errors.push({ field: 'header.type', message: `header.type must be one of: ${HEADER_TYPES.join(', ')}` });
      } else if (header.type === 'text') {
        if (!nonEmpty(header.text) || header.text.length > LIMITS.headerText)
          errors.push({
            field: 'header.text',
            message: `header.text is required, at most ${LIMITS.headerText} characters`,
          });
      } else if (!isHttpUrl(header.url)) {
        errors.push({ field: 'header.url', message: `header.url must be an http(s) URL of the ${header.type}` });
      }
    }
  }
  checkCallback(body, at, errors);
  return errors.length ? { errors } : { value: body as unknown as SessionMessageBody, errors };
}

/** The Cloud API request body of a session message (to = digits), from libs/whatsapp's builders. */
export function sessionPayload(to: string, m: SessionMessageBody): { kind: string; payload: SendMessageRequest } {
  if (m.typOfmsg === 'normal_message') {
    if (m.mediaUrl) {
      const type = m.fileType!;
      const payload = mediaMessage(to, type, m.mediaUrl, {
        ...(m.message ? { caption: m.message } : {}),
        ...(type === 'document' && m.fileName ? { filename: m.fileName } : {}),
      });
      return { kind: type, payload };
    }
    return { kind: 'text', payload: textMessage(to, m.message, { previewUrl: /https?:\/\//.test(m.message) }) };
  }
  const header: InteractiveHeader | undefined = m.header
    ? m.header.type === 'text'
      ? { type: 'text', text: m.header.text }
      : { type: m.header.type, [m.header.type]: { link: m.header.url } }
    : undefined;
  const parts = { body: m.message, ...(header ? { header } : {}) };
  const payload =
    m.typOfmsg === 'quick_reply'
      ? buttonsMessage(to, {
          ...parts,
          buttons: m.buttons!.slice(0, 3).map((b) => ({ id: b.id ?? b.text, title: b.text })),
        })
      : ctaUrlMessage(to, { ...parts, displayText: m.buttons![0].text, url: m.buttons![0].url! });
  return { kind: 'interactive', payload };
}

// ------------------------------------------------------------------ template messages

export interface TemplateMessageBody extends CallbackFields {
  templateName: string;
  to: string;
  receipentName?: string;
  variables?: Record<string, unknown>;
  mediaUrl?: string;
  documentName?: string;
  carouselData?: Array<Record<string, unknown>>;
}

export function validateTemplateItem(
  body: unknown,
  prefix: string,
): { value?: TemplateMessageBody; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const at = (f: string) => (prefix ? `${prefix}.${f}` : f);
  if (!isObj(body))
    return { errors: [{ field: prefix || 'body', message: `${prefix || 'body'} must be a JSON object` }] };
  if (!nonEmpty(body.templateName))
    errors.push({ field: at('templateName'), message: `${at('templateName')} is required` });
  if (!nonEmpty(body.to) && typeof body.to !== 'number')
    errors.push({ field: at('to'), message: `${at('to')} is required` });
  else if (!normalizePhone(body.to))
    errors.push({ field: at('to'), message: `${at('to')} must be ${PHONE_FORMAT_HINT}` });
  if (body.variables !== undefined && body.variables !== null) {
    if (!isObj(body.variables))
      errors.push({ field: at('variables'), message: `${at('variables')} must be an object` });
    else
      for (const [k, v] of Object.entries(body.variables)) {
        if (!['string', 'number', 'boolean'].includes(typeof v))
          errors.push({ field: at(`variables.${k}`), message: `${at(`variables.${k}`)} must be a string or a number` });
      }
  }
  if (body.mediaUrl !== undefined && body.mediaUrl !== null && body.mediaUrl !== '' && !isHttpUrl(body.mediaUrl)) {
    errors.push({ field: at('mediaUrl'), message: `${at('mediaUrl')} must be a public http(s) URL` });
  }
  if (
    body.documentName !== undefined &&
    body.documentName !== null &&
    (!isStr(body.documentName) || body.documentName.length > LIMITS.fileName)
  ) {
    errors.push({
      field: at('documentName'),
      message: `${at('documentName')} must be a string of at most ${LIMITS.fileName} characters`,
    });
  }
  if (body.carouselData !== undefined && body.carouselData !== null) {
    if (!Array.isArray(body.carouselData) || body.carouselData.some((c) => !isObj(c)))
      errors.push({ field: at('carouselData'), message: `${at('carouselData')} must be an array of objects` });
    else
      body.carouselData.forEach((c, i) => {
        if ((c as Json).mediaUrl !== undefined && !isHttpUrl((c as Json).mediaUrl))
          errors.push({
            field: at(`carouselData[${i}].mediaUrl`),
            message: `${at(`carouselData[${i}].mediaUrl`)} must be an http(s) URL`,
          });
        for (const [k, v] of Object.entries(c as Json))
          if (ctaLinkIndex(k) !== null && v !== undefined && v !== null && !['string', 'number'].includes(typeof v))
            errors.push({
              field: at(`carouselData[${i}].${k}`),
              message: `${at(`carouselData[${i}].${k}`)} must be a string or a number`,
            });
      });
  }
  checkCallback(body, at, errors);
  return errors.length ? { errors } : { value: body as unknown as TemplateMessageBody, errors };
}
