/**
 * Safe path templates: `Hello {{contact.name}}, order {{payload.order.id}}`.
 *
 * - An expression is `{{ root.segment.segment }}` with root one of payload, contact, reply, vars;
 *   segments are letters, digits, `_` and `-`; a numeric segment indexes an array (`{{payload.items.0.sku}}`).
 * - Optional default: `{{payload.x | default: "n/a"}}` (single or double quotes) used when the value is
 *   missing, null or the empty string.
 * - Only own properties are read; `__proto__`, `constructor` and `prototype` segments are rejected by
 *   the parser and never resolved. Nothing is ever evaluated.
 * - Interpolation: strings as-is, numbers/booleans with String(), objects/arrays as JSON, missing as ''.
 * - A template that is exactly one expression can yield the raw value (resolveTemplateValue).
 */

export const TEMPLATE_ROOTS = ['payload', 'contact', 'reply', 'vars'] as const;
export type TemplateRoot = (typeof TEMPLATE_ROOTS)[number];

/** Values templates can read. */
export interface TemplateScope {
  payload?: unknown;
  contact?: unknown;
  reply?: unknown;
  vars?: unknown;
}

export const FORBIDDEN_SEGMENTS = ['__proto__', 'constructor', 'prototype'];

export type TemplatePart =
  { kind: 'text'; text: string } | { kind: 'expr'; path: string; segments: string[]; defaultValue?: string };

export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly template: string,
  ) {
    super(message);
    this.name = 'TemplateSyntaxError';
  }
}

/** Raised in strict mode when paths resolve to nothing. */
export class BindingError extends Error {
  constructor(
    message: string,
    readonly paths: string[],
  ) {
    super(message);
    this.name = 'BindingError';
  }
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const DEFAULT_FILTER = /^default\s*:\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')$/;

function parseExpression(raw: string, template: string): TemplatePart {
  const pipe = raw.indexOf('|');
  const pathText = (pipe === -1 ? raw : raw.slice(0, pipe)).trim();
  let defaultValue: string | undefined;
  if (pipe !== -1) {
    const filter = raw.slice(pipe + 1).trim();
    const m = DEFAULT_FILTER.exec(filter);
    if (!m) {
      throw new TemplateSyntaxError(
        `invalid filter "${filter}" in {{${raw}}}: only default: "value" is supported`,
        template,
      );
    }
    defaultValue = (m[1] ?? m[2]).replace(/\\(.)/g, '$1');
  }
  if (pathText === '') throw new TemplateSyntaxError(`empty expression {{${raw}}}`, template);
  const segments = pathText.split('.');
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) {
      throw new TemplateSyntaxError(
        `invalid path "${pathText}" in {{${raw}}}: segments may contain only letters, digits, _ and -`,
        template,
      );
    }
    if (FORBIDDEN_SEGMENTS.includes(segment)) {
      throw new TemplateSyntaxError(`forbidden path segment "${segment}" in {{${raw}}}`, template);
    }
  }
  if (!(TEMPLATE_ROOTS as readonly string[]).includes(segments[0])) {
    throw new TemplateSyntaxError(
      `unknown root "${segments[0]}" in {{${raw}}}: paths start with ${TEMPLATE_ROOTS.join(', ')}`,
      template,
    );
  }
  return { kind: 'expr', path: pathText, segments, defaultValue };
}

