/**
 * Flow definitions (SPEC §2 Flow): validation of the client's `{name, categories, screens}` and its translation to
 * Meta's Flow JSON. Pure: no Nest, no I/O.
 */
import type { FieldError } from '@switchboard/core';

export const FLOW_CATEGORIES = [
  'SIGN_UP',
  'SIGN_IN',
  'APPOINTMENT_BOOKING',
  'LEAD_GENERATION',
  'CONTACT_US',
  'CUSTOMER_SUPPORT',
  'SURVEY',
  'OTHER',
] as const;
export type FlowCategoryValue = (typeof FLOW_CATEGORIES)[number];

/** The Flow JSON version we generate. */
export const FLOW_JSON_VERSION = '6.0';
/** Footer labels the service adds when a screen has none. */
export const DEFAULT_NEXT_LABEL = 'Continue';
export const DEFAULT_SUBMIT_LABEL = 'Submit';

export const INPUT_TYPES = ['text', 'email', 'number', 'phone', 'passcode', 'password'] as const;
/** Meta: screen ids are letters and underscores; we ask for the conventional upper case. SUCCESS is reserved by Meta. */
export const SCREEN_ID = /^[A-Z][A-Z_]{0,99}$/;
/** Field names end up in `${form.<name>}` bindings and as keys of the completed form's reply. */
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,79}$/;
/** Meta: at most 50 components per screen. */
export const MAX_CHILDREN = 50;
/** Reserved: the completed form's reply carries the flow_token next to the fields. */
const RESERVED_FIELD_NAMES = new Set(['flow_token']);

