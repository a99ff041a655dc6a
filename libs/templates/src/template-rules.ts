/**
 * The rules of a template (SPEC §4 components, name, language, category), shared by the server (DTO validation,
 * compile to Meta's shape) and the console (the same checks on the form, errors on the field, and the preview).
 * Pure TypeScript: it imports nothing, so the console bundles it as is (Vite alias `@switchboard/template-rules`).
 *
 * Client shape                                                   Meta shape
 * {type: header, parameters: [{type: text, text}]}               {type: HEADER, format: TEXT, text}
 * {type: image|video|document, image|video|document: {link}}     {type: HEADER, format: IMAGE|VIDEO|DOCUMENT, example: {header_handle: [link]}}
 * {type: body, parameters: [{type: text, text: 'Hi {{name}}'},   {type: BODY, text: 'Hi {{name}}',
 *   {type: variable, variable: {text: name, value: 'Ann'}}]}      example: {body_text_named_params: [{param_name: 'name', example: 'Ann'}]}}
 * {type: footer, parameters: [{type: text, text}]}               {type: FOOTER, text}
 * {type: button, parameters: [                                   {type: BUTTONS, buttons: [
 *   {type: quick_reply, quick_reply: {value}},                     {type: QUICK_REPLY, text},
 *   {type: cta, cta: {text: 'URL', value, url, example?}},         {type: URL, text, url, example?: [full url]},
 *   {type: cta, cta: {text: 'Phone', value, url: phone}}]}         {type: PHONE_NUMBER, text, phone_number}]}
 * {type: carousel, components: [{header, body, buttons}, ...]}   {type: CAROUSEL, cards: [{components: [HEADER, BODY, BUTTONS]}]}
 *
 * Templates are always created with `parameter_format: "NAMED"` (variables keep the names the client chose).
 */

/** One problem, named by its path in the request body (`components[1].parameters[2].variable.value`). */
export interface RuleError {
  field: string;
  message: string;
}

/** The part of Meta's template components these rules produce (a subset of libs/whatsapp's PlatformComponent). */
export type PlatformButton =
  | { type: 'QUICK_REPLY'; text: string }
  | { type: 'URL'; text: string; url: string; example?: string[] }
  | { type: 'PHONE_NUMBER'; text: string; phone_number: string };
export type PlatformComponent =
  | {
      type: 'HEADER';
      format: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT';
      text?: string;
      example?: { header_handle: string[] };
    }
  | { type: 'BODY'; text: string; example?: { body_text_named_params: Array<{ param_name: string; example: string }> } }
  | { type: 'FOOTER'; text: string }
  | { type: 'BUTTONS'; buttons: PlatformButton[] }
  | { type: 'CAROUSEL'; cards: Array<{ components: PlatformComponent[] }> };

// ------------------------------------------------------------------ name, language, category, status

export const TEMPLATE_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'] as const;
export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
export const TEMPLATE_NAME_MESSAGE = 'template_name must be 1 to 512 lowercase letters, digits or underscores';
/** `en`, `en_US`, `zh_HK`, `fil`, `es_419`-style codes as Meta lists them */
export const LANGUAGE_CODE = /^[a-z]{2,3}(_[A-Z]{2}|_[0-9]{3})?$/;
export const LANGUAGE_CODE_MESSAGE = 'language must be a language code such as en or en_US';
export const CATEGORY_MESSAGE = `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}`;

/** The checks of the create body's scalar fields (the DTO applies the same patterns and messages). */
export function templateFieldErrors(input: { template_name?: unknown; language?: unknown; category?: unknown }) {
  const errors: RuleError[] = [];
  if (typeof input.template_name !== 'string' || !TEMPLATE_NAME.test(input.template_name))
    errors.push({ field: 'template_name', message: TEMPLATE_NAME_MESSAGE });
  if (typeof input.category !== 'string' || !(TEMPLATE_CATEGORIES as readonly string[]).includes(input.category))
    errors.push({ field: 'category', message: CATEGORY_MESSAGE });
  if (typeof input.language !== 'string' || !LANGUAGE_CODE.test(input.language))
    errors.push({ field: 'language', message: LANGUAGE_CODE_MESSAGE });
  return errors;
}

// ------------------------------------------------------------------ components

export type HeaderType = 'none' | 'text' | 'image' | 'video' | 'document';

