import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWebhook } from './parse-webhook';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(__dirname, '../../../../test/fixtures/whatsapp', `${name}.json`), 'utf8'));

const PN = '106540352242922';
const WABA = '102290129340398';
const WAMID = 'wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI3NkM0RDBGMzQ0NjQ4QkMzRTAA';

describe('parseWebhook on Meta sample payloads', () => {
  it.each([
    ['status-sent', 'sent', 1750030073],
    ['status-delivered', 'delivered', 1750030074],
    ['status-read', 'read', 1750030101],
  ])('%s', (name, status, timestamp) => {
    expect(parseWebhook(fixture(name))).toEqual([
      expect.objectContaining({
        kind: 'status',
        wamid: WAMID,
        status,
        timestamp,
        recipientId: '16505551234',
        phoneNumberId: PN,
        wabaId: WABA,
      }),
    ]);
  });

  it('keeps conversation, pricing and callback data of a sent status', () => {
    expect(parseWebhook(fixture('status-sent'))[0]).toMatchObject({
      conversationId: 'f5f4a5d1e0b6c6c63bd0d8f1b0a4b5c2',
      pricingCategory: 'utility',
      bizOpaqueCallbackData: 'order-42',
    });
  });

  it('status-failed carries the errors', () => {
    const [ev] = parseWebhook(fixture('status-failed'));
    expect(ev).toEqual({
      kind: 'status',
      wabaId: WABA,
      phoneNumberId: PN,
      wamid: WAMID,
      status: 'failed',
      timestamp: 1750030075,
      recipientId: '16505551234',
      errors: [
        {
          code: 131026,
          title: 'Message undeliverable',
          message: 'Message undeliverable',
          details: 'Message Undeliverable.',
        },
      ],
    });
  });

  it('text message with profile name', () => {
    expect(parseWebhook(fixture('message-text'))).toEqual([
      {
        kind: 'message',
        wabaId: WABA,
        phoneNumberId: PN,
        wamid: 'wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRCRDcwNzgzMUJGQjM4QzJBMwA=',
        from: '16505551234',
        timestamp: 1749416383,
        type: 'text',
        text: 'Does it come in another color?',
        profileName: 'Sheena Nelson',
      },
    ]);
  });

  it('quick-reply template button', () => {
    expect(parseWebhook(fixture('message-button'))[0]).toMatchObject({
      type: 'button',
      buttonPayload: 'STOP_PROMOS',
      buttonText: 'Stop promotions',
      contextWamid: WAMID,
    });
  });

  it('interactive button reply and list reply', () => {
    expect(parseWebhook(fixture('message-interactive-button-reply'))[0]).toMatchObject({
      type: 'interactive',
      interactiveType: 'button_reply',
      buttonPayload: 'change-button',
      buttonText: 'Change',
      contextWamid: WAMID,
    });
    expect(parseWebhook(fixture('message-interactive-list-reply'))[0]).toMatchObject({
      interactiveType: 'list_reply',
      buttonPayload: 'priority_express',
      buttonText: 'Priority Mail Express',
    });
  });

  it('flow reply (nfm_reply) with the parsed response_json', () => {
    expect(parseWebhook(fixture('message-nfm-reply'))[0]).toMatchObject({
      type: 'interactive',
      interactiveType: 'nfm_reply',
      flowResponse: { flow_token: 'run-7f3a', email: 'sheena@example.com', plan: 'pro' },
      text: 'Sent',
      contextWamid: WAMID,
    });
  });

  it('media message', () => {
    expect(parseWebhook(fixture('message-image'))[0]).toMatchObject({
      type: 'image',
      text: 'Here is the damage',
      media: { id: '1003383421387256', mime_type: 'image/jpeg', caption: 'Here is the damage' },
    });
  });

  it('location and reaction messages', () => {
    const message = (m: Record<string, unknown>) => ({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: WABA,
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: PN },
                messages: [{ from: '16505551234', id: 'wamid.X', timestamp: '1750030000', ...m }],
              },
            },
          ],
        },
      ],
    });
    expect(
      parseWebhook(
        message({
          type: 'location',
          location: { latitude: 52.52, longitude: 13.405, name: 'Office', address: 'Main St 1' },
        }),
      )[0],
    ).toMatchObject({
      type: 'location',
      location: { latitude: 52.52, longitude: 13.405, name: 'Office', address: 'Main St 1' },
    });
    expect(
      parseWebhook(message({ type: 'reaction', reaction: { message_id: 'wamid.OURS', emoji: '👍' } }))[0],
    ).toMatchObject({
      type: 'reaction',
      reaction: { messageId: 'wamid.OURS', emoji: '👍' },
    });
    expect(parseWebhook(message({ type: 'reaction', reaction: { message_id: 'wamid.OURS' } }))[0]).toMatchObject({
      reaction: { messageId: 'wamid.OURS', emoji: null },
    });
  });

  it('template status updates', () => {
    expect(parseWebhook(fixture('template-status-update'))).toEqual([
      {
        kind: 'template_status',
        wabaId: WABA,
        templateId: '1689556908129832',
        templateName: 'order_confirmation',
        language: 'en_US',
        event: 'APPROVED',
        reason: 'NONE',
        category: 'UTILITY',
      },
    ]);
    expect(parseWebhook(fixture('template-status-rejected'))[0]).toMatchObject({
      event: 'REJECTED',
      reason: 'INCORRECT_CATEGORY',
    });
  });

  it('unknown fields become unknown events', () => {
    expect(parseWebhook(fixture('account-update'))).toEqual([
      { kind: 'unknown', wabaId: WABA, field: 'account_update' },
    ]);
  });
});

