import { clipText, FieldError, forbiddenTextProblem, normalizePhone, PHONE_FORMAT_HINT } from '@switchboard/core';
import { DELIMITERS } from './import-file';

/** Which column of the file fills which contact field: header names (matched without regard to case or spaces). */
export interface ColumnMapping {
  number: string;
  name?: string | null;
  email?: string | null;
  /** custom field key → column */
  custom?: Record<string, string>;
}

export type ExistingContacts = 'skip' | 'update';

/** The form fields of POST /v2/contacts/imports, checked. */
export interface ImportSettings {
  mapping: ColumnMapping | null;
  groupIds: string[];
  existing: ExistingContacts;
  delimiter: string | null;
}

const CUSTOM_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Header names a column is recognised by when no mapping is sent. */
const AUTO_COLUMNS: Record<'number' | 'name' | 'email', RegExp> = {
  number: /^(phone|phone ?number|number|contact ?number|mobile|mobile ?number|whats ?app|whatsapp ?number|msisdn)$/,
  name: /^(name|full ?name|contact ?name)$/,
  email: /^(e-?mail|email ?address)$/,
};

const key = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, ' ');

/** Checks the form fields (text values of a multipart form); every problem names its field. */
export function parseImportSettings(fields: Record<string, string>): { value?: ImportSettings; errors: FieldError[] } {
  const errors: FieldError[] = [];
  // multipart fields pass the shared body rules by: NUL and half surrogates are refused here, naming the field
  for (const [field, value] of Object.entries(fields)) {
    const problem = forbiddenTextProblem(value, field);
    if (problem) return { errors: [problem] };
  }
  let mapping: ColumnMapping | null = null;
  if (fields.mapping !== undefined && fields.mapping.trim() !== '') {
    let raw: unknown;
    try {
      raw = JSON.parse(fields.mapping);
    } catch {
      errors.push({ field: 'mapping', message: 'mapping must be JSON: {"number": "<column>", "name": …}' });
    }
    const problem = raw === undefined ? undefined : forbiddenTextProblem(raw, 'mapping');
    if (problem) errors.push(problem);
    else if (raw !== undefined) mapping = checkMapping(raw, errors);
  }
  const groupIds: string[] = [];
  if (fields.group_ids !== undefined && fields.group_ids.trim() !== '') {
    const text = fields.group_ids.trim();
    let list: unknown;
    try {
      list = text.startsWith('[') ? JSON.parse(text) : text.split(',').map((s) => s.trim());
    } catch {
      list = null;
    }
    if (!Array.isArray(list)) errors.push({ field: 'group_ids', message: 'group_ids must be a list of group ids' });
    else
      list.forEach((id, i) => {
        const s = typeof id === 'number' || typeof id === 'string' ? String(id) : '';
        if (!/^[1-9]\d{0,15}$/.test(s))
          errors.push({ field: `group_ids[${i}]`, message: `group_ids[${i}] must be a group id (a positive integer)` });
        else if (!groupIds.includes(s)) groupIds.push(s);
      });
  }
  const existing = (fields.existing ?? 'skip').trim() || 'skip';
  if (existing !== 'skip' && existing !== 'update')
    errors.push({ field: 'existing', message: 'existing must be skip or update' });
  let delimiter: string | null = null;
  if (fields.delimiter !== undefined && fields.delimiter !== '') {
    const d = fields.delimiter === '\\t' || fields.delimiter.toLowerCase() === 'tab' ? '\t' : fields.delimiter;
    if (!(DELIMITERS as readonly string[]).includes(d))
      errors.push({ field: 'delimiter', message: 'delimiter must be one of , ; | or tab' });
    else delimiter = d;
  }
  if (errors.length) return { errors };
  return { value: { mapping, groupIds, existing: existing as ExistingContacts, delimiter }, errors };
}

