import { normalizePhone } from '@switchboard/core';
import { recipientOf } from '@switchboard/messaging';

/**
 * Contact binding of webhook-started runs: the first of these payload fields that holds a phone number
 * (string or number, accepted by the one phone rule of libs/core, `normalizePhone`: country code, optional `+` or
 * `00`, formatting tolerated) becomes the run's contact phone
 * (`{{contact.phone}}`, and the key replies are routed by):
 *
 *   phone, phoneNumber, phone_number, contact.phone, contact.phoneNumber, contact.phone_number,
 *   customer.phone, customer.phoneNumber
 *
 * `contact.name` / `contact.email` (or `name` / `email` at the top level) fill the contact's name and email.
 * A run bound to no phone this way is bound by the driver to the recipient of its first message.
 */
export const CONTACT_PHONE_PATHS = [
  ['phone'],
  ['phoneNumber'],
  ['phone_number'],
  ['contact', 'phone'],
  ['contact', 'phoneNumber'],
  ['contact', 'phone_number'],
  ['customer', 'phone'],
  ['customer', 'phoneNumber'],
] as const;

/**
 * A customer key as stored on runs and messages: a business-scoped user id as given (`US.1349…`, a customer known
 * only by a WhatsApp username: its digits alone named nobody, and the run failed at its first send), else the
 * normalised phone (`0049 151 …` → `49151…`), else the digits.
 */
export function digitsOnly(value: string): string {
  return recipientOf(value) ?? value.replace(/\D/g, '');
}

function get(obj: unknown, path: readonly string[]): unknown {
  let current = obj;
  for (const key of path) {
    if (
      current === null ||
      typeof current !== 'object' ||
      Array.isArray(current) ||
      !Object.prototype.hasOwnProperty.call(current, key)
    )
      return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function phoneOf(value: unknown): string | null {
  return normalizePhone(value);
}

export interface BoundContact {
  phone?: string;
  name?: string;
  email?: string;
}

/** The run's contact from a webhook payload; `{}` when the payload names no phone. */
export function contactFromPayload(payload: unknown): BoundContact {
  for (const path of CONTACT_PHONE_PATHS) {
    const phone = phoneOf(get(payload, path));
    if (!phone) continue;
    const contact: BoundContact = { phone };
    const owner = path.length === 2 ? get(payload, [path[0]]) : payload;
    const name = get(owner, ['name']);
    const email = get(owner, ['email']);
    if (typeof name === 'string' && name.trim()) contact.name = name.trim();
    if (typeof email === 'string' && email.trim()) contact.email = email.trim();
    return contact;
  }
  return {};
}

/**
 * The contact a run starts with (`start(definition, { payload, contact })`), from its row: the payload's bound
 * contact (name, email), the row's phone and contact id. Keyword runs: the payload is the inbound message and
 * its top-level `name` is the sender's profile name. Used by both drivers.
 */
export function startContactOf(run: {
  payload: unknown;
  contact_phone: string | null;
  contact_id: string | null;
}): Record<string, string> {
  const bound = contactFromPayload(run.payload);
  const contact: Record<string, string> = {};
  const top = (run.payload ?? {}) as Record<string, unknown>;
  const name =
    bound.name ?? (!bound.phone && typeof top.name === 'string' && top.name.trim() ? top.name.trim() : undefined);
  if (name) contact.name = name;
  if (bound.email) contact.email = bound.email;
  if (run.contact_phone) contact.phone = run.contact_phone;
  if (run.contact_id) contact.id = run.contact_id;
  return contact;
}