describe('parseWebhook tolerance', () => {
  it('never throws on junk', () => {
    for (const junk of [
      null,
      undefined,
      42,
      'x',
      [],
      {},
      { entry: 'x' },
      { entry: [null, { changes: [null, { field: 'messages' }] }] },
    ]) {
      expect(() => parseWebhook(junk)).not.toThrow();
    }
    expect(
      parseWebhook({
        entry: [{ changes: [{ field: 'messages', value: { statuses: [{ status: 'sent' }], messages: [{}] } }] }],
      }),
    ).toEqual([]);
  });

  it('ignores unknown extra fields and flattens several entries, changes and items', () => {
    const body = {
      object: 'whatsapp_business_account',
      future_field: true,
      entry: [
        {
          id: 'W1',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: 'P1', extra: 1 },
                statuses: [
                  { id: 'wamid.a', status: 'delivered', timestamp: '1', recipient_id: 'R', new_thing: {} },
                  { id: 'wamid.b', status: 'read', timestamp: '2', recipient_id: 'R' },
                ],
              },
            },
          ],
        },
        {
          id: 'W2',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: 'P2' },
                messages: [{ id: 'wamid.c', from: 'F', timestamp: '3', type: 'reaction', reaction: {} }],
              },
            },
          ],
        },
      ],
    };
    expect(parseWebhook(body).map((e) => [e.kind, e.wabaId, (e as { wamid?: string }).wamid])).toEqual([
      ['status', 'W1', 'wamid.a'],
      ['status', 'W1', 'wamid.b'],
      ['message', 'W2', 'wamid.c'],
    ]);
  });

  it('keeps a response_json that is not JSON as raw', () => {
    const body = {
      entry: [
        {
          changes: [
            {
              field: 'messages',
              value: {
                messages: [
                  {
                    id: 'w',
                    from: 'f',
                    timestamp: '1',
                    type: 'interactive',
                    interactive: { type: 'nfm_reply', nfm_reply: { response_json: '{oops' } },
                  },
                ],
              },
            },
          ],
        },
      ],
    };
    expect(parseWebhook(body)[0]).toMatchObject({ flowResponse: { raw: '{oops' } });
  });
});

describe('parseWebhook on the collected real payloads (test/fixtures/meta)', () => {
  const meta = (name: string): unknown =>
    JSON.parse(readFileSync(join(__dirname, '../../../../test/fixtures/meta', `${name}.json`), 'utf8')).payload;

  it('location, contacts, reaction and order keep their content', () => {
    expect(parseWebhook(meta('message-location'))[0]).toMatchObject({
      type: 'location',
      location: {
        latitude: 37.483253479003906,
        longitude: -122.14960479736328,
        name: 'Main Office',
        address: '1 Hacker Way, Menlo Park, CA 94025',
        url: 'https://www.meta.com',
      },
    });
    const [vcard] = parseWebhook(meta('message-contacts')) as any[];
    expect(vcard.contacts[0]).toMatchObject({
      name: { formatted_name: 'Barbara J. Johnson' },
      phones: [{ phone: '+1 (940) 555-1234', wa_id: '19405551234' }],
    });
    expect(parseWebhook(meta('message-reaction'))[0]).toMatchObject({
      reaction: { messageId: 'wamid.OUR-REACTED-MESSAGE', emoji: '👍' },
      contextWamid: 'wamid.OUR-REACTED-MESSAGE',
    });
    expect(parseWebhook(meta('message-order'))[0]).toMatchObject({
      order: {
        catalogId: '194836987003835',
        productItems: [
          { productRetailerId: 'di9ozbzfi4', quantity: 2, itemPrice: 30, currency: 'USD' },
          expect.anything(),
        ],
      },
    });
  });

  it.each(['message-system-number-changed', 'message-revoke', 'message-edit', 'message-reaction-removed'])(
    '%s is informational',
    (name) => {
      expect(parseWebhook(meta(name))[0]).toMatchObject({ kind: 'message', informational: true });
    },
  );

  it('a customer message is not informational', () => {
    expect((parseWebhook(meta('message-text'))[0] as any).informational).toBeUndefined();
  });

  it('an unknown type becomes unsupported with the raw message', () => {
    expect(parseWebhook(meta('message-unknown-future-type'))[0]).toMatchObject({
      type: 'unsupported',
      originalType: 'hologram',
      raw: { type: 'hologram', hologram: { id: 'h-1', mode: '3d' } },
    });
  });

  it('a sender known only by a business-scoped user id', () => {
    expect(parseWebhook(meta('message-bsuid-only'))[0]).toMatchObject({
      from: 'US.13491208655302741918',
      fromUserId: 'US.13491208655302741918',
      username: '@sheena.n',
      profileName: 'Sheena',
    });
    expect(parseWebhook(meta('status-delivered-bsuid'))[0]).toMatchObject({
      kind: 'status',
      recipientId: 'US.13491208655302741918',
      recipientUserId: 'US.13491208655302741918',
    });
  });

  it('v24 statuses: pricing type, conversation only for free entry point', () => {
    const [v24] = parseWebhook(meta('status-sent-v24')) as any[];
    expect(v24).toMatchObject({ pricingCategory: 'utility', pricingType: 'regular' });
    expect(v24.conversationId).toBeUndefined();
    expect(parseWebhook(meta('status-sent-free-entry-point'))[0]).toMatchObject({
      conversationOrigin: 'free_entry_point',
      pricingType: 'free_entry_point',
    });
  });

  it('template_category_update', () => {
    expect(parseWebhook(meta('template-category-update'))).toEqual([
      {
        kind: 'template_category',
        wabaId: '102290129340398',
        templateId: '806312974732583',
        templateName: 'order_update',
        language: 'en_US',
        previousCategory: 'UTILITY',
        newCategory: 'MARKETING',
      },
    ]);
  });
});
