import {
  buttonsMessage,
  ctaUrlMessage,
  flowMessage,
  mediaMessage,
  templateMessage,
  textMessage,
} from './message-builders';

/** The request bodies every sender stores and sends (Meta's shapes for POST /{phone-number-id}/messages). */
describe('message builders', () => {
  const base = { messaging_product: 'whatsapp', recipient_type: 'individual', to: '4915112345678' };

  it('text, with preview and reply context', () => {
    expect(textMessage('4915112345678', 'see https://x.y', { previewUrl: true, replyTo: 'wamid.1' })).toEqual({
      ...base,
      context: { message_id: 'wamid.1' },
      type: 'text',
      text: { body: 'see https://x.y', preview_url: true },
    });
  });

  it('media by link: caption, and filename for documents', () => {
    expect(
      mediaMessage('4915112345678', 'document', 'https://x.y/a.pdf', { caption: 'invoice', filename: 'a.pdf' }),
    ).toEqual({
      ...base,
      type: 'document',
      document: { link: 'https://x.y/a.pdf', caption: 'invoice', filename: 'a.pdf' },
    });
    expect(mediaMessage('4915112345678', 'image', 'https://x.y/a.png')).toEqual({
      ...base,
      type: 'image',
      image: { link: 'https://x.y/a.png' },
    });
  });

  it('template: components only when there are some', () => {
    expect(templateMessage('4915112345678', 'hello', 'en')).toEqual({
      ...base,
      type: 'template',
      template: { name: 'hello', language: { code: 'en' } },
    });
    const components = [{ type: 'body' as const, parameters: [{ type: 'text' as const, text: 'Ann' }] }];
    expect(templateMessage('4915112345678', 'order', 'en_US', components)).toEqual({
      ...base,
      type: 'template',
      template: { name: 'order', language: { code: 'en_US' }, components },
    });
  });

  it('interactive buttons and call-to-action URL, with header and footer', () => {
    expect(
      buttonsMessage('4915112345678', {
        body: 'Pick',
        header: { type: 'text', text: 'Hi' },
        footer: 'f',
        buttons: [{ id: 'y', title: 'Yes' }],
      }),
    ).toEqual({
      ...base,
      type: 'interactive',
      interactive: {
        type: 'button',
        header: { type: 'text', text: 'Hi' },
        body: { text: 'Pick' },
        footer: { text: 'f' },
        action: { buttons: [{ type: 'reply', reply: { id: 'y', title: 'Yes' } }] },
      },
    });
    expect(ctaUrlMessage('4915112345678', { body: 'Offer', displayText: 'Open', url: 'https://x.y' })).toEqual({
      ...base,
      type: 'interactive',
      interactive: {
        type: 'cta_url',
        body: { text: 'Offer' },
        action: { name: 'cta_url', parameters: { display_text: 'Open', url: 'https://x.y' } },
      },
    });
  });

  it('flow: version 3, token, first screen; a flow id or name is required', () => {
    expect(
      flowMessage('4915112345678', {
        body: 'Sign up',
        flowId: '123',
        flowCta: 'Start',
        flowToken: 't1',
        flowAction: 'navigate',
        screen: 'WELCOME',
      }),
    ).toEqual({
      ...base,
      type: 'interactive',
      interactive: {
        type: 'flow',
        body: { text: 'Sign up' },
        action: {
          name: 'flow',
          parameters: {
            flow_message_version: '3',
            flow_cta: 'Start',
            flow_id: '123',
            flow_token: 't1',
            flow_action: 'navigate',
            flow_action_payload: { screen: 'WELCOME' },
          },
        },
      },
    });
    expect(() => flowMessage('4915112345678', { body: 'x', flowCta: 'Go' })).toThrow(
      'flowMessage: flowId or flowName is required',
    );
  });
});