function checkMapping(raw: unknown, errors: FieldError[]): ColumnMapping | null {
  if (!isObject(raw)) {
    errors.push({ field: 'mapping', message: 'mapping must be an object: {"number": "<column>", "name": …}' });
    return null;
  }
  const text = (k: string, required: boolean): string | null => {
    const v = raw[k];
    if (v === undefined || v === null || v === '') {
      if (required)
        errors.push({ field: `mapping.${k}`, message: `mapping.${k} is required: the column of the number` });
      return null;
    }
    if (typeof v !== 'string' || v.length > 200) {
      errors.push({ field: `mapping.${k}`, message: `mapping.${k} must be a column name` });
      return null;
    }
    return v;
  };
  const mapping: ColumnMapping = {
    number: text('number', true) ?? '',
    name: text('name', false),
    email: text('email', false),
  };
  if (raw.custom !== undefined && raw.custom !== null) {
    if (!isObject(raw.custom)) errors.push({ field: 'mapping.custom', message: 'mapping.custom must be an object' });
    else {
      mapping.custom = {};
      for (const [k, v] of Object.entries(raw.custom)) {
        if (!CUSTOM_KEY.test(k))
          errors.push({
            field: `mapping.custom.${k}`,
            message: `mapping.custom: ${JSON.stringify(k)} is not a field name (letters, digits, _; at most 64)`,
          });
        else if (typeof v !== 'string' || !v)
          errors.push({ field: `mapping.custom.${k}`, message: `mapping.custom.${k} must be a column name` });
        else mapping.custom[k] = v;
      }
    }
  }
  for (const k of Object.keys(raw))
    if (!['number', 'name', 'email', 'custom'].includes(k))
      errors.push({ field: `mapping.${k}`, message: `mapping.${k} is not a field: use number, name, email, custom` });
  return mapping;
}

/** Column indexes of the mapped fields in the file's header. */
export interface ResolvedMapping {
  number: number;
  name: number | null;
  email: number | null;
  custom: Array<[string, number]>;
  /** the mapping as applied (auto-detected columns filled in) */
  mapping: ColumnMapping;
}

/**
 * Finds the mapped columns in the header row (without a mapping: the columns named phone / number / mobile, name,
 * email). A column that is not there refuses the file, naming the header it found (a wrong delimiter shows here).
 */
export function resolveMapping(header: string[], mapping: ColumnMapping | null): ResolvedMapping | string {
  const keys = header.map(key);
  const shown = () =>
    header.length === 1
      ? `the header row has one column, ${JSON.stringify(header[0])}: is the file separated by , ; tab or | ?`
      : `the header row has ${header.map((h) => JSON.stringify(h)).join(', ')}`;
  if (!header.length || keys.every((k) => k === '')) return 'the file has no header row';
  const find = (column: string) => keys.indexOf(key(column));
  if (!mapping) {
    const auto = (field: keyof typeof AUTO_COLUMNS) => keys.findIndex((k) => AUTO_COLUMNS[field].test(k));
    const number = auto('number');
    if (number < 0) return `no column of phone numbers found (name one in mapping.number); ${shown()}`;
    const name = auto('name');
    const email = auto('email');
    return {
      number,
      name: name >= 0 ? name : null,
      email: email >= 0 ? email : null,
      custom: [],
      mapping: {
        number: header[number],
        name: name >= 0 ? header[name] : null,
        email: email >= 0 ? header[email] : null,
      },
    };
  }
  const missing: string[] = [];
  const at = (column: string | null | undefined): number | null => {
    if (!column) return null;
    const i = find(column);
    if (i < 0) missing.push(column);
    return i < 0 ? null : i;
  };
  const resolved: ResolvedMapping = {
    number: at(mapping.number) ?? -1,
    name: at(mapping.name),
    email: at(mapping.email),
    custom: Object.entries(mapping.custom ?? {}).map(([k, column]) => [k, at(column) ?? -1]),
    mapping,
  };
  if (missing.length)
    return `mapped column${missing.length > 1 ? 's' : ''} ${missing.map((m) => JSON.stringify(m)).join(', ')} not found: ${shown()}`;
  return resolved;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** One data row turned into a contact, or the reason it is rejected. */
export type RowOutcome =
  | { ok: true; number: string; name: string | null; email: string | null; custom: Record<string, string> | null }
  | { ok: false; reason: string };

export function contactOfRow(cells: string[], m: ResolvedMapping): RowOutcome {
  const raw = cells[m.number] ?? '';
  if (!raw) return { ok: false, reason: 'number is missing' };
  const number = normalizePhone(raw);
  if (!number)
    return { ok: false, reason: `bad number: ${JSON.stringify(raw.slice(0, 60))} is not ${PHONE_FORMAT_HINT}` };
  // cut without splitting an emoji: half of one failed the whole batch's JSON (and the import)
  const name = m.name !== null ? clipText(cells[m.name] ?? '', 200) || null : null;
  let email: string | null = null;
  if (m.email !== null && cells[m.email]) {
    email = cells[m.email];
    if (email.length > 320 || !EMAIL.test(email))
      return { ok: false, reason: `bad email: ${JSON.stringify(email.slice(0, 60))} is not an email address` };
  }
  let custom: Record<string, string> | null = null;
  for (const [k, i] of m.custom) {
    const v = cells[i];
    if (v) (custom ??= {})[k] = clipText(v, 2000);
  }
  return { ok: true, number, name, email, custom };
}
