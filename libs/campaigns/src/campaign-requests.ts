import { CALLBACK_EVENTS } from '@switchboard/messaging';
import { clipText, FieldError, isCalendarTime, normalizePhone, PHONE_FORMAT_HINT } from '@switchboard/core';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isHttpUrl = (v: unknown): v is string => {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

export interface CreateCampaignInput {
  name: string;
  messagingPhoneId: string;
  templateName: string;
  variables: Record<string, string | FieldVariable>;
  mediaUrl: string | null;
  documentName: string | null;
  groupIds: string[];
  callbackUrl: string | null;
  events: string[];
  scheduledAt: Date | null;
}

/** A per-contact variable: a contact field (`name`, `email`, `custom.<key>`) with the text used when it is empty. */
export interface FieldVariable {
  field: string;
  fallback: string;
}
const CONTACT_FIELD = /^(name|email|custom\.[A-Za-z_][A-Za-z0-9_]{0,63})$/;

export function isFieldVariable(v: unknown): v is FieldVariable {
  return isObject(v) && typeof v.field === 'string' && typeof v.fallback === 'string';
}

/** What a contact offers to per-contact variables. */
export interface VariableContact {
  name?: string | null;
  email?: string | null;
  customFields?: Record<string, unknown> | null;
}

/** The campaign's variables for one contact: constants as they are, contact fields from the contact or their fallback. */
export function resolveVariables(
  variables: Record<string, unknown>,
  contact: VariableContact | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(variables ?? {})) {
    if (!isFieldVariable(v)) {
      out[k] = String(v);
      continue;
    }
    let value: unknown;
    if (v.field === 'name') value = contact?.name;
    else if (v.field === 'email') value = contact?.email;
    else value = contact?.customFields?.[v.field.slice('custom.'.length)];
    const text = value === null || value === undefined ? '' : String(value).trim();
    out[k] = text || v.fallback;
  }
  return out;
}

/** True when some variable is taken from the contact (the message is built per contact); `prefix`: from such a field. */
export function hasFieldVariables(variables: Record<string, unknown>, prefix = ''): boolean {
  return Object.values(variables ?? {}).some((v) => isFieldVariable(v) && v.field.startsWith(prefix));
}

/** Campaign variables: text (numbers and booleans written as text) or {field, fallback}; keys keep their order. */
function checkCampaignVariables(
  value: unknown,
  field: string,
  errors: FieldError[],
): Record<string, string | FieldVariable> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) return checkVariables(value, field, errors);
  const out: Record<string, string | FieldVariable> = {};
  for (const [k, v] of Object.entries(value)) {
    if (isObject(v)) {
      if (typeof v.field !== 'string' || !CONTACT_FIELD.test(v.field))
        errors.push({
          field: `${field}.${k}.field`,
          message: `${field}.${k}.field must be a contact field: name, email or custom.<key>`,
        });
      else if (typeof v.fallback !== 'string' || !v.fallback.trim() || v.fallback.length > 1000)
        errors.push({
          field: `${field}.${k}.fallback`,
          message: `${field}.${k}.fallback is required: the text used when the contact's ${v.field} is empty (1 to 1000 characters)`,
        });
      else out[k] = { field: v.field, fallback: v.fallback };
    } else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else if (v !== null && v !== undefined)
      errors.push({ field: `${field}.${k}`, message: `${field}.${k} must be text or {field, fallback}` });
  }
  return out;
}

/** `scheduledAt`: an ISO 8601 time with its offset, in the future, within a year. */
export function checkScheduledAt(value: unknown, errors: FieldError[], now = Date.now()): Date | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value : '';
  // as clients write it: up to nanoseconds (Go), 7 digits (.NET), microseconds (Python), a `+0100` offset, a space for T
  const parts = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2})?)(\.\d{1,9})?([Zz]|[+-]\d{2}:?\d{2})$/.exec(text);
  const iso = parts
    ? `${parts[1]}T${parts[2]}${(parts[3] ?? '').slice(0, 4)}${parts[4].toUpperCase().replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')}`
    : '';
  const at = parts ? new Date(iso) : null;
  if (!at || Number.isNaN(at.getTime()) || !isCalendarTime(iso)) {
    errors.push({
      field: 'scheduledAt',
      message: 'scheduledAt must be an ISO 8601 time with its offset, e.g. 2026-12-01T09:00:00Z',
    });
    return null;
  }
  if (at.getTime() <= now) {
    errors.push({ field: 'scheduledAt', message: `scheduledAt must be in the future (it is ${at.toISOString()})` });
    return null;
  }
  if (at.getTime() > now + 366 * 24 * 3600_000) {
    errors.push({ field: 'scheduledAt', message: 'scheduledAt must be within a year' });
    return null;
  }
  return at;
}

/** Variable values are text (numbers and booleans are accepted and written as text); keys keep their order. */
function checkVariables(value: unknown, field: string, errors: FieldError[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    errors.push({
      field,
      message: `${field} must be an object of text values (keys name, email, custom*, cta_link*, code)`,
    });
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else if (v !== null && v !== undefined)
      errors.push({ field: `${field}.${k}`, message: `${field}.${k} must be text` });
  }
  return out;
}

function optionalText(body: Record<string, unknown>, key: string, errors: FieldError[], max = 2000): string | null {
  const v = body[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > max) {
    errors.push({ field: key, message: `${key} must be text of at most ${max} characters` });
    return null;
  }
  return v;
}

