import { compileComponents, placeholdersOf, previewOf, previewText, templateFieldErrors } from './template-rules';
import { mapPlatformStatus } from './templates.service';

const body = (text: string, vars: Record<string, string> = {}) => ({
  type: 'body',
  parameters: [
    { type: 'text', text },
    ...Object.entries(vars).map(([name, value]) => ({ type: 'variable', variable: { text: name, value } })),
  ],
});
const fields = (components: unknown) => {
  const r = compileComponents(components);
  return r.ok ? [] : r.errors.map((e) => e.field);
};

describe('compileComponents', () => {
  it('keeps variables in the order of the body text, whatever the order of the entries', () => {
    const r = compileComponents([body('Dear {{b}}, {{a}} and {{b}} again.', { a: 'x', b: 'y' })]);
    expect(r.ok && r.value.variables).toEqual(['b', 'a']);
    expect(r.ok && r.value.platformComponents).toEqual([
      {
        type: 'BODY',
        text: 'Dear {{b}}, {{a}} and {{b}} again.',
        example: {
          body_text_named_params: [
            { param_name: 'b', example: 'y' },
            { param_name: 'a', example: 'x' },
          ],
        },
      },
    ]);
  });

  it('a body without variables has no example', () => {
    const r = compileComponents([body('Plain text.')]);
    expect(r.ok && r.value).toEqual({
      platformComponents: [{ type: 'BODY', text: 'Plain text.' }],
      variables: [],
      headerType: 'none',
      buttons: [],
      carousel: null,
    });
  });

  it('tolerates spaces inside braces and rejects invalid names', () => {
    expect(placeholdersOf('Hi {{ name }} {{Bad Name}} {{1}}')).toEqual({
      names: ['name'],
      bad: ['{{Bad Name}}', '{{1}}'],
    });
  });

  it.each([
    ['a variable at the start', [body('{{name}} hello', { name: 'x' })], 'components[0].parameters[0].text'],
    ['a variable at the end', [body('hello {{name}}', { name: 'x' })], 'components[0].parameters[0].text'],
    ['an empty example', [body('Hi {{name}}!', { name: '' })], 'components[0].parameters[1].variable.value'],
    [
      'a duplicate entry',
      [
        {
          ...body('Hi {{name}}!', { name: 'x' }),
          parameters: [
            ...body('Hi {{name}}!', { name: 'x' }).parameters,
            { type: 'variable', variable: { text: 'name', value: 'y' } },
          ],
        },
      ],
      'components[0].parameters[2].variable.text',
    ],
    ['two bodies', [body('a'), body('b')], 'components[1].type'],
    [
      'a header variable',
      [{ type: 'header', parameters: [{ type: 'text', text: 'Hi {{x}}' }] }, body('b')],
      'components[0].parameters[0].text',
    ],
    [
      'a header too long',
      [{ type: 'header', parameters: [{ type: 'text', text: 'x'.repeat(61) }] }, body('b')],
      'components[0].parameters[0].text',
    ],
    [
      'a footer variable',
      [body('b'), { type: 'footer', parameters: [{ type: 'text', text: '{{x}}' }] }],
      'components[1].parameters[0].text',
    ],
    [
      'a non-http media link',
      [{ type: 'video', video: { link: 'ftp://x/y.mp4' } }, body('b')],
      'components[0].video.link',
    ],
    [
      'two phone buttons',
      [
        body('b'),
        {
          type: 'button',
          parameters: [1, 2].map((i) => ({
            type: 'cta',
            cta: { text: 'Phone', value: `Call ${i}`, url: `+4930123456${i}` },
          })),
        },
      ],
      'components[1].parameters',
    ],
    [
      'a duplicate label',
      [
        body('b'),
        { type: 'button', parameters: [1, 2].map(() => ({ type: 'quick_reply', quick_reply: { value: 'Same' } })) },
      ],
      'components[1].parameters[1].quick_reply.value',
    ],
    [
      'a label too long',
      [body('b'), { type: 'button', parameters: [{ type: 'quick_reply', quick_reply: { value: 'x'.repeat(26) } }] }],
      'components[1].parameters[0].quick_reply.value',
    ],
    [
      'a placeholder inside a url',
      [
        body('b'),
        {
          type: 'button',
          parameters: [{ type: 'cta', cta: { text: 'URL', value: 'Go', url: 'https://x.example.com/{{1}}/y' } }],
        },
      ],
      'components[1].parameters[0].cta.url',
    ],
    [
      'an unknown cta kind',
      [body('b'), { type: 'button', parameters: [{ type: 'cta', cta: { text: 'Mail', value: 'Go', url: 'x' } }] }],
      'components[1].parameters[0].cta.text',
    ],
    [
      'a carousel with a footer',
      [body('b'), { type: 'footer', parameters: [{ type: 'text', text: 'f' }] }, { type: 'carousel', components: [] }],
      'components[2].components',
    ],
  ])('rejects %s', (_label, components, field) => {
    expect(fields(components)).toContain(field);
  });

  it('dynamic URL buttons: {{anything}} at the end becomes {{1}} with a full example', () => {
    const r = compileComponents([
      body('b'),
      {
        type: 'button',
        parameters: [
          {
            type: 'cta',
            cta: {
              text: 'URL',
              value: 'Track',
              url: 'https://t.example.com/p?id={{code}}',
              example: 'https://t.example.com/p?id=42',
            },
          },
        ],
      },
    ]);
    expect(r.ok && r.value.platformComponents[1]).toEqual({
      type: 'BUTTONS',
      buttons: [
        {
          type: 'URL',
          text: 'Track',
          url: 'https://t.example.com/p?id={{1}}',
          example: ['https://t.example.com/p?id=42'],
        },
      ],
    });
    expect(r.ok && r.value.buttons).toEqual([
      { index: 0, type: 'url', text: 'Track', url: 'https://t.example.com/p?id={{1}}', dynamic_suffix: true },
    ]);
  });

  it('carousel cards must share header type and buttons', () => {
    const card = (type: 'image' | 'video', buttons: unknown[]) => ({
      header: { type, [type]: { link: 'https://cdn.example.com/m' } },
      body: { type: 'body', parameters: [{ type: 'text', text: 'Card' }] },
      buttons: { type: 'button', parameters: buttons },
    });
    const qr = { type: 'quick_reply', quick_reply: { value: 'More' } };
    expect(fields([body('b'), { type: 'carousel', components: [card('image', [qr]), card('video', [qr])] }])).toEqual([
      'components[1].components',
    ]);
    const ok = compileComponents([
      body('b'),
      { type: 'carousel', components: [card('image', [qr]), card('image', [qr])] },
    ]);
    expect(ok.ok && ok.value.carousel?.map((c) => c.header_type)).toEqual(['image', 'image']);
  });
});

