import {
  BindingError,
  TemplateSyntaxError,
  jsonStringLeaves,
  parseTemplate,
  renderJson,
  renderTemplate,
  renderTemplateDetailed,
  resolvePath,
  resolveTemplateValue,
  templateSyntaxError,
  type TemplateScope,
} from './template-binding';

const scope: TemplateScope = {
  payload: {
    order: { id: 'A-17', total: 42.5, paid: true, lines: null },
    items: [{ sku: 'SKU-1', qty: 2 }, { sku: 'SKU-2' }],
    empty: '',
    zero: 0,
    'kebab-key': 'k',
  },
  contact: { name: 'Ada', phone: '+4915112345678' },
  reply: { text: 'yes', buttonPayload: 'CONFIRM' },
  vars: { myHttp: { status: 200, body: { id: 99, tags: ['a', 'b'] } } },
};

describe('parseTemplate', () => {
  it('splits text and expressions', () => {
    expect(parseTemplate('Hi {{ contact.name }}!')).toEqual([
      { kind: 'text', text: 'Hi ' },
      { kind: 'expr', path: 'contact.name', segments: ['contact', 'name'], defaultValue: undefined },
      { kind: 'text', text: '!' },
    ]);
  });

  it('parses a default filter with either quote and escapes', () => {
    expect(parseTemplate('{{payload.x | default: "n/a"}}')[0]).toMatchObject({ defaultValue: 'n/a' });
    expect(parseTemplate("{{payload.x|default:'it\\'s'}}")[0]).toMatchObject({ defaultValue: "it's" });
  });

  it('keeps a lone "}}" as text', () => {
    expect(renderTemplate('a }} b', scope)).toBe('a }} b');
  });

  it.each([
    ['Hello {{contact.name', /unclosed "\{\{" at position 6/],
    ['{{ {{contact.name}}', /unclosed/],
    ['{{}}', /empty expression/],
    ['{{  }}', /empty expression/],
    ['{{contact..name}}', /invalid path/],
    ['{{contact.na me}}', /invalid path/],
    ['{{contact["name"]}}', /invalid path/],
    ['{{payload.__proto__.x}}', /forbidden path segment "__proto__"/],
    ['{{payload.constructor}}', /forbidden path segment "constructor"/],
    ['{{vars.x.prototype}}', /forbidden path segment "prototype"/],
    ['{{process.env.SECRET}}', /unknown root "process"/],
    ['{{payload.x | upper}}', /only default/],
    ['{{payload.x | default: n/a}}', /only default/],
  ])('rejects %p', (template, message) => {
    expect(() => parseTemplate(template)).toThrow(TemplateSyntaxError);
    expect(() => parseTemplate(template)).toThrow(message);
    expect(templateSyntaxError(template)).toMatch(message);
  });

  it('templateSyntaxError returns null for valid templates and rejects non-strings', () => {
    expect(templateSyntaxError('plain text')).toBeNull();
    expect(templateSyntaxError('{{payload.a}} and {{vars.b.0}}')).toBeNull();
    expect(templateSyntaxError(42)).toBe('must be a string');
  });
});

