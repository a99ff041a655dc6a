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

/** `parent.key` / `parent[3]`, the path style of validation errors; long paths are cut (a path is a label, not data). */
export function childPath(parent: string, key: string | number): string {
  const path = typeof key === 'number' ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key;
  return path.length > 200 ? `${path.slice(0, 197)}...` : path;
}

/**
 * The first structural problem of a parsed JSON body: nesting deeper than MAX_JSON_DEPTH, a `__proto__` key, or a
 * `constructor` object with a `prototype` key (prototype-pollution shapes). Iterative, so no input can exhaust the stack.
 */
export function jsonStructureProblem(root: unknown, rootPath = '', maxDepth = MAX_JSON_DEPTH): FieldError | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: rootPath, depth: 1 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxDepth) {
      return {
        field: path || 'body',
        message: `${path || 'The request body'} is nested too deeply (more than ${maxDepth} levels of objects and arrays)`,
      };
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], path: childPath(path, i), depth: depth + 1 });
      continue;
    }
    for (const key of Object.keys(value)) {
      const field = childPath(path, key);
      if (key === '__proto__') return { field, message: `${field} is not allowed: "__proto__" keys are refused` };
      const child = (value as Record<string, unknown>)[key];
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) {
        return { field, message: `${field} is not allowed: "constructor.prototype" keys are refused` };
      }
      stack.push({ value: child, path: field, depth: depth + 1 });
    }
  }
  return undefined;
}

/** The first string (or object key) holding a character that no field may contain; iterative like the check above. */
export function forbiddenTextProblem(root: unknown, rootPath = ''): FieldError | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: rootPath }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const reason = forbiddenCharacterReason(value);
      if (reason) return { field: path || 'body', message: `${path || 'body'} ${reason}` };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: childPath(path, i) });
      continue;
    }
    for (const key of Object.keys(value)) {
      const field = childPath(path, key);
      const reason = forbiddenCharacterReason(key);
      if (reason) return { field: path || 'body', message: `A key of ${path || 'the body'} ${reason}` };
      stack.push({ value: (value as Record<string, unknown>)[key], path: field });
    }
  }
  return undefined;
}