/** Splits a template into text and expressions; throws TemplateSyntaxError (e.g. unclosed `{{`). */
export function parseTemplate(template: string): TemplatePart[] {
  if (typeof template !== 'string') throw new TemplateSyntaxError('template must be a string', String(template));
  const parts: TemplatePart[] = [];
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{{', pos);
    if (open === -1) {
      parts.push({ kind: 'text', text: template.slice(pos) });
      break;
    }
    if (open > pos) parts.push({ kind: 'text', text: template.slice(pos, open) });
    const close = template.indexOf('}}', open + 2);
    if (close === -1) throw new TemplateSyntaxError(`unclosed "{{" at position ${open}`, template);
    const inner = template.slice(open + 2, close);
    if (inner.includes('{{')) throw new TemplateSyntaxError(`unclosed "{{" at position ${open}`, template);
    parts.push(parseExpression(inner, template));
    pos = close + 2;
  }
  return parts;
}

/** Returns an error message for an invalid template, or null when it parses. */
export function templateSyntaxError(template: unknown): string | null {
  if (typeof template !== 'string') return 'must be a string';
  try {
    parseTemplate(template);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Reads a path (own properties only, numeric segments index arrays). Missing → undefined. */
export function resolvePath(scope: TemplateScope, segments: readonly string[]): unknown {
  let current: unknown = scope;
  for (const segment of segments) {
    if (FORBIDDEN_SEGMENTS.includes(segment)) return undefined;
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** How a value is written into a string. */
export function stringifyValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

function evaluate(part: Extract<TemplatePart, { kind: 'expr' }>, scope: TemplateScope, missing: string[]): unknown {
  const value = resolvePath(scope, part.segments);
  if (!isEmpty(value)) return value;
  if (part.defaultValue !== undefined) return part.defaultValue;
  missing.push(part.path);
  return value;
}

export interface RenderResult {
  text: string;
  /** Paths that resolved to nothing (missing, null or '') and had no default. */
  missing: string[];
}

/** Renders to a string and reports the paths that resolved to nothing. Throws TemplateSyntaxError. */
export function renderTemplateDetailed(template: string, scope: TemplateScope): RenderResult {
  const missing: string[] = [];
  let text = '';
  for (const part of parseTemplate(template)) {
    text += part.kind === 'text' ? part.text : stringifyValue(evaluate(part, scope, missing));
  }
  return { text, missing };
}

/**
 * Renders an http_request URL: a value is data, never URL syntax that moves the request. In the query or fragment a
 * value is percent-encoded whole (one value: `a&b=c` stays one); in the path it is encoded but for `/` (a value may
 * hold several segments, `v1/orders`), and a `.` or `..` segment is refused (a reply `../admin` would climb out of the
 * path the author wrote); in the host it must be a host name, port or IPv6 address. Refusals are returned, naming the
 * value's path. A template that starts with a value takes that value as written: the base of the URL
 * (`{{vars.api}}/orders`, or a whole URL from the payload: data the workflow's author chose to trust).
 */
export function renderUrlDetailed(
  template: string,
  scope: TemplateScope,
): RenderResult & { refused: Array<{ path: string; why: string }> } {
  const missing: string[] = [];
  const refused: Array<{ path: string; why: string }> = [];
  let text = '';
  parseTemplate(template).forEach((part, i) => {
    if (part.kind === 'text') return (text += part.text);
    const value = stringifyValue(evaluate(part, scope, missing));
    if (i === 0) return (text += value);
    const authority = AUTHORITY.exec(text);
    if (!authority) {
      if (!HOST.test(value)) refused.push({ path: part.path, why: 'in the host is not a host name' });
      return (text += value);
    }
    if (/[?#]/.test(text.slice(authority[0].length))) return (text += encodeURIComponent(value));
    if (value.split('/').some((segment) => segment === '.' || segment === '..'))
      refused.push({ path: part.path, why: 'in the path holds a "." or ".." segment' });
    text += encodeURI(value).replace(/[?#]/g, encodeURIComponent);
  });
  return { text, missing, refused };
}
/** `scheme://authority` once a path, query or fragment follows it */
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(?=[/?#])/i;
/** a host name, and what may follow it in the authority: a port, an IPv6 address's brackets (never `@` or a path) */
const HOST = /^[A-Za-z0-9.:[\]-]*$/;

export interface RenderOptions {
  /** Throw BindingError when any path resolves to nothing (instead of writing ''). */
  strict?: boolean;
}

/** Renders a template to a string. Missing paths become '' unless `strict` (then BindingError). */
export function renderTemplate(template: string, scope: TemplateScope, options: RenderOptions = {}): string {
  const { text, missing } = renderTemplateDetailed(template, scope);
  if (options.strict && missing.length > 0) {
    throw new BindingError(`unresolved template path(s): ${missing.join(', ')}`, missing);
  }
  return text;
}

export interface ResolveResult {
  value: unknown;
  missing: string[];
}

/**
 * A template that is exactly one expression (`{{payload.items}}`, surrounding spaces allowed inside the
 * braces only) yields the raw value (object, number...); a missing value yields undefined.
 * Any other template is rendered to a string.
 */
export function resolveTemplateValueDetailed(template: string, scope: TemplateScope): ResolveResult {
  const parts = parseTemplate(template);
  if (parts.length === 1 && parts[0].kind === 'expr') {
    const missing: string[] = [];
    const value = evaluate(parts[0], scope, missing);
    return { value, missing };
  }
  const { text, missing } = renderTemplateDetailed(template, scope);
  return { value: text, missing };
}

export function resolveTemplateValue(template: string, scope: TemplateScope): unknown {
  return resolveTemplateValueDetailed(template, scope).value;
}

/**
 * Renders every string leaf of a JSON value (objects, arrays). A leaf that is exactly one expression
 * keeps the raw value; a missing one becomes null. Keys are never templated; key order is kept.
 */
export function renderJson(value: unknown, scope: TemplateScope, missing: string[] = []): unknown {
  if (typeof value === 'string') {
    const result = resolveTemplateValueDetailed(value, scope);
    missing.push(...result.missing);
    return result.value === undefined ? null : result.value;
  }
  if (Array.isArray(value)) return value.map((item) => renderJson(item, scope, missing));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_SEGMENTS.includes(key)) continue;
      out[key] = renderJson((value as Record<string, unknown>)[key], scope, missing);
    }
    return out;
  }
  return value;
}

/** Every string leaf of a JSON value with a field path (`body.items[0].sku`), for validation. */
export function jsonStringLeaves(value: unknown, path: string): { path: string; value: string }[] {
  if (typeof value === 'string') return [{ path, value }];
  if (Array.isArray(value)) return value.flatMap((item, i) => jsonStringLeaves(item, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return Object.keys(value).flatMap((key) =>
      jsonStringLeaves((value as Record<string, unknown>)[key], `${path}.${key}`),
    );
  }
  return [];
}
