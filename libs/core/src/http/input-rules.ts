import type { FieldError } from './validation';

/** Deepest nesting of objects and arrays a request body may have (the top-level object or array is level 1). */
export const MAX_JSON_DEPTH = 64;

// U+0000 (PostgreSQL text and jsonb refuse it) and UTF-16 surrogates without their pair (jsonb refuses them; text would
// silently store U+FFFD instead). Everything else a JSON string can hold is accepted.
const FORBIDDEN_CHARACTER = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string is refused, or undefined when it is fine. */
export function forbiddenCharacterReason(text: string): string | undefined {
  const match = FORBIDDEN_CHARACTER.exec(text);
  if (!match) return undefined;
  return match[0] === '\u0000'
    ? 'must not contain NUL characters (U+0000)'
    : 'must not contain unpaired UTF-16 surrogates';
}

/**
 * At most `max` UTF-16 units of `text`, never half of a surrogate pair: `slice` alone can end on the first half of an
 * emoji, which jsonb later refuses (a campaign trigger's name did, in every fan-out batch after it).
 */
export function clipText(text: string, max: number): string {
  const clipped = text.slice(0, max);
  return clipped.length === max && /[\uD800-\uDBFF]$/.test(clipped) ? clipped.slice(0, -1) : clipped;
}

/** `parent.key` / `parent[3]`, the path style of validation errors; long paths are cut (a path is a label, not data). */
export function childPath(parent: string, key: string | number): string {
  const path = typeof key === 'number' ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key;
  return path.length > 200 ? `${path.slice(0, 197)}...` : path;
}

/** A value met by the walks below; its path is built only when it is at fault (most bodies have none). */
interface Visit {
  value: unknown;
  key?: string | number;
  parent?: Visit;
}

/** The structure check's visits also know their nesting level (the top-level value is level 1). */
type LevelledVisit = Visit & { depth: number };

function pathOf(visit: Visit, rootPath: string): string {
  const keys: Array<string | number> = [];
  for (let v: Visit | undefined = visit; v?.parent; v = v.parent) keys.push(v.key!);
  let path = rootPath;
  for (let i = keys.length - 1; i >= 0; i--) path = childPath(path, keys[i]);
  return path;
}

/**
 * The first structural problem of a parsed JSON body: nesting deeper than MAX_JSON_DEPTH, a `__proto__` key, or a
 * `constructor` object with a `prototype` key (prototype-pollution shapes). Iterative, so no input can exhaust the stack.
 */
export function jsonStructureProblem(root: unknown, rootPath = '', maxDepth = MAX_JSON_DEPTH): FieldError | undefined {
  const stack: LevelledVisit[] = [{ value: root, depth: 1 }];
  while (stack.length) {
    const visit = stack.pop()!;
    const { value, depth } = visit;
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxDepth) {
      const path = pathOf(visit, rootPath);
      return {
        field: path || 'body',
        message: `${path || 'The request body'} is nested too deeply (more than ${maxDepth} levels of objects and arrays)`,
      };
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], depth: depth + 1, key: i, parent: visit });
      continue;
    }
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      const refused =
        key === '__proto__'
          ? '"__proto__" keys are refused'
          : key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')
            ? '"constructor.prototype" keys are refused'
            : undefined;
      if (refused) {
        const field = childPath(pathOf(visit, rootPath), key);
        return { field, message: `${field} is not allowed: ${refused}` };
      }
      stack.push({ value: child, depth: depth + 1, key, parent: visit });
    }
  }
  return undefined;
}

/** The first string (or object key) holding a character that no field may contain; iterative like the check above. */
export function forbiddenTextProblem(root: unknown, rootPath = ''): FieldError | undefined {
  const stack: Visit[] = [{ value: root }];
  while (stack.length) {
    const visit = stack.pop()!;
    const { value } = visit;
    if (typeof value === 'string') {
      const reason = forbiddenCharacterReason(value);
      if (!reason) continue;
      const path = pathOf(visit, rootPath);
      return { field: path || 'body', message: `${path || 'body'} ${reason}` };
    }
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: visit });
      continue;
    }
    for (const key of Object.keys(value)) {
      const reason = forbiddenCharacterReason(key);
      if (reason) {
        const path = pathOf(visit, rootPath);
        return { field: path || 'body', message: `A key of ${path || 'the body'} ${reason}` };
      }
      stack.push({ value: (value as Record<string, unknown>)[key], key, parent: visit });
    }
  }
  return undefined;
}

/**
 * Whether parsed JSON text can hold a character forbiddenTextProblem refuses. Only a `\u` escape can produce one: a
 * successful JSON.parse never holds a raw NUL (control characters must be escaped), and decoding UTF-8 never yields
 * an unpaired surrogate (invalid bytes become U+FFFD). Text without any `\u` needs no walk.
 */
export function jsonTextMayHoldForbidden(text: string): boolean {
  return text.includes('\\u');
}
