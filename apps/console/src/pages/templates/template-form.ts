import { compileComponents, placeholdersOf, templateFieldErrors, type RuleError } from '@switchboard/template-rules';

/**
 * The template form's state and its translation to the API's components (SPEC §4 client shape), checked by the
 * server's own rules (libs/templates/src/template-rules.ts, bundled as is). Errors come back keyed by form field:
 * `template_name`, `language`, `category`, `header`, `body`, `example.<variable>`, `footer`, `buttons`, `button.<i>`.
 */
export type HeaderKind = 'none' | 'text' | 'image' | 'video' | 'document';
export type ButtonKind = 'quick_reply' | 'url' | 'phone';

export interface ButtonForm {
  kind: ButtonKind;
  text: string;
  /** URL (may end with {{...}}) or phone number */
  target: string;
}

export interface TemplateForm {
  template_name: string;
  language: string;
  category: string;
  messagingPhoneId: string;
  categoryChangeAllowed: boolean;
  header: { kind: HeaderKind; text: string; link: string };
  body: string;
  /** example value of each body variable, by name */
  examples: Record<string, string>;
  footer: string;
  buttons: ButtonForm[];
}

export function emptyForm(messagingPhoneId = ''): TemplateForm {
  return {
    template_name: '',
    language: 'en_US',
    category: 'MARKETING',
    messagingPhoneId,
    categoryChangeAllowed: false,
    header: { kind: 'none', text: '', link: '' },
    body: '',
    examples: {},
    footer: '',
    buttons: [],
  };
}

type Section = 'header' | 'body' | 'footer' | 'buttons';

/** The body's variables, in order of first appearance (the same rule as the server). */
export function variablesOf(form: TemplateForm): string[] {
  return placeholdersOf(form.body).names;
}

/** The components the API takes, and which form section each index came from. */
export function toComponents(form: TemplateForm): { components: unknown[]; sections: Section[] } {
  const components: unknown[] = [];
  const sections: Section[] = [];
  const text = (t: string) => [{ type: 'text', text: t }];
  const { kind } = form.header;
  if (kind === 'text') {
    components.push({ type: 'header', parameters: text(form.header.text) });
    sections.push('header');
  } else if (kind !== 'none') {
    components.push({ type: kind, [kind]: { link: form.header.link } });
    sections.push('header');
  }
  components.push({
    type: 'body',
    parameters: [
      ...text(form.body),
      ...variablesOf(form).map((name) => ({
        type: 'variable',
        variable: { text: name, value: form.examples[name] ?? '' },
      })),
    ],
  });
  sections.push('body');
  if (form.footer !== '') {
    components.push({ type: 'footer', parameters: text(form.footer) });
    sections.push('footer');
  }
  if (form.buttons.length) {
    components.push({
      type: 'button',
      parameters: form.buttons.map((b) =>
        b.kind === 'quick_reply'
          ? { type: 'quick_reply', quick_reply: { value: b.text } }
          : { type: 'cta', cta: { text: b.kind === 'url' ? 'URL' : 'Phone', value: b.text, url: b.target } },
      ),
    });
    sections.push('buttons');
  }
  return { components, sections };
}

/** The form a stored template's components describe (the edit form); unknown shapes are left out. */
export function fromComponents(base: TemplateForm, components: unknown[]): TemplateForm {
  const form: TemplateForm = { ...base, header: { kind: 'none', text: '', link: '' }, examples: {}, buttons: [] };
  const obj = (v: unknown): Record<string, any> => (v && typeof v === 'object' ? (v as Record<string, any>) : {});
  for (const raw of components) {
    const c = obj(raw);
    const first = obj(Array.isArray(c.parameters) ? c.parameters[0] : undefined);
    if (c.type === 'header') form.header = { kind: 'text', text: String(first.text ?? ''), link: '' };
    else if (c.type === 'image' || c.type === 'video' || c.type === 'document')
      form.header = { kind: c.type, text: '', link: String(obj(c[c.type]).link ?? '') };
    else if (c.type === 'body') {
      form.body = String(first.text ?? '');
      for (const p of (c.parameters as unknown[]).slice(1)) {
        const v = obj(obj(p).variable);
        if (typeof v.text === 'string') form.examples[v.text] = String(v.value ?? '');
      }
    } else if (c.type === 'footer') form.footer = String(first.text ?? '');
    else if (c.type === 'button' && Array.isArray(c.parameters)) {
      for (const b of c.parameters.map(obj)) {
        if (b.type === 'quick_reply')
          form.buttons.push({ kind: 'quick_reply', text: String(obj(b.quick_reply).value ?? ''), target: '' });
        else if (b.type === 'cta') {
          const cta = obj(b.cta);
          const kind = String(cta.text ?? '').toLowerCase() === 'phone' ? 'phone' : 'url';
          form.buttons.push({ kind, text: String(cta.value ?? ''), target: String(cta.url ?? '') });
        }
      }
    }
  }
  return form;
}

/** A rule error's field (`components[1].parameters[2].variable.value`) as the form field it belongs to. */
export function formFieldOf(field: string, form: TemplateForm, sections: Section[]): string {
  const m = /^components\[(\d+)\](.*)$/.exec(field);
  if (!m) return field === 'components' ? 'body' : field;
  const section = sections[Number(m[1])];
  const rest = m[2];
  if (section === 'body') {
    const v = /^\.parameters\[(\d+)\]\.variable/.exec(rest);
    const name = v ? variablesOf(form)[Number(v[1]) - 1] : undefined;
    return name ? `example.${name}` : 'body';
  }
  if (section === 'buttons') {
    const b = /^\.parameters\[(\d+)\]/.exec(rest);
    return b ? `button.${b[1]}` : 'buttons';
  }
  return section ?? 'body';
}

/** Every problem of the form, keyed by form field (first message per field): the server's rules, run here. */
export function formErrors(form: TemplateForm, mode: 'create' | 'edit'): Record<string, string> {
  const { components, sections } = toComponents(form);
  const errors: RuleError[] = mode === 'create' ? templateFieldErrors(form) : [];
  if (mode === 'create' && !form.messagingPhoneId)
    errors.push({ field: 'messagingPhoneId', message: 'messagingPhoneId is required (string)' });
  const compiled = compileComponents(components);
  if (!compiled.ok) errors.push(...compiled.errors);
  return keyed(errors, form, sections);
}

/** Rule errors (ours or the server's 400 `errors[]`) keyed by form field, first message per field. */
export function keyed(errors: RuleError[], form: TemplateForm, sections = toComponents(form).sections) {
  const out: Record<string, string> = {};
  for (const e of errors) {
    const key = formFieldOf(e.field, form, sections);
    out[key] ??= e.message;
  }
  return out;
}

/** The request body of POST /templates/create (create) or PUT /templates/update (edit). */
export function requestBody(form: TemplateForm, mode: 'create' | 'edit') {
  const { components } = toComponents(form);
  if (mode === 'edit') return { components, category: form.category };
  return {
    template_name: form.template_name,
    category: form.category,
    language: form.language,
    messagingPhoneId: form.messagingPhoneId,
    categoryChangeAllowed: form.categoryChangeAllowed,
    components,
  };
}
