import type { TemplateParameter, TemplateSendComponent } from '@switchboard/whatsapp';

/** What a send needs of a stored template (libs/templates' Template entity has these fields). */
export interface TemplateForSend {
  name: string;
  language: string;
  category: string;
  /** body variable names, in the order of the body text */
  variables: string[];
  headerType: 'none' | 'text' | 'image' | 'video' | 'document';
  buttons: Array<{ index: number; type: string; text: string; dynamic_suffix?: boolean }>;
  carousel: Array<{
    header_type: 'image' | 'video';
    media_link: string;
    buttons: Array<{ index: number; type: string; dynamic_suffix?: boolean }>;
  }> | null;
}

export interface TemplateSendInput {
  variables?: Record<string, unknown>;
  mediaUrl?: string;
  documentName?: string;
  carouselData?: Array<Record<string, unknown>>;
}

export type TemplateBuild =
  { ok: true; components: TemplateSendComponent[]; bodyText: string[] } | { ok: false; reason: string };

/** Keys that fill body variables, in the order they appear in the object (SPEC §4 variables key rules). */
export const isBodyKey = (key: string) => key === 'name' || key === 'email' || key.startsWith('custom');
/** `cta_link` and `cta_link_0` → 0, `cta_link1` / `cta_link_1` → 1, ...: the n-th dynamic URL button. */
export function ctaLinkIndex(key: string): number | null {
  const m = /^cta_link(?:_?(\d+))?$/.exec(key);
  return m ? (m[1] === undefined ? 0 : Number(m[1])) : null;
}

/**
 * The URL buttons whose link has a dynamic part, in order, each with the variable that fills it (`cta_link`,
 * `cta_link1`, ...); none for an AUTHENTICATION template, whose button takes the `code`.
 */
export function dynamicLinks<B extends { type: string; dynamic_suffix?: boolean }>(template: {
  category: string;
  buttons: B[];
}): Array<{ button: B; variable: string }> {
  if (template.category === 'AUTHENTICATION') return [];
  return template.buttons
    .filter((b) => b.type === 'url' && b.dynamic_suffix)
    .map((button, i) => ({ button, variable: i === 0 ? 'cta_link' : `cta_link${i}` }));
}

/** The header's media kind when it is an image, video or document (each send then gives its `mediaUrl`), else null. */
export function mediaHeader(template: Pick<TemplateForSend, 'headerType'>): 'image' | 'video' | 'document' | null {
  const kind = template.headerType;
  return kind === 'image' || kind === 'video' || kind === 'document' ? kind : null;
}

const mediaUrlRequired = (name: string, kind: string) => `mediaUrl is required: template ${name} has a ${kind} header`;

/** Why a send of `template` with this `mediaUrl` cannot be made (a media header and no URL), or null. */
export function missingMediaUrl(template: Pick<TemplateForSend, 'name' | 'headerType'>, mediaUrl?: string | null) {
  const kind = mediaHeader(template);
  return kind && !mediaUrl ? mediaUrlRequired(template.name, kind) : null;
}

/** Meta refuses a text parameter with a line break, a tab or more than 4 spaces in a row (error 132018). */
const PLATFORM_REFUSED_PARAMETER = /[\r\n\t]| {5}/;

const text = (value: unknown): string =>
  typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);

/**
 * Builds the Cloud API template components for one send, or the reason the send cannot be made (nothing is sent then):
 * - body variables: the values of `name`, `email` and `custom*` keys, in the object's key order, fill the template's
 *   variables in their order; the counts must match;
 * - `cta_link`, `cta_link_0`, `cta_link1`, ...: the dynamic suffixes of the template's URL buttons, in button order;
 * - `code`: the code of an AUTHENTICATION template (its body variable and its copy-code / URL button);
 * - media headers need `mediaUrl` (`documentName`, default `doc`, names a document);
 * - carousels use the saved cards, each overridable by `carouselData[i]` (`{mediaUrl, cta_link}`).
 */
