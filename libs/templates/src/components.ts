/**
 * Template components: validation of the client's shape (SPEC §4) and translation to Meta's
 * message_templates shape. Pure functions, no Nest, no I/O.
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
import type { FieldError } from '@switchboard/core';
import type { TemplateButton, TemplateComponent } from '@switchboard/whatsapp';

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
  platformComponents: TemplateComponent[];
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
  readonly errors: FieldError[] = [];
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
): { component: TemplateComponent; variables: string[]; text: string } | undefined {
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
  const component: TemplateComponent = names.length
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
): { component: TemplateComponent; info: ButtonInfo[] } | undefined {
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
  const out: TemplateButton[] = [];
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
): { component: TemplateComponent; cards: CarouselCardInfo[] } | undefined {
  if (!Array.isArray(c.components) || c.components.length === 0 || c.components.length > LIMITS.cards) {
    errors.add(`${at}.components`, `carousel needs components: 1 to ${LIMITS.cards} cards {header, body, buttons}`);
    return undefined;
  }
  const before = errors.errors.length;
  const cards: Array<{ components: TemplateComponent[] }> = [];
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
): { ok: true; value: CompiledTemplate } | { ok: false; errors: FieldError[] } {
  const errors = new Collector();
  if (!Array.isArray(components) || components.length === 0) {
    return { ok: false, errors: [{ field, message: `${field} must be a non-empty array` }] };
  }
  const seen = new Map<string, number>();
  let headerC: TemplateComponent | undefined;
  let headerType: HeaderType = 'none';
  let bodyR: ReturnType<typeof body>;
  let footerC: TemplateComponent | undefined;
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

  const platformComponents: TemplateComponent[] = [];
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