/** What a send needs to know about one button (index = Meta's button index within its BUTTONS component). */
export interface ButtonInfo {
  index: number;
  type: 'quick_reply' | 'url' | 'phone';
  text: string;
  url?: string;
  phone_number?: string;
  /** URL buttons whose url ends with a {{...}} placeholder: the send fills it (`cta_link`, `cta_link_0`, ...) */
  dynamic_suffix?: boolean;
}

export interface CarouselCardInfo {
  header_type: 'image' | 'video';
  media_link: string;
  body: string;
  buttons: ButtonInfo[];
}

export interface CompiledTemplate {
  /** Meta's components, as submitted */
  platformComponents: PlatformComponent[];
  /** body variable names in the order of their first appearance in the body text */
  variables: string[];
  headerType: HeaderType;
  buttons: ButtonInfo[];
  carousel: CarouselCardInfo[] | null;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

export const VARIABLE_NAME = /^[a-z_][a-z0-9_]*$/;
const PLACEHOLDER = /\{\{(.*?)\}\}/g;
const MEDIA_TYPES = ['image', 'video', 'document'] as const;
const LIMITS = {
  header: 60,
  body: 1024,
  footer: 60,
  buttonText: 25,
  url: 2000,
  buttons: 10,
  urlButtons: 2,
  phoneButtons: 1,
  cards: 10,
  cardBody: 160,
  cardButtons: 2,
};

/** Placeholders in order of first appearance; `bad` lists the ones that are not valid variable names. */
export function placeholdersOf(text: string): { names: string[]; bad: string[] } {
  const names: string[] = [];
  const bad: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    const name = m[1].trim();
    if (!VARIABLE_NAME.test(name)) bad.push(m[0]);
    else if (!names.includes(name)) names.push(name);
  }
  return { names, bad };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

class Collector {
  readonly errors: RuleError[] = [];
  add(field: string, message: string): void {
    this.errors.push({ field, message });
  }
}

/** `{type: text, text}` as the only (or first) parameter: returns the text or records an error. */
function textParameter(c: Json, at: string, label: string, max: number, errors: Collector): string | undefined {
  if (!Array.isArray(c.parameters) || c.parameters.length === 0) {
    errors.add(`${at}.parameters`, `${label} needs parameters: [{type: "text", text}]`);
    return undefined;
  }
  const p = c.parameters[0];
  if (!isObj(p) || p.type !== 'text' || !isText(p.text)) {
    errors.add(`${at}.parameters[0].text`, `${label} needs a first parameter {type: "text", text} with non-empty text`);
    return undefined;
  }
  if (p.text.length > max) {
    errors.add(`${at}.parameters[0].text`, `${label} text must be at most ${max} characters`);
    return undefined;
  }
  return p.text;
}

function mediaHeader(
  c: Json,
  at: string,
  errors: Collector,
): { format: 'IMAGE' | 'VIDEO' | 'DOCUMENT'; link: string } | undefined {
  const type = c.type as (typeof MEDIA_TYPES)[number];
  const media = c[type];
  if (!isObj(media) || !isText(media.link) || !isHttpUrl(media.link)) {
    errors.add(`${at}.${type}.link`, `a ${type} header needs ${type}: {link} with an http(s) URL of a sample`);
    return undefined;
  }
  return { format: type.toUpperCase() as 'IMAGE' | 'VIDEO' | 'DOCUMENT', link: media.link };
}

function body(
  c: Json,
  at: string,
  errors: Collector,
  opts: { variablesAllowed: boolean; max: number },
): { component: PlatformComponent; variables: string[]; text: string } | undefined {
  const text = textParameter(c, at, 'body', opts.max, errors);
  if (text === undefined) return undefined;
  const params = c.parameters as unknown[];
  const { names, bad } = placeholdersOf(text);
  const before = errors.errors.length;
  for (const b of bad)
    errors.add(
      `${at}.parameters[0].text`,
      `${b} is not a valid variable: use {{name}} with lowercase letters, digits and underscores`,
    );
  if (!opts.variablesAllowed && (names.length || params.length > 1)) {
    errors.add(`${at}.parameters`, 'variables are not supported here: use static text');
    return undefined;
  }
  const examples = new Map<string, string>();
  params.slice(1).forEach((p, k) => {
    const i = k + 1;
    if (!isObj(p) || p.type !== 'variable' || !isObj(p.variable)) {
      errors.add(
        `${at}.parameters[${i}]`,
        'after the text, each parameter must be {type: "variable", variable: {text: name, value: example}}',
      );
      return;
    }
    const name = p.variable.text;
    if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
      errors.add(
        `${at}.parameters[${i}].variable.text`,
        'variable name must be lowercase letters, digits and underscores, not starting with a digit',
      );
      return;
    }
    if (examples.has(name)) {
      errors.add(`${at}.parameters[${i}].variable.text`, `variable ${name} is listed more than once`);
      return;
    }
    if (!isText(p.variable.value)) {
      errors.add(`${at}.parameters[${i}].variable.value`, `variable ${name} needs an example value`);
      examples.set(name, '');
      return;
    }
    if (!names.includes(name)) {
      errors.add(`${at}.parameters[${i}].variable.text`, `variable ${name} is not used in the body text`);
      return;
    }
    examples.set(name, p.variable.value);
  });
  for (const name of names) {
    if (!examples.has(name))
      errors.add(
        `${at}.parameters`,
        `{{${name}}} in the body text needs a variable entry {type: "variable", variable: {text: "${name}", value: <example>}}`,
      );
  }
  const trimmed = text.trim();
  if (names.length && (/^\{\{[^}]*\}\}/.test(trimmed) || /\{\{[^}]*\}\}$/.test(trimmed))) {
    errors.add(`${at}.parameters[0].text`, 'the body text cannot start or end with a variable (a platform rule)');
  }
  if (errors.errors.length > before) return undefined;
  const component: PlatformComponent = names.length
    ? {
        type: 'BODY',
        text,
        example: { body_text_named_params: names.map((n) => ({ param_name: n, example: examples.get(n)! })) },
      }
    : { type: 'BODY', text };
  return { component, variables: names, text };
}