/** POST /v2/campaigns body: every field checked, every problem reported with its field. */
export function validateCreateCampaign(raw: unknown): { value?: CreateCampaignInput; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (!isObject(raw)) return { errors: [{ field: 'body', message: 'body must be a JSON object' }] };
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (!name || name.length > 200)
    errors.push({ field: 'name', message: 'name is required: text of 1 to 200 characters' });
  const messagingPhoneId =
    typeof raw.messagingPhoneId === 'string' || typeof raw.messagingPhoneId === 'number'
      ? String(raw.messagingPhoneId)
      : '';
  if (!messagingPhoneId)
    errors.push({
      field: 'messagingPhoneId',
      message: 'messagingPhoneId is required: a connected number (see GET /account/get)',
    });
  const templateName = typeof raw.templateName === 'string' ? raw.templateName.trim() : '';
  if (!templateName)
    errors.push({ field: 'templateName', message: 'templateName is required: an APPROVED template of this account' });
  const variables = checkCampaignVariables(raw.variables, 'variables', errors);
  const scheduledAt = checkScheduledAt(raw.scheduledAt, errors);
  const mediaUrl = optionalText(raw, 'mediaUrl', errors);
  if (mediaUrl && !isHttpUrl(mediaUrl)) errors.push({ field: 'mediaUrl', message: 'mediaUrl must be an http(s) URL' });
  const documentName = optionalText(raw, 'documentName', errors, 240);
  const groupIds: string[] = [];
  const g = raw.group_ids;
  if (g !== undefined && g !== null) {
    if (!Array.isArray(g))
      errors.push({ field: 'group_ids', message: 'group_ids must be an array of group ids (integers)' });
    else
      g.forEach((id, i) => {
        const s = typeof id === 'number' || typeof id === 'string' ? String(id) : '';
        if (!/^[1-9]\d{0,15}$/.test(s) || Number(s) > Number.MAX_SAFE_INTEGER)
          errors.push({ field: `group_ids[${i}]`, message: `group_ids[${i}] must be a group id (a positive integer)` });
        else if (!groupIds.includes(s)) groupIds.push(s);
      });
  }
  const callbackUrl = optionalText(raw, 'callback_url', errors);
  if (callbackUrl && !isHttpUrl(callbackUrl))
    errors.push({ field: 'callback_url', message: 'callback_url must be an http(s) URL' });
  let events: string[] = [];
  if (raw.event !== undefined && raw.event !== null) {
    if (!Array.isArray(raw.event) || raw.event.some((e) => !CALLBACK_EVENTS.includes(e as never))) {
      errors.push({ field: 'event', message: `event must be an array of: ${CALLBACK_EVENTS.join(', ')}` });
    } else {
      events = [...new Set(raw.event as string[])];
      if (events.length && !callbackUrl)
        errors.push({ field: 'callback_url', message: 'callback_url is required when event is given' });
    }
  }
  if (errors.length) return { errors };
  return {
    value: {
      name,
      messagingPhoneId,
      templateName,
      variables,
      mediaUrl,
      documentName,
      groupIds,
      callbackUrl,
      events,
      scheduledAt,
    },
    errors,
  };
}

export interface TriggerContact {
  index: number;
  number: string;
  name: string | null;
  email: string | null;
  variables: Record<string, string>;
}

/**
 * POST /campaigns/trigger_campaign-api/{id} body: `contacts` of {phoneNumber, name, email, variables}. All contacts are
 * checked before anything is written; each problem names its index and field (`contacts[3].phoneNumber`).
 */
export function validateTriggerBody(
  raw: unknown,
  maxContacts: number,
): { value?: TriggerContact[]; errors: FieldError[] } {
  if (!isObject(raw))
    return { errors: [{ field: 'body', message: 'body must be a JSON object with contacts (array)' }] };
  const list = raw.contacts;
  if (!Array.isArray(list) || list.length === 0)
    return {
      errors: [
        {
          field: 'contacts',
          message: 'contacts is required: a non-empty array of {phoneNumber, name, email, variables}',
        },
      ],
    };
  if (list.length > maxContacts)
    return {
      errors: [
        {
          field: 'contacts',
          message: `at most ${maxContacts} contacts per trigger (got ${list.length}); split the list`,
        },
      ],
    };
  const errors: FieldError[] = [];
  const contacts: TriggerContact[] = [];
  list.forEach((item, i) => {
    const at = `contacts[${i}]`;
    if (!isObject(item)) {
      errors.push({ field: at, message: `${at} must be an object {phoneNumber, name, email, variables}` });
      return;
    }
    const phone = item.phoneNumber;
    const number = normalizePhone(phone);
    if (!number) {
      const missing = phone === undefined || phone === null || phone === '';
      errors.push({
        field: `${at}.phoneNumber`,
        message: `${at}.phoneNumber ${missing ? 'is required' : 'must be'}: ${PHONE_FORMAT_HINT}`,
      });
    }
    let name: string | null = null;
    if (item.name !== undefined && item.name !== null) {
      if (typeof item.name !== 'string') errors.push({ field: `${at}.name`, message: `${at}.name must be text` });
      else name = clipText(item.name.trim(), 200) || null;
    }
    let email: string | null = null;
    if (item.email !== undefined && item.email !== null && item.email !== '') {
      if (
        typeof item.email !== 'string' ||
        !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(item.email.trim()) ||
        item.email.length > 320
      ) {
        errors.push({ field: `${at}.email`, message: `${at}.email must be an email address` });
      } else email = item.email.trim();
    }
    const variables = checkVariables(item.variables, `${at}.variables`, errors);
    if (number) contacts.push({ index: i, number, name, email, variables });
  });
  if (errors.length) return { errors };
  return { value: contacts, errors };
}

/** Per-contact variables over the campaign's defaults: the defaults' keys keep their place, new keys follow in the contact's order. */
export function mergeVariables(
  defaults: Record<string, unknown>,
  own: Record<string, unknown>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(defaults ?? {})) out[k] = String(v);
  for (const [k, v] of Object.entries(own ?? {})) out[k] = String(v);
  return out;
}
