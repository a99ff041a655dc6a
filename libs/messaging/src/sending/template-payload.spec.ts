import { buildTemplateComponents, ctaLinkIndex, isBodyKey, TemplateForSend } from './template-payload';

const template = (over: Partial<TemplateForSend> = {}): TemplateForSend => ({
  name: 't',
  language: 'en_US',
  category: 'UTILITY',
  variables: ['a', 'b'],
  headerType: 'none',
  buttons: [],
  carousel: null,
  ...over,
});

describe('template send components', () => {
  it('body keys and cta_link indexes', () => {
    expect(['name', 'email', 'custom', 'custom_x', 'customer'].every(isBodyKey)).toBe(true);
    expect(['Name', 'code', 'cta_link', 'x_custom'].some(isBodyKey)).toBe(false);
    expect([
      ctaLinkIndex('cta_link'),
      ctaLinkIndex('cta_link_0'),
      ctaLinkIndex('cta_link1'),
      ctaLinkIndex('cta_link_2'),
      ctaLinkIndex('cta_linkx'),
    ]).toEqual([0, 0, 1, 2, null]);
  });

  it('fills body variables in key order and names them after the template', () => {
    const built = buildTemplateComponents(template(), { variables: { custom_2: 'second', other: 'x', name: 'first' } });
    expect(built).toEqual({
      ok: true,
      bodyText: ['second', 'first'],
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'second', parameter_name: 'a' },
            { type: 'text', text: 'first', parameter_name: 'b' },
          ],
        },
      ],
    });
  });

  it('refuses a count mismatch, a missing media URL, a missing cta_link, an extra cta_link, a missing code', () => {
    expect(buildTemplateComponents(template(), { variables: { name: 'x' } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('expects 2 body variable(s) (a, b), got 1'),
    });
    expect(buildTemplateComponents(template({ variables: [], headerType: 'video' }), {})).toEqual({
      ok: false,
      reason: 'mediaUrl is required: template t has a video header',
    });
    const buttons = [{ index: 1, type: 'url', text: 'Go', dynamic_suffix: true }];
    expect(buildTemplateComponents(template({ variables: [], buttons }), {})).toMatchObject({
      ok: false,
      reason: expect.stringContaining('variables.cta_link is required'),
    });
    expect(
      buildTemplateComponents(template({ variables: [], buttons }), { variables: { cta_link: 'a', cta_link1: 'b' } }),
    ).toMatchObject({ ok: false, reason: expect.stringContaining('cta_link1 has no button') });
    expect(buildTemplateComponents(template({ variables: ['code'], category: 'AUTHENTICATION' }), {})).toMatchObject({
      ok: false,
      reason: expect.stringContaining('variables.code is required'),
    });
  });

  it('refuses an empty body variable, and one the platform refuses (line break, tab, 5 spaces), naming its key', () => {
    expect(buildTemplateComponents(template(), { variables: { name: 'Ann', custom_order: '' } })).toEqual({
      ok: false,
      reason: 'variables.custom_order must not be empty (a body variable)',
    });
    const refused = (value: string) =>
      buildTemplateComponents(template(), { variables: { name: 'Ann', custom_order: value } });
    for (const value of ['A-1\nA-2', 'A-1\r\n', 'A-1\tA-2', 'A-1     A-2']) {
      expect(refused(value)).toEqual({
        ok: false,
        reason:
          'variables.custom_order must not contain line breaks, tabs or more than 4 spaces in a row (the platform refuses such a variable)',
      });
    }
    expect(refused('A-1    A-2')).toMatchObject({ ok: true }); // four spaces are allowed
    expect(
      buildTemplateComponents(template({ variables: ['code'], category: 'AUTHENTICATION' }), {
        variables: { code: '12\t34' },
      }),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/^variables\.code must not contain line breaks/) });
  });

  it('document header with documentName (default doc), carousel with overrides', () => {
    const doc = buildTemplateComponents(template({ variables: [], headerType: 'document' }), {
      mediaUrl: 'https://e.com/a.pdf',
    });
    expect(doc.ok && doc.components[0]).toEqual({
      type: 'header',
      parameters: [{ type: 'document', document: { link: 'https://e.com/a.pdf', filename: 'doc' } }],
    });
    const carousel = [
      {
        header_type: 'image' as const,
        media_link: 'https://e.com/1.png',
        buttons: [{ index: 0, type: 'url', dynamic_suffix: true }],
      },
      {
        header_type: 'image' as const,
        media_link: 'https://e.com/2.png',
        buttons: [{ index: 0, type: 'url', dynamic_suffix: true }],
      },
    ];
    // every card's dynamic URL needs its value (Meta refuses the message without it)
    expect(
      buildTemplateComponents(template({ variables: [], carousel }), {
        carouselData: [{ mediaUrl: 'https://e.com/x.png', cta_link: 'p1' }, {}],
      }),
    ).toEqual({
      ok: false,
      reason: 'carouselData[1].cta_link is required: the URL button of card 2 of template t has a dynamic part',
    });
    expect(buildTemplateComponents(template({ variables: [], carousel }), {})).toMatchObject({ ok: false });
    const built = buildTemplateComponents(template({ variables: [], carousel }), {
      carouselData: [{ mediaUrl: 'https://e.com/x.png', cta_link: 'p1' }, { cta_link: 'p2' }],
    });
    expect(built.ok && built.components[0]).toEqual({
      type: 'carousel',
      cards: [
        {
          card_index: 0,
          components: [
            { type: 'header', parameters: [{ type: 'image', image: { link: 'https://e.com/x.png' } }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'p1' }] },
          ],
        },
        {
          card_index: 1,
          components: [
            { type: 'header', parameters: [{ type: 'image', image: { link: 'https://e.com/2.png' } }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'p2' }] },
          ],
        },
      ],
    });
    expect(buildTemplateComponents(template({ variables: [], carousel }), { carouselData: [{}] })).toMatchObject({
      ok: false,
      reason: 'carouselData must have 2 card(s), like template t',
    });
  });
});