function buttons(
  c: Json,
  at: string,
  errors: Collector,
  maxButtons: number,
): { component: PlatformComponent; info: ButtonInfo[] } | undefined {
  if (!Array.isArray(c.parameters) || c.parameters.length === 0) {
    errors.add(`${at}.parameters`, 'button needs parameters: a non-empty list of buttons');
    return undefined;
  }
  const list = c.parameters as unknown[];
  if (list.length > maxButtons) {
    errors.add(`${at}.parameters`, `at most ${maxButtons} buttons are allowed (got ${list.length})`);
    return undefined;
  }
  const before = errors.errors.length;
  const out: PlatformButton[] = [];
  const info: ButtonInfo[] = [];
  const labels = new Set<string>();
  list.forEach((b, i) => {
    const bat = `${at}.parameters[${i}]`;
    const label = (field: string, value: unknown): string | undefined => {
      if (!isText(value) || value.length > LIMITS.buttonText) {
        errors.add(field, `button label is required, at most ${LIMITS.buttonText} characters`);
        return undefined;
      }
      if (labels.has(value)) {
        errors.add(field, `button label "${value}" is used twice`);
        return undefined;
      }
      labels.add(value);
      return value;
    };
    if (isObj(b) && b.type === 'quick_reply') {
      const text = label(`${bat}.quick_reply.value`, isObj(b.quick_reply) ? b.quick_reply.value : undefined);
      if (text === undefined) return;
      out.push({ type: 'QUICK_REPLY', text });
      info.push({ index: i, type: 'quick_reply', text });
      return;
    }
    if (isObj(b) && b.type === 'cta' && isObj(b.cta)) {
      const kind = String(b.cta.text ?? '').toLowerCase();
      if (kind !== 'url' && kind !== 'phone') {
        errors.add(`${bat}.cta.text`, 'cta.text must be "URL" or "Phone"');
        return;
      }
      const text = label(`${bat}.cta.value`, b.cta.value);
      if (text === undefined) return;
      const url = b.cta.url;
      if (kind === 'phone') {
        const phone = typeof url === 'string' ? url.replace(/[\s()-]/g, '') : '';
        if (!/^\+?[1-9]\d{6,19}$/.test(phone)) {
          errors.add(`${bat}.cta.url`, 'a Phone button needs url = the phone number with country code');
          return;
        }
        const phone_number = phone.startsWith('+') ? phone : `+${phone}`;
        out.push({ type: 'PHONE_NUMBER', text, phone_number });
        info.push({ index: i, type: 'phone', text, phone_number });
        return;
      }
      if (typeof url !== 'string' || url.length > LIMITS.url) {
        errors.add(`${bat}.cta.url`, `a URL button needs an http(s) url, at most ${LIMITS.url} characters`);
        return;
      }
      const holes = [...url.matchAll(PLACEHOLDER)];
      const dynamic = holes.length > 0;
      if (holes.length > 1 || (dynamic && !url.endsWith(holes[0][0]))) {
        errors.add(`${bat}.cta.url`, 'a URL button may have one {{...}} placeholder, at the end of the url');
        return;
      }
      const base = dynamic ? url.slice(0, url.length - holes[0][0].length) : url;
      if (!isHttpUrl(dynamic ? `${base}x` : url)) {
        errors.add(`${bat}.cta.url`, 'a URL button needs an http(s) url');
        return;
      }
      if (dynamic) {
        const example = b.cta.example === undefined ? `${base}example` : b.cta.example;
        if (typeof example !== 'string' || !example.startsWith(base) || !isHttpUrl(example)) {
          errors.add(
            `${bat}.cta.example`,
            'the example of a dynamic URL must be a full url starting with the fixed part',
          );
          return;
        }
        out.push({ type: 'URL', text, url: `${base}{{1}}`, example: [example] });
        info.push({ index: i, type: 'url', text, url: `${base}{{1}}`, dynamic_suffix: true });
      } else {
        out.push({ type: 'URL', text, url });
        info.push({ index: i, type: 'url', text, url, dynamic_suffix: false });
      }
      return;
    }
    errors.add(
      `${bat}.type`,
      'each button must be {type: "quick_reply", quick_reply: {value}} or {type: "cta", cta: {text: "URL"|"Phone", value, url}}',
    );
  });
  if (errors.errors.length > before) return undefined;
  const urls = info.filter((b) => b.type === 'url').length;
  const phones = info.filter((b) => b.type === 'phone').length;
  if (urls > LIMITS.urlButtons)
    errors.add(`${at}.parameters`, `at most ${LIMITS.urlButtons} URL buttons are allowed (got ${urls})`);
  if (phones > LIMITS.phoneButtons)
    errors.add(`${at}.parameters`, `at most ${LIMITS.phoneButtons} Phone button is allowed (got ${phones})`);
  const qr = info.map((b, i) => (b.type === 'quick_reply' ? i : -1)).filter((i) => i >= 0);
  if (qr.length && qr[qr.length - 1] - qr[0] !== qr.length - 1) {
    errors.add(
      `${at}.parameters`,
      'quick reply buttons must be grouped together (not mixed between URL/Phone buttons)',
    );
  }
  if (errors.errors.length > before) return undefined;
  return { component: { type: 'BUTTONS', buttons: out }, info };
}