const TEXT_TYPES = ['TextHeading', 'TextSubheading', 'TextBody'] as const;
const CHOICE_TYPES = ['Dropdown', 'RadioButtonsGroup', 'CheckboxGroup'] as const;
const MEDIA_TYPES = ['PhotoPicker', 'DocumentPicker'] as const;
export const FIELD_TYPES = [
  ...TEXT_TYPES,
  'TextInput',
  'TextArea',
  ...CHOICE_TYPES,
  'DatePicker',
  'OptIn',
  ...MEDIA_TYPES,
  'Footer',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Members each field type accepts (besides `type`); anything else is a 400 naming the member (typos such as `inputType`). */
const MEMBERS: Record<FieldType, { required: string[]; optional: string[] }> = {
  TextHeading: { required: ['text'], optional: [] },
  TextSubheading: { required: ['text'], optional: [] },
  TextBody: { required: ['text'], optional: [] },
  TextInput: { required: ['name', 'label', 'input-type'], optional: ['required', 'helper-text', 'pattern'] },
  TextArea: { required: ['name', 'label'], optional: ['required', 'helper-text'] },
  Dropdown: { required: ['name', 'label', 'options'], optional: ['required'] },
  RadioButtonsGroup: { required: ['name', 'label', 'options'], optional: ['required'] },
  CheckboxGroup: { required: ['name', 'label', 'options'], optional: ['required'] },
  DatePicker: { required: ['name', 'label'], optional: ['required', 'helper-text'] },
  OptIn: { required: ['name', 'label'], optional: ['required'] },
  PhotoPicker: { required: ['name', 'label'], optional: ['description'] },
  DocumentPicker: { required: ['name', 'label'], optional: ['description'] },
  Footer: { required: ['label'], optional: [] },
};

export interface FieldObject {
  type: FieldType;
  [member: string]: unknown;
}

export interface FlowScreen {
  id: string;
  title: string;
  layout: { type?: 'SingleColumnLayout'; children: FieldObject[] };
}

/** A definition as accepted (SPEC §2): what `definition` holds in GET /v2/flows/{flow_id}. */
export interface FlowDefinition {
  name: string;
  categories: FlowCategoryValue[];
  screens: FlowScreen[];
}

/** An input field of the form (what the completed form's reply carries). */
export interface InputField {
  name: string;
  type: FieldType;
  screen: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

export interface ValidateOptions {
  /** `update` may omit name and categories (the stored ones stay). */
  partial?: boolean;
  /** prefix of every error path; `flow` by default */
  path?: string;
}

/**
 * Checks a definition: name, categories from the SPEC list, ≥ 1 screen with a unique upper-case id and a title, and every
 * field object of the SPEC types with its required members. Errors name the screen, the field and the member
 * (`flow.screens[0].layout.children[2].input-type`). Field names are unique within the flow (the completed form's reply
 * carries every field by name, so a name on two screens would collide).
 */
export function validateDefinition(
  input: unknown,
  options: ValidateOptions = {},
): Checked<{ name?: string; categories?: FlowCategoryValue[]; screens: FlowScreen[] }> {
  const root = options.path ?? 'flow';
  const errors: FieldError[] = [];
  const err = (field: string, message: string) => errors.push({ field, message: `${field} ${message}` });
  if (!isObj(input))
    return { ok: false, errors: [{ field: root, message: `${root} must be an object {name, categories, screens}` }] };

  const known = new Set(['name', 'categories', 'screens']);
  for (const key of Object.keys(input))
    if (!known.has(key)) err(`${root}.${key}`, 'is not a flow member (name, categories, screens)');

  let name: string | undefined;
  if (input.name !== undefined || !options.partial) {
    if (!nonEmptyString(input.name)) err(`${root}.name`, 'is required (non-empty string)');
    else if (input.name.length > 200) err(`${root}.name`, 'must be at most 200 characters');
    else name = input.name.trim();
  }

  let categories: FlowCategoryValue[] | undefined;
  if (input.categories !== undefined || !options.partial) {
    const c = input.categories;
    if (!Array.isArray(c) || c.length === 0)
      err(`${root}.categories`, `must be a non-empty array of ${FLOW_CATEGORIES.join(', ')}`);
    else {
      c.forEach((v, i) => {
        if (!(FLOW_CATEGORIES as readonly unknown[]).includes(v))
          err(`${root}.categories[${i}]`, `must be one of ${FLOW_CATEGORIES.join(', ')}`);
      });
      if (new Set(c).size !== c.length) err(`${root}.categories`, 'must not repeat a category');
      categories = c as FlowCategoryValue[];
    }
  }

  const screens: FlowScreen[] = [];
  if (!Array.isArray(input.screens) || input.screens.length === 0) {
    err(`${root}.screens`, 'must be a non-empty array of screens {id, title, layout: {children}}');
  } else {
    const screenIds = new Map<string, number>();
    const fieldNames = new Map<string, string>(); // name → path where first defined
    const last = input.screens.length - 1;
    input.screens.forEach((s: unknown, si: number) => {
      const sp = `${root}.screens[${si}]`;
      if (!isObj(s)) return err(sp, 'must be an object {id, title, layout: {children}}');
      for (const key of Object.keys(s))
        if (!['id', 'title', 'layout'].includes(key)) err(`${sp}.${key}`, 'is not a screen member (id, title, layout)');
      if (!nonEmptyString(s.id)) err(`${sp}.id`, 'is required (string)');
      else if (!SCREEN_ID.test(s.id))
        err(`${sp}.id`, 'must be upper-case letters and underscores, starting with a letter (e.g. CONTACT_DETAILS)');
      else if (s.id === 'SUCCESS') err(`${sp}.id`, 'SUCCESS is reserved by the platform');
      else if (screenIds.has(s.id)) err(`${sp}.id`, `must be unique: ${s.id} is also screens[${screenIds.get(s.id)}]`);
      else screenIds.set(s.id, si);
      if (!nonEmptyString(s.title)) err(`${sp}.title`, 'is required (non-empty string)');
      else if (s.title.length > 100) err(`${sp}.title`, 'must be at most 100 characters');

      const layout = s.layout;
      if (!isObj(layout)) return err(`${sp}.layout`, 'is required: {children: [field objects]}');
      for (const key of Object.keys(layout))
        if (!['type', 'children'].includes(key)) err(`${sp}.layout.${key}`, 'is not a layout member (type, children)');
      if (layout.type !== undefined && layout.type !== 'SingleColumnLayout')
        err(`${sp}.layout.type`, 'must be SingleColumnLayout');
      if (!Array.isArray(layout.children) || layout.children.length === 0)
        return err(`${sp}.layout.children`, 'must be a non-empty array of field objects');
      if (layout.children.length > MAX_CHILDREN)
        return err(
          `${sp}.layout.children`,
          `must have at most ${MAX_CHILDREN} field objects (the platform's limit per screen)`,
        );

      const namesHere = new Set<string>();
      let footers = 0;
      let mediaPickers = 0;
      const children: FieldObject[] = [];
      layout.children.forEach((f: unknown, fi: number) => {
        const fp = `${sp}.layout.children[${fi}]`;
        if (!isObj(f)) return err(fp, 'must be a field object {type, ...}');
        if (!(FIELD_TYPES as readonly unknown[]).includes(f.type))
          return err(`${fp}.type`, `must be one of ${FIELD_TYPES.join(', ')}`);
        const type = f.type as FieldType;
        const members = MEMBERS[type];
        for (const key of Object.keys(f)) {
          if (key !== 'type' && !members.required.includes(key) && !members.optional.includes(key)) {
            err(
              `${fp}.${key}`,
              `is not a member of ${type} (${[...members.required, ...members.optional].join(', ')})`,
            );
          }
        }
        for (const m of members.required) if (f[m] === undefined) err(`${fp}.${m}`, `is required for ${type}`);

        for (const m of ['text', 'label', 'helper-text', 'description'] as const) {
          if (f[m] !== undefined && !nonEmptyString(f[m])) err(`${fp}.${m}`, 'must be a non-empty string');
        }
        if (f.required !== undefined && typeof f.required !== 'boolean') err(`${fp}.required`, 'must be a boolean');
        if (f['input-type'] !== undefined && !(INPUT_TYPES as readonly unknown[]).includes(f['input-type'])) {
          err(`${fp}.input-type`, `must be one of ${INPUT_TYPES.join(', ')}`);
        }
        if (f.pattern !== undefined) {
          if (!nonEmptyString(f.pattern)) err(`${fp}.pattern`, 'must be a non-empty string (a regular expression)');
          else {
            try {
              new RegExp(f.pattern);
            } catch {
              err(`${fp}.pattern`, 'is not a valid regular expression');
            }
          }
        }
        if (f.options !== undefined) {
          if (!Array.isArray(f.options) || f.options.length === 0)
            err(`${fp}.options`, 'must be a non-empty array of {id, title}');
          else {
            const ids = new Set<string>();
            f.options.forEach((o: unknown, oi: number) => {
              const op = `${fp}.options[${oi}]`;
              if (!isObj(o)) return err(op, 'must be an object {id, title}');
              for (const key of Object.keys(o))
                if (key !== 'id' && key !== 'title') err(`${op}.${key}`, 'is not an option member (id, title)');
              if (!nonEmptyString(o.id)) err(`${op}.id`, 'is required (non-empty string)');
              else if (ids.has(o.id)) err(`${op}.id`, `must be unique within the options: ${o.id} is repeated`);
              else ids.add(o.id);
              if (!nonEmptyString(o.title)) err(`${op}.title`, 'is required (non-empty string)');
            });
          }
        }
        if (f.name !== undefined) {
          if (!nonEmptyString(f.name) || !FIELD_NAME.test(f.name)) {
            err(
              `${fp}.name`,
              'must be letters, digits and underscores, starting with a letter or underscore (at most 80)',
            );
          } else if (RESERVED_FIELD_NAMES.has(f.name)) {
            err(`${fp}.name`, `${f.name} is reserved (the completed form's reply carries it)`);
          } else if (namesHere.has(f.name)) {
            err(`${fp}.name`, `must be unique within the screen: ${f.name} is repeated`);
          } else if (fieldNames.has(f.name)) {
            err(
              `${fp}.name`,
              `must be unique within the flow: ${f.name} is also ${fieldNames.get(f.name)} (the completed form carries every field by name)`,
            );
          } else {
            namesHere.add(f.name);
            fieldNames.set(f.name, `${fp}.name`);
          }
        }
        if (type === 'Footer' && ++footers > 1) err(`${fp}.type`, 'a screen has at most one Footer');
        if ((MEDIA_TYPES as readonly string[]).includes(type)) {
          if (si !== last)
            err(
              `${fp}.type`,
              `${type} is only allowed on the last screen (the platform passes media only with the completed form)`,
            );
          else if (++mediaPickers > 1)
            err(
              `${fp}.type`,
              'a screen has at most one PhotoPicker or DocumentPicker (the platform allows one media picker per screen)',
            );
        }
        children.push(f as FieldObject);
      });
      if (nonEmptyString(s.id) && nonEmptyString(s.title))
        screens.push({ id: s.id, title: s.title, layout: { children } });
    });
  }

  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    value: { ...(name !== undefined ? { name } : {}), ...(categories ? { categories } : {}), screens },
  };
}

/** The input fields of a definition in screen order (every field whose type carries a `name`). */
export function inputFields(screens: FlowScreen[]): InputField[] {
  return screens.flatMap((s) =>
    s.layout.children
      .filter((f) => typeof f.name === 'string' && f.type !== 'Footer')
      .map((f) => ({ name: f.name as string, type: f.type, screen: s.id })),
  );
}

/** How a carried field is declared in the `data` of the screens after the one that collects it. */
function dataDeclaration(type: FieldType): Record<string, unknown> {
  switch (type) {
    case 'CheckboxGroup':
      return { type: 'array', items: { type: 'string' }, __example__: [] };
    case 'OptIn':
      return { type: 'boolean', __example__: false };
    default:
      return { type: 'string', __example__: 'Example' };
  }
}

/** One field object in Meta's shape (members renamed where Meta's differ: options → data-source). */
function translateField(f: FieldObject): Record<string, unknown> {
  const out: Record<string, unknown> = { type: f.type };
  for (const [key, value] of Object.entries(f)) {
    if (key === 'type') continue;
    if (key === 'options')
      out['data-source'] = (value as Array<{ id: string; title: string }>).map((o) => ({ id: o.id, title: o.title }));
    else out[key] = value;
  }
  return out;
}

/**
 * Meta's Flow JSON for a validated definition:
 * - `version` FLOW_JSON_VERSION; each screen `{id, title, layout: {type: SingleColumnLayout, children}}`, the last one `terminal: true, success: true`;
 * - every screen ends with a Footer (the client's label, else `Continue`, or `Submit` on the last screen);
 * - a non-last screen's Footer navigates to the next screen carrying every field collected so far (`${form.x}` from this
 *   screen, `${data.x}` from earlier ones), and the next screen declares them in its `data`;
 * - the last screen's Footer completes the flow with a payload carrying every input field of the flow, so the
 *   completed form's reply (`nfm_reply.response_json`) has them all, next to the flow_token.
 */
export function toFlowJson(screens: FlowScreen[]): Record<string, unknown> {
  const carried: InputField[] = [];
  const out = screens.map((s, i) => {
    const isLast = i === screens.length - 1;
    const own = s.layout.children
      .filter((f) => typeof f.name === 'string' && f.type !== 'Footer')
      .map((f) => ({ name: f.name as string, type: f.type, screen: s.id }));
    const footer = s.layout.children.find((f) => f.type === 'Footer');
    const payload: Record<string, string> = {};
    for (const f of carried) payload[f.name] = `\${data.${f.name}}`;
    for (const f of own) payload[f.name] = `\${form.${f.name}}`;
    const action = isLast
      ? { name: 'complete', payload }
      : { name: 'navigate', next: { type: 'screen', name: screens[i + 1].id }, payload };
    const children = s.layout.children.filter((f) => f.type !== 'Footer').map(translateField);
    children.push({
      type: 'Footer',
      label: (footer?.label as string | undefined) ?? (isLast ? DEFAULT_SUBMIT_LABEL : DEFAULT_NEXT_LABEL),
      'on-click-action': action,
    });
    const screen: Record<string, unknown> = { id: s.id, title: s.title };
    if (isLast) {
      screen.terminal = true;
      screen.success = true;
    }
    if (carried.length) screen.data = Object.fromEntries(carried.map((f) => [f.name, dataDeclaration(f.type)]));
    screen.layout = { type: 'SingleColumnLayout', children };
    carried.push(...own);
    return screen;
  });
  return { version: FLOW_JSON_VERSION, screens: out };
}
