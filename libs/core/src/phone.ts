/**
 * Phone numbers (SPEC §1 rule 3): always with the country code; a leading `+` or the international call
 * prefix `00` is optional; spaces, dashes, dots and parentheses are tolerated as formatting.
 * Stored and returned as digits only (E.164 without the `+`).
 */

/** E.164: at most 15 digits; fewer than 8 (country code included) is not a reachable WhatsApp number. */
export const PHONE_MIN_DIGITS = 8;
export const PHONE_MAX_DIGITS = 15;

/** Longest formatted input we look at; anything longer is not a phone number. */
const MAX_INPUT_LENGTH = 40;

const ALLOWED = /^\+?[0-9 \t.()-]+$/;
const E164_DIGITS = /^[1-9][0-9]{7,14}$/;

export const PHONE_FORMAT_HINT = `a phone number with country code (${PHONE_MIN_DIGITS} to ${PHONE_MAX_DIGITS} digits, e.g. +1 555 010 2030)`;

/**
 * Returns the number as digits only (`15550102030`), or null when the input is not a plausible
 * international number. Accepted: `+1 (555) 010-2030`, `0015550102030`, `1 555.010.2030`, `15550102030`.
 * `4915112345678.0` (a float's rendering) is `4915112345678`.
 * Rejected: letters or other characters, a `+` anywhere but first, `+00…`, a national number starting
 * with 0, unbalanced parentheses, fewer than 8 or more than 15 digits.
 */
export function normalizePhone(input: unknown): string | null {
  if (typeof input === 'number') {
    if (!Number.isSafeInteger(input) || input <= 0) return null;
    input = String(input);
  }
  if (typeof input !== 'string') return null;
  // `4915112345678.0`: a number column read as floats (pandas, Python's str(float)) writes this. The dot would be
  // taken as formatting and the 0 kept: another, valid number, a stranger's.
  const text = input.trim().replace(/^(\+?\d+)\.0+$/, '$1');
  if (!text || text.length > MAX_INPUT_LENGTH || !ALLOWED.test(text)) return null;
  if (!parenthesesBalanced(text)) return null;

  const digits = phoneDigits(text);
  return E164_DIGITS.test(digits) ? digits : null;
}

/**
 * The digits a formatted number (or a part of one, as typed in a search) stands for, by the rules of normalizePhone,
 * without its checks: `+44 (0)20 7946` → `44207946`, `0044 20` → `4420`.
 */
export function phoneDigits(text: string): string {
  const international = text.startsWith('+') || text.startsWith('00');
  // `+44 (0)20 7946 0958`: the `(0)` is the trunk prefix dialled only at home (UK, DE, CH, AT…), never after the
  // country code. Kept, it made a second contact under digits no one can reach.
  const digits = (international ? text.replace(/\(\s*0\s*\)/, '') : text).replace(/[^0-9]/g, '');
  // `00` is the international call prefix (ITU): 0015550102030 is +1 555 010 2030. Not after a `+`.
  return !text.startsWith('+') && digits.startsWith('00') ? digits.slice(2) : digits;
}

/** True when normalizePhone accepts the input. */
export function isPlausiblePhone(input: unknown): boolean {
  return normalizePhone(input) !== null;
}

function parenthesesBalanced(text: string): boolean {
  let depth = 0;
  for (const ch of text) {
    if (ch === '(') depth++;
    else if (ch === ')' && --depth < 0) return false;
    if (depth > 1) return false;
  }
  return depth === 0;
}

/**
 * The other forms one WhatsApp user's number can take where dialling rules changed after WhatsApp ids were given out,
 * so a WhatsApp id (`wa_id`, the `from` of their messages) may differ from the number people dial and store:
 * - Mexico: a mobile's id may keep the `1` after 52 that dialling from abroad no longer uses (`521 55…` ↔ `52 55…`);
 * - Brazil: a mobile's id may lack the `9` added in front of 8-digit mobile numbers (`55 11 9 8765…` ↔ `55 11 8765…`;
 *   mobiles start 6–9 after the area code, landlines 2–5);
 * - Argentina: a mobile's id has a `9` after 54 that numbers are often written without (`54 9 11…` ↔ `54 11…`).
 * Digits in, digits out; empty for every other number.
 */
export function otherWhatsAppForms(number: string): string[] {
  let m = /^52(1?)(\d{10})$/.exec(number);
  if (m) return [m[1] ? `52${m[2]}` : `521${m[2]}`];
  m = /^55(\d{2})(9?)([6-9]\d{7})$/.exec(number);
  if (m) return [m[2] ? `55${m[1]}${m[3]}` : `55${m[1]}9${m[3]}`];
  m = /^54(9?)(\d{10})$/.exec(number);
  if (m) return [m[1] ? `54${m[2]}` : `549${m[2]}`];
  return [];
}