function carousel(
  c: Json,
  at: string,
  errors: Collector,
): { component: PlatformComponent; cards: CarouselCardInfo[] } | undefined {
  if (!Array.isArray(c.components) || c.components.length === 0 || c.components.length > LIMITS.cards) {
    errors.add(`${at}.components`, `carousel needs components: 1 to ${LIMITS.cards} cards {header, body, buttons}`);
    return undefined;
  }
  const before = errors.errors.length;
  const cards: Array<{ components: PlatformComponent[] }> = [];
  const infos: CarouselCardInfo[] = [];
  (c.components as unknown[]).forEach((card, i) => {
    const cat = `${at}.components[${i}]`;
    if (!isObj(card)) {
      errors.add(cat, 'each card must be an object {header, body, buttons}');
      return;
    }
    const h = card.header;
    let header: { format: 'IMAGE' | 'VIDEO' | 'DOCUMENT'; link: string } | undefined;
    if (!isObj(h) || (h.type !== 'image' && h.type !== 'video'))
      errors.add(`${cat}.header`, 'a card needs header {type: "image"|"video", image|video: {link}}');
    else header = mediaHeader(h, `${cat}.header`, errors);
    const bodyC = isObj(card.body)
      ? body(card.body, `${cat}.body`, errors, { variablesAllowed: false, max: LIMITS.cardBody })
      : undefined;
    if (!isObj(card.body))
      errors.add(`${cat}.body`, 'a card needs body {type: "body", parameters: [{type: "text", text}]}');
    const btn = isObj(card.buttons) ? buttons(card.buttons, `${cat}.buttons`, errors, LIMITS.cardButtons) : undefined;
    if (!isObj(card.buttons))
      errors.add(`${cat}.buttons`, 'a card needs buttons {type: "button", parameters: [1 or 2 buttons]}');
    if (!header || !bodyC || !btn) return;
    cards.push({
      components: [
        { type: 'HEADER', format: header.format, example: { header_handle: [header.link] } },
        bodyC.component,
        btn.component,
      ],
    });
    infos.push({
      header_type: header.format.toLowerCase() as 'image' | 'video',
      media_link: header.link,
      body: bodyC.text,
      buttons: btn.info,
    });
  });
  if (errors.errors.length > before) return undefined;
  const shape = (x: CarouselCardInfo) => `${x.header_type}:${x.buttons.map((b) => b.type).join(',')}`;
  if (infos.some((x) => shape(x) !== shape(infos[0]))) {
    errors.add(`${at}.components`, 'every card must have the same header type and the same buttons (types and order)');
    return undefined;
  }
  return { component: { type: 'CAROUSEL', cards }, cards: infos };
}