export function buildTemplateComponents(template: TemplateForSend, input: TemplateSendInput): TemplateBuild {
  const variables = input.variables ?? {};
  const keys = Object.keys(variables);
  const components: TemplateSendComponent[] = [];
  const authentication = template.category === 'AUTHENTICATION';

  // header
  const media = mediaHeader(template);
  if (media) {
    if (!input.mediaUrl) return { ok: false, reason: mediaUrlRequired(template.name, media) };
    const parameter =
      media === 'document'
        ? ({
            type: 'document',
            document: { link: input.mediaUrl, filename: input.documentName || 'doc' },
          } as TemplateParameter)
        : ({ type: media, [media]: { link: input.mediaUrl } } as TemplateParameter);
    components.push({ type: 'header', parameters: [parameter] });
  }

  // body
  let bodyKeys: string[];
  if (authentication) {
    const code = variables.code;
    if (code === undefined || code === null || text(code) === '')
      return {
        ok: false,
        reason: `variables.code is required: template ${template.name} is an AUTHENTICATION template`,
      };
    bodyKeys = template.variables.length ? ['code'] : [];
  } else {
    bodyKeys = keys.filter(isBodyKey);
  }
  const bodyValues = bodyKeys.map((k) => text(variables[k]));
  if (bodyValues.length !== template.variables.length) {
    const expected = template.variables.length ? ` (${template.variables.join(', ')})` : '';
    return {
      ok: false,
      reason: `Template ${template.name} expects ${template.variables.length} body variable(s)${expected}, got ${bodyValues.length}: pass them as name, email or custom* keys in variables, in order`,
    };
  }
  const empty = bodyValues.findIndex((v) => v === '');
  if (empty >= 0) return { ok: false, reason: `variables.${bodyKeys[empty]} must not be empty (a body variable)` };
  const unsendable = bodyValues.findIndex((v) => PLATFORM_REFUSED_PARAMETER.test(v));
  if (unsendable >= 0)
    return {
      ok: false,
      reason: `variables.${bodyKeys[unsendable]} must not contain line breaks, tabs or more than 4 spaces in a row (the platform refuses such a variable)`,
    };
  if (bodyValues.length) {
    components.push({
      type: 'body',
      parameters: bodyValues.map((value, i) => ({ type: 'text', text: value, parameter_name: template.variables[i] })),
    });
  }

  // buttons
  if (authentication) {
    const button = template.buttons.find((b) => b.type !== 'quick_reply' && b.type !== 'phone') ?? template.buttons[0];
    components.push({
      type: 'button',
      sub_type: 'url',
      index: String(button?.index ?? 0),
      parameters: [{ type: 'text', text: text(variables.code) }],
    });
  } else {
    const links = new Map<number, string>();
    for (const key of keys) {
      const n = ctaLinkIndex(key);
      if (n !== null && !links.has(n)) links.set(n, text(variables[key]));
    }
    const dynamic = dynamicLinks(template);
    for (const [d, { button, variable }] of dynamic.entries()) {
      const value = links.get(d);
      if (!value) {
        return {
          ok: false,
          reason: `variables.${variable} is required: URL button "${button.text}" of template ${template.name} has a dynamic part`,
        };
      }
      components.push({
        type: 'button',
        sub_type: 'url',
        index: String(button.index),
        parameters: [{ type: 'text', text: value }],
      });
    }
    const extra = [...links.keys()].filter((n) => n >= dynamic.length);
    if (extra.length)
      return {
        ok: false,
        reason: `Template ${template.name} has ${dynamic.length} dynamic URL button(s); cta_link${extra[0]} has no button to fill`,
      };
  }

  // carousel
  if (template.carousel?.length) {
    const overrides = input.carouselData;
    if (overrides && overrides.length !== template.carousel.length) {
      return {
        ok: false,
        reason: `carouselData must have ${template.carousel.length} card(s), like template ${template.name}`,
      };
    }
    const cards: Array<{ card_index: number; components: TemplateSendComponent[] }> = [];
    for (const [i, card] of template.carousel.entries()) {
      const o = overrides?.[i] ?? {};
      const link = typeof o.mediaUrl === 'string' && o.mediaUrl ? o.mediaUrl : card.media_link;
      const cardComponents: TemplateSendComponent[] = [
        { type: 'header', parameters: [{ type: card.header_type, [card.header_type]: { link } } as TemplateParameter] },
      ];
      const dyn = card.buttons.filter((b) => b.type === 'url' && b.dynamic_suffix);
      for (const [d, b] of dyn.entries()) {
        const name = d === 0 ? 'cta_link' : `cta_link${d}`;
        const value = o[name] ?? o[`cta_link_${d}`];
        // as for the top-level buttons: Meta refuses a card whose dynamic URL has no value (132000), after we said sent
        if (value === undefined || value === null || text(value) === '')
          return {
            ok: false,
            reason: `carouselData[${i}].${name} is required: the URL button of card ${i + 1} of template ${template.name} has a dynamic part`,
          };
        cardComponents.push({
          type: 'button',
          sub_type: 'url',
          index: String(b.index),
          parameters: [{ type: 'text', text: text(value) }],
        });
      }
      cards.push({ card_index: i, components: cardComponents });
    }
    components.push({ type: 'carousel', cards });
  }
  return { ok: true, components, bodyText: bodyValues };
}
