import { validateSessionBody, validateTemplateItem } from './send-requests';

describe('template send request validation', () => {
  const item = (carouselData: unknown) => ({ templateName: 'cards', to: '+4915112345678', carouselData });

  it("refuses a card's cta_link that is not a string or a number, naming the card and key (it was sent as [object Object])", () => {
    expect(validateTemplateItem(item([{ cta_link: 'a-1' }, { cta_link_1: { x: 1 } }]), '').errors).toEqual([
      { field: 'carouselData[1].cta_link_1', message: 'carouselData[1].cta_link_1 must be a string or a number' },
    ]);
    expect(validateTemplateItem(item([{ cta_link: ['a'] }]), '[2]').errors).toEqual([
      { field: '[2].carouselData[0].cta_link', message: '[2].carouselData[0].cta_link must be a string or a number' },
    ]);
  });

  it("takes string and number links (or none: the template's own), and leaves other card keys alone", () => {
    const checked = validateTemplateItem(
      item([{ cta_link: 'a-1', note: { any: 1 } }, { cta_link1: 42 }, { cta_link: null }, { mediaUrl: undefined }]),
      '',
    );
    expect(checked.errors).toEqual([]);
    expect(checked.value).toBeDefined();
  });

  it('quick replies: titles and ids each unique (an id defaults to the title)', () => {
    const session = (buttons: unknown) =>
      validateSessionBody({ typOfmsg: 'quick_reply', receipentPhone: '4915112345678', message: 'Pick', buttons });
    expect(
      session([
        { text: 'Yes', id: 'A' },
        { text: 'Yes', id: 'B' },
      ]).errors,
    ).toEqual([{ field: 'buttons[1].text', message: 'buttons[1].text repeats "Yes"' }]);
    expect(
      session([
        { text: 'Yes', id: 'A' },
        { text: 'No', id: 'A' },
      ]).errors,
    ).toEqual([{ field: 'buttons[1].id', message: 'buttons[1].id repeats "A"' }]);
    expect(session([{ text: 'Yes', id: 'No' }, { text: 'No' }]).errors).toEqual([
      { field: 'buttons[1].text', message: 'buttons[1].text repeats "No"' },
    ]);
    expect(session([{ text: 'Yes', id: 'BOOK' }, { text: 'No' }]).errors).toEqual([]);
    expect(session([{ text: 'Yes', id: 'x'.repeat(257) }]).errors[0].field).toBe('buttons[0].id');
  });
});