/** Validates the client's components (SPEC §4) and compiles them to Meta's. Errors name the field, e.g. `components[1].parameters[2].variable.value`. */
export function compileComponents(
  components: unknown,
  field = 'components',
): { ok: true; value: CompiledTemplate } | { ok: false; errors: RuleError[] } {
  const errors = new Collector();
  if (!Array.isArray(components) || components.length === 0) {
    return { ok: false, errors: [{ field, message: `${field} must be a non-empty array` }] };
  }
  const seen = new Map<string, number>();
  let headerC: PlatformComponent | undefined;
  let headerType: HeaderType = 'none';
  let bodyR: ReturnType<typeof body>;
  let footerC: PlatformComponent | undefined;
  let buttonsR: ReturnType<typeof buttons>;
  let carouselR: ReturnType<typeof carousel>;

  components.forEach((c, i) => {
    const at = `${field}[${i}]`;
    if (!isObj(c) || typeof c.type !== 'string') {
      errors.add(
        `${at}.type`,
        'each component needs a type: header, image, video, document, body, footer, button or carousel',
      );
      return;
    }
    const slot = (MEDIA_TYPES as readonly string[]).includes(c.type) ? 'header' : c.type;
    if (seen.has(slot)) {
      errors.add(`${at}.type`, `only one ${slot} component is allowed`);
      return;
    }
    seen.set(slot, i);
    switch (c.type) {
      case 'header': {
        const text = textParameter(c, at, 'header', LIMITS.header, errors);
        if (text === undefined) return;
        if (/\{\{/.test(text)) {
          errors.add(`${at}.parameters[0].text`, 'variables in the header are not supported: use them in the body');
          return;
        }
        headerC = { type: 'HEADER', format: 'TEXT', text };
        headerType = 'text';
        return;
      }
      case 'image':
      case 'video':
      case 'document': {
        const m = mediaHeader(c, at, errors);
        if (!m) return;
        headerC = { type: 'HEADER', format: m.format, example: { header_handle: [m.link] } };
        headerType = c.type;
        return;
      }
      case 'body':
        bodyR = body(c, at, errors, { variablesAllowed: true, max: LIMITS.body });
        return;
      case 'footer': {
        const text = textParameter(c, at, 'footer', LIMITS.footer, errors);
        if (text === undefined) return;
        if (/\{\{/.test(text)) {
          errors.add(`${at}.parameters[0].text`, 'variables are not allowed in the footer');
          return;
        }
        footerC = { type: 'FOOTER', text };
        return;
      }
      case 'button':
        buttonsR = buttons(c, at, errors, LIMITS.buttons);
        return;
      case 'carousel':
        carouselR = carousel(c, at, errors);
        return;
      default:
        errors.add(
          `${at}.type`,
          `unknown component type "${c.type}": use header, image, video, document, body, footer, button or carousel`,
        );
    }
  });

  if (!seen.has('body')) errors.add(field, 'a body component is required');
  if (seen.has('carousel')) {
    for (const other of ['header', 'footer', 'button']) {
      if (seen.has(other))
        errors.add(
          `${field}[${seen.get(other)}].type`,
          `a carousel template has only a body and the carousel: remove the ${other}`,
        );
    }
  }
  if (errors.errors.length) return { ok: false, errors: errors.errors };

  const platformComponents: PlatformComponent[] = [];
  if (headerC) platformComponents.push(headerC);
  platformComponents.push(bodyR!.component);
  if (footerC) platformComponents.push(footerC);
  if (buttonsR) platformComponents.push(buttonsR.component);
  if (carouselR) platformComponents.push(carouselR.component);
  return {
    ok: true,
    value: {
      platformComponents,
      variables: bodyR!.variables,
      headerType,
      buttons: buttonsR?.info ?? [],
      carousel: carouselR?.cards ?? null,
    },
  };
}

// ------------------------------------------------------------------ preview

export type PreviewHeader =
  { kind: 'text'; text: string } | { kind: 'image' | 'video' | 'document'; link: string } | null;

export interface TemplatePreview {
  header: PreviewHeader;
  /** the body cut at its variables: `{text}` as written, `{variable, text}` the sample value (or `{{name}}` without one) */
  body: Array<{ text: string; variable?: string }>;
  footer: string | null;
  buttons: Array<{ kind: 'quick_reply' | 'url' | 'phone'; text: string; target?: string }>;
}

/** The body with its variables filled in: the sample given, else the variable's example, else `{{name}}`. */
export function previewText(preview: TemplatePreview): string {
  return preview.body.map((p) => p.text).join('');
}

/**
 * What the customer will see for these components (client shape, as the forms build it), with sample values in the
 * body's variables (`samples` first, then each variable's example). Lenient: incomplete components (a form being
 * typed) still give a preview of what is there; compileComponents says what is wrong.
 */
export function previewOf(components: unknown, samples: Record<string, string> = {}): TemplatePreview {
  const out: TemplatePreview = { header: null, body: [], footer: null, buttons: [] };
  if (!Array.isArray(components)) return out;
  const firstText = (c: Json): string => {
    const p = Array.isArray(c.parameters) ? c.parameters[0] : undefined;
    return isObj(p) && typeof p.text === 'string' ? p.text : '';
  };
  for (const c of components) {
    if (!isObj(c)) continue;
    if (c.type === 'header') out.header = { kind: 'text', text: firstText(c) };
    else if ((MEDIA_TYPES as readonly unknown[]).includes(c.type)) {
      const kind = c.type as (typeof MEDIA_TYPES)[number];
      const media = c[kind];
      out.header = { kind, link: isObj(media) && typeof media.link === 'string' ? media.link : '' };
    } else if (c.type === 'footer') out.footer = firstText(c);
    else if (c.type === 'body') {
      const examples = new Map<string, string>();
      for (const p of Array.isArray(c.parameters) ? c.parameters.slice(1) : []) {
        if (isObj(p) && isObj(p.variable) && typeof p.variable.text === 'string' && isText(p.variable.value))
          examples.set(p.variable.text, p.variable.value);
      }
      const text = firstText(c);
      let at = 0;
      for (const m of text.matchAll(PLACEHOLDER)) {
        if (m.index! > at) out.body.push({ text: text.slice(at, m.index) });
        const name = m[1].trim();
        out.body.push({ variable: name, text: samples[name] ?? examples.get(name) ?? m[0] });
        at = m.index! + m[0].length;
      }
      if (at < text.length) out.body.push({ text: text.slice(at) });
    } else if (c.type === 'button' && Array.isArray(c.parameters)) {
      for (const b of c.parameters) {
        if (isObj(b) && b.type === 'quick_reply' && isObj(b.quick_reply))
          out.buttons.push({ kind: 'quick_reply', text: String(b.quick_reply.value ?? '') });
        else if (isObj(b) && b.type === 'cta' && isObj(b.cta)) {
          const phone = String(b.cta.text ?? '').toLowerCase() === 'phone';
          out.buttons.push({
            kind: phone ? 'phone' : 'url',
            text: String(b.cta.value ?? ''),
            target: typeof b.cta.url === 'string' ? b.cta.url : undefined,
          });
        }
      }
    }
  }
  return out;
}
