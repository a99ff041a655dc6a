/**
 * Condition operators. `left` and `right` are templates; a template that is exactly one `{{path}}`
 * yields the raw value.
 *
 * - equals / not_equals: compared as strings (numbers and booleans via String(), objects as JSON);
 *   case-insensitive unless `caseSensitive`. A missing value is ''.
 * - contains: left is an array → some element equals right; otherwise left string contains right.
 * - starts_with: left string starts with right.
 * - exists: left is not missing, null or ''. not_exists: the opposite.
 * - gt / gte / lt / lte: both sides as numbers (a JSON number, or a string of digits with an optional sign and decimal
 *   point); false when either side is empty or not such a number.
 * - in: left equals one of the `right` array's templates.
 * An empty `right` never matches contains / starts_with (avoid "everything contains ''" surprises).
 */
import type { ConditionOperator, ConditionRule } from './definition';
import { resolveTemplateValue, stringifyValue, type TemplateScope } from './template-binding';

function norm(value: unknown, caseSensitive: boolean): string {
  const s = stringifyValue(value);
  return caseSensitive ? s : s.toLowerCase();
}

/** A number as people write it: digits, an optional sign and decimal point (not `0x10`, `1e3`, `Infinity` or `0b1`). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && DECIMAL.test(value.trim())) return Number(value.trim());
  return null;
}

export function compareValues(
  operator: ConditionOperator,
  left: unknown,
  right: unknown,
  caseSensitive = false,
): boolean {
  switch (operator) {
    case 'exists':
      return !(left === undefined || left === null || left === '');
    case 'not_exists':
      return left === undefined || left === null || left === '';
    case 'equals':
      return norm(left, caseSensitive) === norm(right, caseSensitive);
    case 'not_equals':
      return norm(left, caseSensitive) !== norm(right, caseSensitive);
    case 'contains': {
      const r = norm(right, caseSensitive);
      if (Array.isArray(left)) return left.some((item) => norm(item, caseSensitive) === r);
      return r !== '' && norm(left, caseSensitive).includes(r);
    }
    case 'starts_with': {
      const r = norm(right, caseSensitive);
      return r !== '' && norm(left, caseSensitive).startsWith(r);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const l = toNumber(left);
      const r = toNumber(right);
      if (l === null || r === null) return false;
      if (operator === 'gt') return l > r;
      if (operator === 'gte') return l >= r;
      if (operator === 'lt') return l < r;
      return l <= r;
    }
    case 'in': {
      const candidates = Array.isArray(right) ? right : [right];
      const l = norm(left, caseSensitive);
      return candidates.some((c) => norm(c, caseSensitive) === l);
    }
    default:
      return false;
  }
}

/** Evaluates one rule against the scope. */
export function evaluateRule(rule: ConditionRule, scope: TemplateScope): boolean {
  const left = resolveTemplateValue(rule.left, scope);
  let right: unknown;
  if (Array.isArray(rule.right)) right = rule.right.map((t) => resolveTemplateValue(t, scope));
  else if (typeof rule.right === 'string') right = resolveTemplateValue(rule.right, scope);
  return compareValues(rule.operator, left, right, rule.caseSensitive === true);
}

/** Index of the first rule that holds, or -1 (→ else). */
export function firstMatchingRule(rules: readonly ConditionRule[], scope: TemplateScope): number {
  return rules.findIndex((rule) => evaluateRule(rule, scope));
}