describe('renderTemplate', () => {
  it.each([
    ['{{payload.order.id}}', 'A-17'],
    ['{{contact.name}}', 'Ada'],
    ['{{reply.text}}', 'yes'],
    ['{{vars.myHttp.body.id}}', '99'],
    ['{{payload.items.0.sku}}', 'SKU-1'],
    ['{{payload.items.1.sku}}', 'SKU-2'],
    ['{{payload.order.total}}', '42.5'],
    ['{{payload.order.paid}}', 'true'],
    ['{{payload.zero}}', '0'],
    ['{{payload.kebab-key}}', 'k'],
    ['{{vars.myHttp.body.tags}}', '["a","b"]'],
    ['{{payload.items.1}}', '{"sku":"SKU-2"}'],
    ['Order {{payload.order.id}} for {{contact.name}}.', 'Order A-17 for Ada.'],
    ['no bindings', 'no bindings'],
    ['', ''],
  ])('renders %p as %p', (template, expected) => {
    expect(renderTemplate(template, scope)).toBe(expected);
  });

  it.each([
    '{{payload.missing}}',
    '{{payload.order.id.deeper}}',
    '{{payload.items.5.sku}}',
    '{{payload.items.x}}',
    '{{payload.order.lines}}',
    '{{payload.empty}}',
    '{{contact.name.length}}',
    '{{payload.items.length}}',
    '{{payload.toString}}',
    '{{payload.hasOwnProperty}}',
  ])('renders missing path %p as empty string', (template) => {
    expect(renderTemplate(template, scope)).toBe('');
  });

  it('uses the default when the value is missing, null or empty, not when it is 0 or false', () => {
    expect(renderTemplate('{{payload.x | default: "n/a"}}', scope)).toBe('n/a');
    expect(renderTemplate('{{payload.order.lines | default: "none"}}', scope)).toBe('none');
    expect(renderTemplate('{{payload.empty | default: "e"}}', scope)).toBe('e');
    expect(renderTemplate('{{payload.zero | default: "d"}}', scope)).toBe('0');
    expect(renderTemplate('{{payload.order.id | default: "d"}}', scope)).toBe('A-17');
  });

  it('reports missing paths', () => {
    expect(
      renderTemplateDetailed('{{contact.name}} {{payload.a}} {{payload.b|default:"x"}} {{vars.c}}', scope),
    ).toEqual({
      text: 'Ada  x ',
      missing: ['payload.a', 'vars.c'],
    });
  });

  it('strict mode throws a BindingError listing the missing paths', () => {
    expect(() => renderTemplate('{{payload.a}}-{{payload.b}}', scope, { strict: true })).toThrow(BindingError);
    try {
      renderTemplate('{{payload.a}}-{{payload.b}}', scope, { strict: true });
    } catch (e) {
      expect((e as BindingError).paths).toEqual(['payload.a', 'payload.b']);
      expect((e as Error).message).toContain('payload.a, payload.b');
    }
    expect(renderTemplate('{{contact.name}}', scope, { strict: true })).toBe('Ada');
  });

  it('throws a syntax error for invalid templates', () => {
    expect(() => renderTemplate('{{payload.a', scope)).toThrow(TemplateSyntaxError);
  });

  it('never reads inherited properties, even on objects with a polluted prototype chain', () => {
    const proto = { secret: 'leak' };
    const payload = Object.create(proto) as Record<string, unknown>;
    payload.own = 'ok';
    expect(renderTemplate('{{payload.own}}{{payload.secret}}', { payload })).toBe('ok');
    expect(
      resolvePath({ payload: JSON.parse('{"__proto__": {"x": 1}}') }, ['payload', '__proto__', 'x']),
    ).toBeUndefined();
  });

  it('does not evaluate anything', () => {
    expect(() => renderTemplate('{{payload.a; process.exit(1)}}', scope)).toThrow(TemplateSyntaxError);
    expect(() => renderTemplate('{{ (() => 1)() }}', scope)).toThrow(TemplateSyntaxError);
  });
});

describe('resolveTemplateValue', () => {
  it('returns the raw value of a template that is exactly one expression', () => {
    expect(resolveTemplateValue('{{payload.order.total}}', scope)).toBe(42.5);
    expect(resolveTemplateValue('{{ payload.order.paid }}', scope)).toBe(true);
    expect(resolveTemplateValue('{{vars.myHttp.body.tags}}', scope)).toEqual(['a', 'b']);
    expect(resolveTemplateValue('{{payload.missing}}', scope)).toBeUndefined();
    expect(resolveTemplateValue('{{payload.missing | default: "d"}}', scope)).toBe('d');
  });

  it('renders anything else to a string', () => {
    expect(resolveTemplateValue(' {{payload.order.total}}', scope)).toBe(' 42.5');
    expect(resolveTemplateValue('{{payload.zero}}{{payload.zero}}', scope)).toBe('00');
    expect(resolveTemplateValue('literal', scope)).toBe('literal');
  });
});

describe('renderJson', () => {
  it('renders string leaves, keeps raw single-expression values, keeps key order and non-strings', () => {
    const missing: string[] = [];
    const body = {
      z: '{{payload.order.id}}',
      a: { total: '{{payload.order.total}}', items: '{{payload.items}}', text: 'Total: {{payload.order.total}}' },
      list: ['{{contact.name}}', 3, false, null, '{{payload.nope}}'],
      n: 7,
    };
    const rendered = renderJson(body, scope, missing) as Record<string, unknown>;
    expect(rendered).toEqual({
      z: 'A-17',
      a: { total: 42.5, items: [{ sku: 'SKU-1', qty: 2 }, { sku: 'SKU-2' }], text: 'Total: 42.5' },
      list: ['Ada', 3, false, null, null],
      n: 7,
    });
    expect(Object.keys(rendered)).toEqual(['z', 'a', 'list', 'n']);
    expect(missing).toEqual(['payload.nope']);
  });

  it('drops __proto__ keys', () => {
    const rendered = renderJson(JSON.parse('{"__proto__": {"polluted": true}, "a": "1"}'), scope) as Record<
      string,
      unknown
    >;
    expect(Object.keys(rendered)).toEqual(['a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('lists string leaves with field paths', () => {
    expect(jsonStringLeaves({ a: ['x', { b: 'y' }], c: 1 }, 'body')).toEqual([
      { path: 'body.a[0]', value: 'x' },
      { path: 'body.a[1].b', value: 'y' },
    ]);
  });
});
