import { compareValues, evaluateRule, firstMatchingRule } from './conditions';
import type { ConditionRule } from './definition';
import type { TemplateScope } from './template-binding';

const scope: TemplateScope = {
  payload: {
    status: 'Paid',
    amount: 120,
    amountText: '120',
    tags: ['vip', 'Beta'],
    empty: '',
    nothing: null,
    country: 'DE',
  },
  contact: { name: 'Ada' },
  reply: { text: 'Yes please' },
  vars: { http: { status: 404 }, limit: '100' },
};

const rule = (
  left: string,
  operator: ConditionRule['operator'],
  right?: ConditionRule['right'],
  extra: Partial<ConditionRule> = {},
): ConditionRule => ({
  left,
  operator,
  right,
  next: 'n',
  ...extra,
});

describe('condition operators', () => {
  it.each<[string, ConditionRule, boolean]>([
    ['equals (case-insensitive by default)', rule('{{payload.status}}', 'equals', 'paid'), true],
    ['equals false', rule('{{payload.status}}', 'equals', 'unpaid'), false],
    ['equals caseSensitive', rule('{{payload.status}}', 'equals', 'paid', { caseSensitive: true }), false],
    ['equals caseSensitive exact', rule('{{payload.status}}', 'equals', 'Paid', { caseSensitive: true }), true],
    ['equals number vs string', rule('{{payload.amount}}', 'equals', '120'), true],
    ['equals two bindings', rule('{{payload.amount}}', 'equals', '{{payload.amountText}}'), true],
    ['equals missing vs empty string', rule('{{payload.missing}}', 'equals', ''), true],
    ['not_equals true', rule('{{payload.status}}', 'not_equals', 'refunded'), true],
    ['not_equals false (case-insensitive)', rule('{{payload.status}}', 'not_equals', 'PAID'), false],
    ['contains substring', rule('{{reply.text}}', 'contains', 'YES'), true],
    ['contains substring false', rule('{{reply.text}}', 'contains', 'no'), false],
    ['contains array element', rule('{{payload.tags}}', 'contains', 'beta'), true],
    ['contains array element, not a substring of one', rule('{{payload.tags}}', 'contains', 'vi'), false],
    ['contains empty right never matches', rule('{{reply.text}}', 'contains', '{{payload.missing}}'), false],
    ['starts_with', rule('{{reply.text}}', 'starts_with', 'yes'), true],
    ['starts_with false', rule('{{reply.text}}', 'starts_with', 'please'), false],
    ['starts_with caseSensitive', rule('{{reply.text}}', 'starts_with', 'yes', { caseSensitive: true }), false],
    ['exists', rule('{{contact.name}}', 'exists'), true],
    ['exists missing', rule('{{contact.email}}', 'exists'), false],
    ['exists empty string', rule('{{payload.empty}}', 'exists'), false],
    ['exists null', rule('{{payload.nothing}}', 'exists'), false],
    ['not_exists missing', rule('{{contact.email}}', 'not_exists'), true],
    ['not_exists present', rule('{{contact.name}}', 'not_exists'), false],
    ['gt', rule('{{payload.amount}}', 'gt', '100'), true],
    ['gt equal is false', rule('{{payload.amount}}', 'gt', '120'), false],
    ['gte equal', rule('{{payload.amount}}', 'gte', '120'), true],
    ['gte less', rule('{{payload.amount}}', 'gte', '121'), false],
    ['lt', rule('{{vars.http.status}}', 'lt', '500'), true],
    ['lt false', rule('{{vars.http.status}}', 'lt', '400'), false],
    ['lte equal', rule('{{vars.http.status}}', 'lte', '404'), true],
    ['lte greater', rule('{{vars.http.status}}', 'lte', '403'), false],
    ['gt numeric, not lexicographic', rule('{{payload.amountText}}', 'gt', '{{vars.limit}}'), true],
    ['gt with decimals', rule('2.5', 'gt', '2.25'), true],
    ['gt non-number is false', rule('{{payload.status}}', 'gt', '1'), false],
    ['gt signed and decimal strings', rule(' -0.5 ', 'gt', '-1.'), true],
    ['gt hexadecimal text is no number', rule('0x10', 'gt', '1'), false],
    ['gt exponent text is no number', rule('1e3', 'gt', '1'), false],
    ['lt Infinity text is no number', rule('1', 'lt', 'Infinity'), false],
    ['lt missing is false', rule('{{payload.missing}}', 'lt', '1'), false],
    ['lte empty right is false', rule('1', 'lte', '{{payload.missing}}'), false],
    ['in', rule('{{payload.country}}', 'in', ['AT', 'de', 'CH']), true],
    ['in false', rule('{{payload.country}}', 'in', ['FR', 'IT']), false],
    ['in with bindings', rule('{{payload.country}}', 'in', ['{{payload.missing}}', '{{payload.country}}']), true],
    ['in caseSensitive', rule('{{payload.country}}', 'in', ['de'], { caseSensitive: true }), false],
  ])('%s', (_name, r, expected) => {
    expect(evaluateRule(r, scope)).toBe(expected);
  });

  it('compareValues treats an unknown operator as false', () => {
    expect(compareValues('nope' as never, 'a', 'a')).toBe(false);
  });

  it('first matching rule wins; -1 when none', () => {
    const rules = [
      rule('{{payload.amount}}', 'gt', '500'),
      rule('{{payload.amount}}', 'gt', '100'),
      rule('{{payload.amount}}', 'gt', '10'),
    ];
    expect(firstMatchingRule(rules, scope)).toBe(1);
    expect(firstMatchingRule([rule('{{payload.amount}}', 'lt', '0')], scope)).toBe(-1);
  });
});