describe('mapPlatformStatus', () => {
  it.each([
    ['APPROVED', 'NONE', { status: 'APPROVED', rejectedReason: null, platformStatus: null }],
    ['REINSTATED', 'NONE', { status: 'APPROVED', rejectedReason: null, platformStatus: null }],
    ['REJECTED', 'INVALID_FORMAT', { status: 'REJECTED', rejectedReason: 'INVALID_FORMAT', platformStatus: null }],
    ['REJECTED', null, { status: 'REJECTED', rejectedReason: 'NONE', platformStatus: null }],
    ['PAUSED', 'NONE', { status: 'PAUSED', rejectedReason: null, platformStatus: null }],
    ['DISABLED', 'LOW_QUALITY', { status: 'DISABLED', rejectedReason: 'LOW_QUALITY', platformStatus: null }],
    [
      'LIMIT_EXCEEDED',
      null,
      { status: 'REJECTED', rejectedReason: 'LIMIT_EXCEEDED', platformStatus: 'LIMIT_EXCEEDED' },
    ],
    ['IN_APPEAL', null, { status: 'PENDING', rejectedReason: null, platformStatus: 'IN_APPEAL' }],
    ['FLAGGED', null, null],
    ['SOMETHING_NEW', null, null],
  ])('%s (%s)', (event, reason, expected) => {
    expect(mapPlatformStatus(event, reason)).toEqual(expected);
  });
});

describe('shared rules: name, language, category', () => {
  it('accepts a valid create body and names every bad field with the DTO messages', () => {
    expect(templateFieldErrors({ template_name: 'order_update', language: 'en_US', category: 'UTILITY' })).toEqual([]);
    expect(templateFieldErrors({ template_name: 'Order Update', language: 'english', category: 'PROMO' })).toEqual([
      { field: 'template_name', message: 'template_name must be 1 to 512 lowercase letters, digits or underscores' },
      { field: 'category', message: 'category must be one of MARKETING, UTILITY, AUTHENTICATION' },
      { field: 'language', message: 'language must be a language code such as en or en_US' },
    ]);
  });
});

describe('previewOf', () => {
  const components = [
    { type: 'header', parameters: [{ type: 'text', text: 'Your order' }] },
    body('Hi {{name}}, order {{order_id}} ships {{day}}.', { name: 'Ann', order_id: 'A-17' }),
    { type: 'footer', parameters: [{ type: 'text', text: 'Reply STOP to opt out' }] },
    {
      type: 'button',
      parameters: [
        { type: 'quick_reply', quick_reply: { value: 'Track' } },
        { type: 'cta', cta: { text: 'URL', value: 'Open', url: 'https://shop.example/o/{{1}}' } },
        { type: 'cta', cta: { text: 'Phone', value: 'Call us', url: '+15550102030' } },
      ],
    },
  ];

  it('fills variables with the samples given, then the examples, and leaves the rest as written', () => {
    const p = previewOf(components, { name: 'Bob' });
    expect(previewText(p)).toBe('Hi Bob, order A-17 ships {{day}}.');
    expect(p.body.filter((part) => part.variable).map((part) => part.variable)).toEqual(['name', 'order_id', 'day']);
    expect(p.header).toEqual({ kind: 'text', text: 'Your order' });
    expect(p.footer).toBe('Reply STOP to opt out');
    expect(p.buttons).toEqual([
      { kind: 'quick_reply', text: 'Track' },
      { kind: 'url', text: 'Open', target: 'https://shop.example/o/{{1}}' },
      { kind: 'phone', text: 'Call us', target: '+15550102030' },
    ]);
  });

  it('previews what is there while a form is incomplete (no throw on odd shapes)', () => {
    expect(previewOf(undefined)).toEqual({ header: null, body: [], footer: null, buttons: [] });
    const p = previewOf([{ type: 'image', image: {} }, { type: 'body' }, null, { type: 'button', parameters: [{}] }]);
    expect(p).toEqual({ header: { kind: 'image', link: '' }, body: [], footer: null, buttons: [] });
  });
});
