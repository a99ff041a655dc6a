import { inputFields, toFlowJson, validateDefinition } from './definition';

const screen = (id: string, children: unknown[]) => ({ id, title: id.toLowerCase(), layout: { children } });
const flow = (screens: unknown[]) => ({ name: 'f', categories: ['OTHER'], screens });

describe('validateDefinition', () => {
  it('accepts every SPEC field type and keeps the definition', () => {
    const def = flow([
      screen('A', [
        { type: 'TextHeading', text: 'h' },
        { type: 'TextSubheading', text: 's' },
        { type: 'TextBody', text: 'b' },
        { type: 'TextInput', name: 'x', label: 'X', 'input-type': 'number', required: false },
        { type: 'TextArea', name: 'y', label: 'Y' },
        { type: 'DatePicker', name: 'd', label: 'D' },
        { type: 'OptIn', name: 'o', label: 'O', required: true },
      ]),
      screen('B', [
        { type: 'Dropdown', name: 'dd', label: 'DD', options: [{ id: '1', title: 'One' }] },
        { type: 'RadioButtonsGroup', name: 'r', label: 'R', options: [{ id: '1', title: 'One' }] },
        { type: 'CheckboxGroup', name: 'c', label: 'C', options: [{ id: '1', title: 'One' }] },
        { type: 'PhotoPicker', name: 'p', label: 'P' },
        { type: 'Footer', label: 'Go' },
      ]),
    ]);
    const checked = validateDefinition(def);
    expect(checked).toEqual({ ok: true, value: def });
    const doc = flow([screen('A', [{ type: 'DocumentPicker', name: 'doc', label: 'Doc', description: 'PDF' }])]);
    expect(validateDefinition(doc)).toEqual({ ok: true, value: doc });
  });

  it('collects every error with its path', () => {
    const checked = validateDefinition(
      flow([screen('a', [{ type: 'TextInput', name: 'x' }]), screen('B', [{ type: 'Nope' }])]),
    );
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.map((e) => e.field)).toEqual([
      'flow.screens[0].id',
      'flow.screens[0].layout.children[0].label',
      'flow.screens[0].layout.children[0].input-type',
      'flow.screens[1].layout.children[0].type',
    ]);
    expect(checked.errors[2].message).toBe('flow.screens[0].layout.children[0].input-type is required for TextInput');
  });

  it('partial: name and categories may be left out', () => {
    expect(
      validateDefinition({ screens: [screen('A', [{ type: 'TextBody', text: 'x' }])] }, { partial: true }).ok,
    ).toBe(true);
    expect(validateDefinition({ screens: [screen('A', [{ type: 'TextBody', text: 'x' }])] }).ok).toBe(false);
  });

  it('at most 50 field objects per screen', () => {
    const many = Array.from({ length: 51 }, () => ({ type: 'TextBody', text: 'x' }));
    const checked = validateDefinition(flow([screen('A', many)]));
    expect(checked.ok ? [] : checked.errors.map((e) => e.field)).toEqual(['flow.screens[0].layout.children']);
  });
});

describe('toFlowJson', () => {
  it('three screens: data is carried forward and declared, the last completes with every field', () => {
    const screens = [
      screen('A', [{ type: 'TextInput', name: 'a', label: 'A', 'input-type': 'text' }]),
      screen('B', [
        { type: 'CheckboxGroup', name: 'b', label: 'B', options: [{ id: '1', title: 'One' }] },
        { type: 'OptIn', name: 'o', label: 'O' },
      ]),
      screen('C', [{ type: 'TextBody', text: 'Thanks' }]),
    ] as any;
    const json = toFlowJson(screens) as any;
    expect(json.version).toBe('6.0');
    expect(json.screens.map((s: any) => s.terminal ?? false)).toEqual([false, false, true]);
    expect(json.screens[1].data).toEqual({ a: { type: 'string', __example__: 'Example' } });
    expect(json.screens[2].data).toEqual({
      a: { type: 'string', __example__: 'Example' },
      b: { type: 'array', items: { type: 'string' }, __example__: [] },
      o: { type: 'boolean', __example__: false },
    });
    expect(json.screens[1].layout.children.at(-1)).toEqual({
      type: 'Footer',
      label: 'Continue',
      'on-click-action': {
        name: 'navigate',
        next: { type: 'screen', name: 'C' },
        payload: { a: '${data.a}', b: '${form.b}', o: '${form.o}' },
      },
    });
    expect(json.screens[2].layout.children.at(-1)['on-click-action']).toEqual({
      name: 'complete',
      payload: { a: '${data.a}', b: '${data.b}', o: '${data.o}' },
    });
    expect(inputFields(screens).map((f) => f.name)).toEqual(['a', 'b', 'o']);
  });
});
