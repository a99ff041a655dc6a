import {
  emptyForm,
  formErrors,
  fromComponents,
  keyed,
  requestBody,
  toComponents,
  type TemplateForm,
} from './template-form';

const filled = (over: Partial<TemplateForm> = {}): TemplateForm => ({
  ...emptyForm('618843841899863'),
  template_name: 'order_update',
  header: { kind: 'text', text: 'Your order', link: '' },
  body: 'Hi {{name}}, order {{order_id}} ships today.',
  examples: { name: 'Ann', order_id: 'A-17' },
  footer: 'Reply STOP to opt out',
  buttons: [
    { kind: 'quick_reply', text: 'Track', target: '' },
    { kind: 'quick_reply', text: 'Stop', target: '' },
  ],
  ...over,
});

describe('template form (the server rules on the console form)', () => {
  it('a complete form has no errors and gives the API body, which reads back into the same form', () => {
    const form = filled();
    expect(formErrors(form, 'create')).toEqual({});
    const body = requestBody(form, 'create');
    expect(body.components).toEqual([
      { type: 'header', parameters: [{ type: 'text', text: 'Your order' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Hi {{name}}, order {{order_id}} ships today.' },
          { type: 'variable', variable: { text: 'name', value: 'Ann' } },
          { type: 'variable', variable: { text: 'order_id', value: 'A-17' } },
        ],
      },
      { type: 'footer', parameters: [{ type: 'text', text: 'Reply STOP to opt out' }] },
      {
        type: 'button',
        parameters: [
          { type: 'quick_reply', quick_reply: { value: 'Track' } },
          { type: 'quick_reply', quick_reply: { value: 'Stop' } },
        ],
      },
    ]);
    expect(fromComponents(emptyForm('618843841899863'), body.components)).toEqual({
      ...form,
      template_name: '',
    });
  });

  it('puts each rule error on its field: name, header, a variable example, a button, the body', () => {
    const errors = formErrors(
      filled({
        template_name: 'Order Update',
        header: { kind: 'text', text: 'x'.repeat(61), link: '' },
        examples: { name: 'Ann', order_id: '' },
        buttons: [
          { kind: 'quick_reply', text: 'Track', target: '' },
          { kind: 'quick_reply', text: 'Track', target: '' },
        ],
      }),
      'create',
    );
    expect(errors).toEqual({
      template_name: 'template_name must be 1 to 512 lowercase letters, digits or underscores',
      header: 'header text must be at most 60 characters',
      'example.order_id': 'variable order_id needs an example value',
      'button.1': 'button label "Track" is used twice',
    });
    expect(formErrors(filled({ body: '{{name}} ships' }), 'create')).toEqual({
      body: 'the body text cannot start or end with a variable (a platform rule)',
    });
  });

  it("maps the server's 400 errors[] the same way, and leaves the name alone when editing", () => {
    const form = filled();
    const { sections } = toComponents(form);
    expect(keyed([{ field: 'components[3].parameters[0].quick_reply.value', message: 'm' }], form, sections)).toEqual({
      'button.0': 'm',
    });
    expect(formErrors(filled({ template_name: 'Bad Name' }), 'edit')).toEqual({});
    expect(requestBody(form, 'edit')).toEqual({ components: toComponents(form).components, category: 'MARKETING' });
  });
});
