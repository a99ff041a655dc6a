/**
 * Contact binding of webhook-started runs: the first of these payload fields that holds a phone number
 * (string or number, at least 6 digits once everything but digits is removed) becomes the run's contact phone
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

export function digitsOnly(value: string): string {
  return value.replace(/\D/g, '');
}

function get(obj: unknown, path: readonly string[]): unknown {
  let current = obj;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.prototype.hasOwnProperty.call(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function phoneOf(value: unknown): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const digits = digitsOnly(String(value));
  return digits.length >= 6 && digits.length <= 20 ? digits : null;
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
