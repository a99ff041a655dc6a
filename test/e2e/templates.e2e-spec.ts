import { Repository } from 'typeorm';
import { CloudApiClient, CloudApiError, parseWebhook, TemplateStatusEvent } from '@switchboard/whatsapp';
import { TemplatesService } from '@switchboard/templates';
import { createSandbox, Sandbox } from '../../apps/sandbox/src/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * SPEC §4 Templates, end to end: the real API, the real Cloud API client, the sandbox over HTTP as the platform
 * (short review delay; names starting with manual_ wait for the reviewer, reject_ are rejected).
 */
describe('Templates', () => {
  let t: TestApp;
  let sandbox: Sandbox;
  let sandboxUrl: string;

  beforeAll(async () => {
    sandbox = createSandbox({
      quiet: true,
      templateReviewDelayMs: 150,
      statusWebhooks: false,
      webhookUrl: 'http://127.0.0.1:9/webhooks/whatsapp',
    });
    sandboxUrl = await sandbox.listen(0);
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(async () => {
    await t?.close();
    await sandbox?.close();
  });

  const account = () => t.createAccount({ apiBaseUrl: sandboxUrl });

  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sandboxUrl}${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.json() as Promise<any>;
  };
  const platformTemplates = async (name?: string): Promise<any[]> =>
    (await control('GET', '/_sandbox/templates')).data.filter((x: any) => !name || x.name === name);
  const review = (name: string, status: string, reason?: string) =>
    control('POST', '/_sandbox/templates/review', { name, status, reason });
  const waitForPlatformStatus = async (name: string, status: string) => {
    for (let i = 0; i < 100; i++) {
      const [tpl] = await platformTemplates(name);
      if (tpl?.status === status) return tpl;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${name} never became ${status} on the platform`);
  };
  /** The sandbox's message_template_status_update webhooks for `name`, parsed as the webhook processor will parse them. */
  const statusEvents = async (name: string): Promise<TemplateStatusEvent[]> => {
    const { data } = await control('GET', '/_sandbox/webhooks?field=message_template_status_update');
    return data
      .flatMap((w: any) => parseWebhook(typeof w.body === 'string' ? JSON.parse(w.body) : w.body))
      .filter((e: any) => e.kind === 'template_status' && e.templateName === name);
  };
  const service = () => t.app.get(TemplatesService);

  const orderUpdate = (a: TestAccount, name: string, extra: Record<string, unknown> = {}) => ({
    template_name: name,
    category: 'UTILITY',
    language: 'en_US',
    messagingPhoneId: a.messagingPhoneId,
    components: [
      { type: 'header', parameters: [{ type: 'text', text: 'Your order' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Hi {{name}}, order {{order_id}} ships on {{date}}. Thanks {{name}}!' },
          { type: 'variable', variable: { text: 'order_id', value: 'A-1001' } },
          { type: 'variable', variable: { text: 'name', value: 'Ann' } },
          { type: 'variable', variable: { text: 'date', value: 'Monday' } },
        ],
      },
      { type: 'footer', parameters: [{ type: 'text', text: 'Reply STOP to opt out' }] },
      {
        type: 'button',
        parameters: [
          { type: 'quick_reply', quick_reply: { value: 'Track' } },
          { type: 'quick_reply', quick_reply: { value: 'Stop' } },
          { type: 'cta', cta: { text: 'URL', value: 'Open order', url: 'https://shop.example.com/orders/{{1}}' } },
          { type: 'cta', cta: { text: 'Phone', value: 'Call us', url: '+1 555 010 2030' } },
        ],
      },
    ],
    ...extra,
  });
  const simple = (a: TestAccount, name: string, text = 'Hello {{name}}, welcome.') => ({
    template_name: name,
    category: 'MARKETING',
    language: 'en',
    messagingPhoneId: a.messagingPhoneId,
    components: [
      {
        type: 'body',
        parameters: [
          { type: 'text', text },
          ...(text.includes('{{name}}') ? [{ type: 'variable', variable: { text: 'name', value: 'Ann' } }] : []),
        ],
      },
    ],
  });
  const create = async (a: TestAccount, body: unknown) => {
    const res = await t.http.post('/templates/create', body, { token: a.token });
    expect(res.status).toBe(200);
    return res.body;
  };

  describe('POST /templates/create', () => {
    it('submits the template in Meta’s shape and stores it PENDING with the variables in body order', async () => {
      const a = await account();
      const res = await t.http.post('/templates/create', orderUpdate(a, 'manual_order_update'), { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: expect.objectContaining({
          template_name: 'manual_order_update',
          category: 'UTILITY',
          language: 'en_US',
          status: 'PENDING',
          variables: ['name', 'order_id', 'date'],
          messagingPhoneId: a.messagingPhoneId,
          categoryChangeAllowed: false,
          header_type: 'text',
          components: orderUpdate(a, 'x').components,
        }),
      });

      const [platform] = await platformTemplates('manual_order_update');
      expect(platform).toMatchObject({
        status: 'PENDING',
        language: 'en_US',
        category: 'UTILITY',
        parameter_format: 'NAMED',
        id: res.body.data.platform_template_id,
      });
      expect(platform.components).toEqual([
        { type: 'HEADER', format: 'TEXT', text: 'Your order' },
        {
          type: 'BODY',
          text: 'Hi {{name}}, order {{order_id}} ships on {{date}}. Thanks {{name}}!',
          example: {
            body_text_named_params: [
              { param_name: 'name', example: 'Ann' },
              { param_name: 'order_id', example: 'A-1001' },
              { param_name: 'date', example: 'Monday' },
            ],
          },
        },
        { type: 'FOOTER', text: 'Reply STOP to opt out' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Track' },
            { type: 'QUICK_REPLY', text: 'Stop' },
            {
              type: 'URL',
              text: 'Open order',
              url: 'https://shop.example.com/orders/{{1}}',
              example: ['https://shop.example.com/orders/example'],
            },
            { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550102030' },
          ],
        },
      ]);
      const [row] = await t.db.query(
        'SELECT status, variables, header_type, buttons, phone_number_id FROM templates WHERE name = $1',
        ['manual_order_update'],
      );
      expect(row).toMatchObject({ status: 'PENDING', variables: ['name', 'order_id', 'date'], header_type: 'text' });
      expect(row.buttons.filter((b: any) => b.dynamic_suffix)).toEqual([
        {
          index: 2,
          type: 'url',
          text: 'Open order',
          url: 'https://shop.example.com/orders/{{1}}',
          dynamic_suffix: true,
        },
      ]);
    });

    it('translates media headers and carousels', async () => {
      const a = await account();
      const media = await create(a, {
        ...simple(a, 'manual_invoice'),
        components: [
          { type: 'document', document: { link: 'https://cdn.example.com/invoice.pdf' } },
          ...simple(a, 'x').components,
        ],
        categoryChangeAllowed: true,
      });
      expect(media.data).toMatchObject({ header_type: 'document', categoryChangeAllowed: true, variables: ['name'] });
      const [mediaPlatform] = await platformTemplates('manual_invoice');
      expect(mediaPlatform.components[0]).toEqual({
        type: 'HEADER',
        format: 'DOCUMENT',
        example: { header_handle: ['https://cdn.example.com/invoice.pdf'] },
      });

      const card = (n: number) => ({
        header: { type: 'image', image: { link: `https://cdn.example.com/p${n}.jpg` } },
        body: { type: 'body', parameters: [{ type: 'text', text: `Product ${n}` }] },
        buttons: {
          type: 'button',
          parameters: [{ type: 'cta', cta: { text: 'URL', value: 'Buy', url: `https://shop.example.com/p/${n}` } }],
        },
      });
      const carousel = await create(a, {
        ...simple(a, 'manual_carousel'),
        components: [...simple(a, 'x').components, { type: 'carousel', components: [card(1), card(2)] }],
      });
      expect(carousel.success).toBe(true);
      const [carouselPlatform] = await platformTemplates('manual_carousel');
      expect(carouselPlatform.components[1]).toEqual({
        type: 'CAROUSEL',
        cards: [1, 2].map((n) => ({
          components: [
            { type: 'HEADER', format: 'IMAGE', example: { header_handle: [`https://cdn.example.com/p${n}.jpg`] } },
            { type: 'BODY', text: `Product ${n}` },
            { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Buy', url: `https://shop.example.com/p/${n}` }] },
          ],
        })),
      });
    });

    it('a taken name or an unknown messagingPhoneId: 200 with data a string, nothing submitted', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_welcome'));
      const before = (await platformTemplates()).length;

      const dup = await t.http.post(
        '/templates/create',
        { ...simple(a, 'manual_welcome'), language: 'de' },
        { token: a.token },
      );
      expect(dup.status).toBe(200);
      expect(dup.body).toEqual({ success: false, data: 'Template name already exists' });

      const unknownPhone = await t.http.post(
        '/templates/create',
        { ...simple(a, 'manual_other'), messagingPhoneId: '999999999' },
        { token: a.token },
      );
      expect(unknownPhone.status).toBe(200);
      expect(unknownPhone.body).toEqual({ success: false, data: 'Phone number not found' });

      const b = await account();
      const othersPhone = await t.http.post(
        '/templates/create',
        { ...simple(a, 'manual_other'), messagingPhoneId: b.messagingPhoneId },
        { token: a.token },
      );
      expect(othersPhone.body).toEqual({ success: false, data: 'Phone number not found' });

      expect((await platformTemplates()).length).toBe(before);
      const [{ count }] = await t.db.query('SELECT count(*)::int AS count FROM templates WHERE account_id = $1', [
        a.accountId,
      ]);
      expect(count).toBe(1);
    });

    it('two identical creates at once: one template, one string answer, one submission', async () => {
      const a = await account();
      const results = await Promise.all(
        [1, 2].map(() => t.http.post('/templates/create', simple(a, 'manual_race'), { token: a.token })),
      );
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect(results.map((r) => typeof r.body.data).sort()).toEqual(['object', 'string']);
      expect(await platformTemplates('manual_race')).toHaveLength(1);
    });

    it("one name in two languages at once: one template, one string answer (a name is the account's once)", async () => {
      const a = await account();
      // both requests read "no such name" before either reserves it, as under load
      const existsBy = Repository.prototype.existsBy;
      const spy = jest.spyOn(Repository.prototype, 'existsBy').mockImplementation(async function (this: any, where) {
        const answer = await existsBy.call(this, where);
        await new Promise((r) => setTimeout(r, 300));
        return answer;
      });
      const results = await Promise.all(
        ['en', 'en_US'].map((language) =>
          t.http.post('/templates/create', { ...simple(a, 'manual_two_languages'), language }, { token: a.token }),
        ),
      );
      spy.mockRestore();
      expect(results.map((r) => typeof r.body.data).sort()).toEqual(['object', 'string']);
      expect(results.find((r) => typeof r.body.data === 'string')!.body.data).toBe('Template name already exists');
      const rows = await t.db.query('SELECT language FROM templates WHERE account_id = $1 AND name = $2', [
        a.accountId,
        'manual_two_languages',
      ]);
      expect(rows).toHaveLength(1);
      expect(await platformTemplates('manual_two_languages')).toHaveLength(1);
    });

    it('a name that already exists on the platform (made outside Switchboard) is reported the same way', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_outside'));
      await t.db.query('DELETE FROM templates WHERE account_id = $1', [a.accountId]); // as if created in Meta's UI
      const res = await t.http.post('/templates/create', simple(a, 'manual_outside'), { token: a.token });
      expect(res.body).toEqual({ success: false, data: 'Template name already exists' });
      expect(await t.db.query('SELECT 1 FROM templates WHERE account_id = $1', [a.accountId])).toEqual([]);
    });

    it('a platform failure is a 502 with the platform’s message and leaves no record', async () => {
      await control('POST', '/_sandbox/config', { invalidTokens: ['expired-token'] });
      const a = await t.createAccount({ apiBaseUrl: sandboxUrl, accessToken: 'expired-token' });
      const res = await t.http.post('/templates/create', simple(a, 'manual_broken'), { token: a.token });
      expect(res.status).toBe(502);
      expect(res.body.message).toMatch(/^The platform did not accept the request: .*Session has expired/);
      expect(res.body.platform_error).toMatchObject({ code: 190 });
      expect(await t.db.query('SELECT 1 FROM templates WHERE account_id = $1', [a.accountId])).toEqual([]);
      expect(await platformTemplates('manual_broken')).toEqual([]);
    });

    it('an answer lost on the way back (the platform created it) keeps the template, found on the platform by name', async () => {
      const a = await account();
      await control('POST', '/_sandbox/config', { garbledTemplateCreates: 1 });
      const res = await t.http.post('/templates/create', simple(a, 'manual_lost_answer'), { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      const [onPlatform] = await platformTemplates('manual_lost_answer');
      expect(
        await t.db.query('SELECT platform_template_id, status FROM templates WHERE account_id = $1', [a.accountId]),
      ).toEqual([{ platform_template_id: String(onPlatform.id), status: 'PENDING' }]);
      // the review reaches it as usual
      await review('manual_lost_answer', 'APPROVED');
      await service().sync(a.accountId);
      expect(
        (await t.http.get('/templates/status?template_name=manual_lost_answer', { token: a.token })).body,
      ).toMatchObject({ data: { template_name: 'manual_lost_answer', status: 'APPROVED' } });
    });

    it.each([
      ['a bad name', (b: any) => ({ ...b, template_name: 'Order Update' }), 'template_name'],
      ['a missing name', (b: any) => ({ ...b, template_name: undefined }), 'template_name'],
      ['an unknown category', (b: any) => ({ ...b, category: 'PROMO' }), 'category'],
      ['a bad language', (b: any) => ({ ...b, language: 'english' }), 'language'],
      ['no components', (b: any) => ({ ...b, components: [] }), 'components'],
      ['no body', (b: any) => ({ ...b, components: [b.components[0]] }), 'components'],
      [
        'an unknown component type',
        (b: any) => ({ ...b, components: [...b.components, { type: 'sticker' }] }),
        'components[4].type',
      ],
      [
        'a variable without an example',
        (b: any) => ({
          ...b,
          components: b.components.map((c: any) =>
            c.type === 'body'
              ? {
                  ...c,
                  parameters: [
                    c.parameters[0],
                    { type: 'variable', variable: { text: 'order_id' } },
                    ...c.parameters.slice(2),
                  ],
                }
              : c,
          ),
        }),
        'components[1].parameters[1].variable.value',
      ],
      [
        'a {{variable}} without an entry',
        (b: any) => ({
          ...b,
          components: b.components.map((c: any) =>
            c.type === 'body' ? { ...c, parameters: c.parameters.slice(0, 3) } : c,
          ),
        }),
        'components[1].parameters',
      ],
      [
        'an entry not used in the text',
        (b: any) => ({
          ...b,
          components: b.components.map((c: any) =>
            c.type === 'body'
              ? { ...c, parameters: [...c.parameters, { type: 'variable', variable: { text: 'coupon', value: 'X' } }] }
              : c,
          ),
        }),
        'components[1].parameters[4].variable.text',
      ],
      [
        'a malformed placeholder',
        (b: any) => ({
          ...b,
          components: b.components.map((c: any) =>
            c.type === 'body' ? { ...c, parameters: [{ type: 'text', text: 'Hi {{First Name}}!' }] } : c,
          ),
        }),
        'components[1].parameters[0].text',
      ],
      [
        'too many buttons',
        (b: any) => ({
          ...b,
          components: [
            b.components[1],
            {
              type: 'button',
              parameters: Array.from({ length: 11 }, (_, i) => ({
                type: 'quick_reply',
                quick_reply: { value: `Option ${i}` },
              })),
            },
          ],
        }),
        'components[1].parameters',
      ],
      [
        'three URL buttons',
        (b: any) => ({
          ...b,
          components: [
            b.components[1],
            {
              type: 'button',
              parameters: [1, 2, 3].map((i) => ({
                type: 'cta',
                cta: { text: 'URL', value: `Link ${i}`, url: `https://x.example.com/${i}` },
              })),
            },
          ],
        }),
        'components[1].parameters',
      ],
      [
        'quick replies not grouped',
        (b: any) => ({
          ...b,
          components: [
            b.components[1],
            {
              type: 'button',
              parameters: [
                { type: 'quick_reply', quick_reply: { value: 'Yes' } },
                { type: 'cta', cta: { text: 'URL', value: 'Site', url: 'https://x.example.com' } },
                { type: 'quick_reply', quick_reply: { value: 'No' } },
              ],
            },
          ],
        }),
        'components[1].parameters',
      ],
      [
        'a bad phone button',
        (b: any) => ({
          ...b,
          components: [
            b.components[1],
            { type: 'button', parameters: [{ type: 'cta', cta: { text: 'Phone', value: 'Call', url: 'call me' } }] },
          ],
        }),
        'components[1].parameters[0].cta.url',
      ],
      [
        'a media header without a link',
        (b: any) => ({ ...b, components: [{ type: 'image', image: {} }, b.components[1]] }),
        'components[0].image.link',
      ],
    ])('400 naming the field for %s, nothing submitted', async (_label, mutate, field) => {
      const a = await account();
      const before = (await platformTemplates()).length;
      const res = await t.http.post('/templates/create', mutate(orderUpdate(a, 'manual_invalid')), { token: a.token });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, message: expect.any(String) });
      expect(res.body.errors.map((e: any) => e.field)).toContain(field);
      expect((await platformTemplates()).length).toBe(before);
    });
  });

  describe('review → status', () => {
    it('an approval whose webhook is applied before the create has written the platform answer stays APPROVED', async () => {
      const a = await account();
      const [{ waba }] = await t.db.query(
        'SELECT business_account_id AS waba FROM phone_numbers WHERE messaging_phone_id = $1',
        [a.messagingPhoneId],
      );
      const createTemplate = CloudApiClient.prototype.createTemplate;
      const spy = jest.spyOn(CloudApiClient.prototype, 'createTemplate').mockImplementation(async function (
        this: CloudApiClient,
        template,
      ) {
        const created = await createTemplate.call(this, template);
        await service().applyPlatformStatus({
          event: 'APPROVED',
          templateId: String(created.id),
          templateName: template.name,
          language: template.language,
          wabaId: String(waba),
        } as any);
        return created;
      });
      try {
        const res = await t.http.post('/templates/create', simple(a, 'manual_fast_approval'), { token: a.token });
        expect(res.status).toBe(200);
      } finally {
        spy.mockRestore();
      }
      const status = await t.http.get('/templates/status?template_name=manual_fast_approval', { token: a.token });
      expect(status.body.data.status).toBe('APPROVED');
    });

    it('PENDING → approved by the reviewer → the webhook event applied → APPROVED everywhere, recorded once', async () => {
      const a = await account();
      await create(a, orderUpdate(a, 'manual_shipping'));
      await create(a, simple(a, 'manual_pending_one'));
      expect((await t.http.get('/templates/status?template_name=manual_shipping', { token: a.token })).body).toEqual({
        success: true,
        data: { template_name: 'manual_shipping', language: 'en_US', status: 'PENDING' },
      });

      await review('manual_shipping', 'APPROVED');
      const [event] = await statusEvents('manual_shipping');
      expect(event).toMatchObject({ event: 'APPROVED', templateName: 'manual_shipping', language: 'en_US' });
      const changes = await service().applyPlatformStatus(event);
      expect(changes).toEqual([
        expect.objectContaining({
          accountId: a.accountId,
          name: 'manual_shipping',
          previousStatus: 'PENDING',
          status: 'APPROVED',
        }),
      ]);
      expect(await service().applyPlatformStatus(event)).toEqual([]); // a redelivered webhook changes nothing

      const list = await t.http.get('/v2/templates?status=APPROVED', { token: a.token });
      expect(list.body.data).toEqual({
        templates: [
          {
            template_name: 'manual_shipping',
            category: 'UTILITY',
            language: 'en_US',
            status: 'APPROVED',
            variables: ['name', 'order_id', 'date'],
            rejected_reason: null,
            updated_at: expect.stringMatching(/Z$/),
          },
        ],
        page: 1,
        pageSize: 50,
        total: 1,
      });
      const one = await t.http.get('/v2/templates/manual_shipping', { token: a.token });
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({
        template_name: 'manual_shipping',
        status: 'APPROVED',
        variables: ['name', 'order_id', 'date'],
        rejected_reason: null,
      });
      expect(
        (await t.http.get('/templates/status?template_name=manual_shipping', { token: a.token })).body.data.status,
      ).toBe('APPROVED');
      const approved = await t.http.get('/templates/get-templates', { token: a.token });
      expect(approved.body.success).toBe(true);
      expect(approved.body.data.map((x: any) => [x.template_name, x.status, x.variables])).toEqual([
        ['manual_shipping', 'APPROVED', ['name', 'order_id', 'date']],
      ]);

      const events = await t.db.query('SELECT type, payload FROM account_events WHERE account_id = $1', [a.accountId]);
      expect(events).toEqual([
        {
          type: 'template_status_update',
          payload: {
            template_name: 'manual_shipping',
            language: 'en_US',
            status: 'APPROVED',
            previous_status: 'PENDING',
            rejected_reason: null,
            platform_status: null,
            source: 'webhook',
          },
        },
      ]);
    });

    it('rejection, pausing and reinstating through the webhook event', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_flash_sale'));
      const [platform] = await platformTemplates('manual_flash_sale');
      const ev = (event: string, reason: string | null) => ({
        templateId: platform.id,
        templateName: 'manual_flash_sale',
        language: 'en',
        event,
        reason,
      });

      await service().applyPlatformStatus(ev('REJECTED', 'INCORRECT_CATEGORY'));
      expect(
        (await t.http.get('/templates/status?template_name=manual_flash_sale', { token: a.token })).body.data,
      ).toEqual({
        template_name: 'manual_flash_sale',
        language: 'en',
        status: 'REJECTED',
        rejected_reason: 'INCORRECT_CATEGORY',
      });
      await service().applyPlatformStatus(ev('APPROVED', 'NONE'));
      await service().applyPlatformStatus(ev('PAUSED', 'NONE'));
      const paused = await t.http.get('/v2/templates/manual_flash_sale', { token: a.token });
      expect(paused.body.data).toMatchObject({ status: 'PAUSED', rejected_reason: null });
      expect(paused.body.data.platform_status).toBeUndefined();
      expect(await service().findApprovedForSend(a.accountId, 'manual_flash_sale')).toEqual({
        ok: false,
        reason: 'Template is not approved (status PAUSED)',
      });
      await service().applyPlatformStatus(ev('DISABLED', 'LOW_QUALITY'));
      expect(
        (await t.http.get('/templates/status?template_name=manual_flash_sale', { token: a.token })).body.data,
      ).toMatchObject({ status: 'DISABLED', rejected_reason: 'LOW_QUALITY' });
      await service().applyPlatformStatus(ev('REINSTATED', 'NONE'));
      expect((await t.http.get('/v2/templates/manual_flash_sale', { token: a.token })).body.data).toMatchObject({
        status: 'APPROVED',
        rejected_reason: null,
      });
      expect(await service().applyPlatformStatus(ev('FLAGGED', 'NONE'))).toEqual([]);
      expect(await service().applyPlatformStatus({ ...ev('APPROVED', null), templateId: '404404' })).toEqual([]);

      const rows = await t.db.query(
        `SELECT payload->>'status' AS status FROM account_events WHERE account_id = $1 ORDER BY id`,
        [a.accountId],
      );
      expect(rows.map((r: any) => r.status)).toEqual(['REJECTED', 'APPROVED', 'PAUSED', 'DISABLED', 'APPROVED']);
    });

    it('an event for a template whose platform id was never saved is matched by WABA, name and language', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_by_waba'));
      const [platform] = await platformTemplates('manual_by_waba');
      await t.db.query('UPDATE templates SET platform_template_id = NULL WHERE account_id = $1', [a.accountId]);
      await review('manual_by_waba', 'APPROVED');
      const [event] = await statusEvents('manual_by_waba');
      expect(event.wabaId).toBe(platform.waba_id);
      expect(await service().applyPlatformStatus(event)).toHaveLength(1);
      const [row] = await t.db.query('SELECT status, platform_template_id FROM templates WHERE account_id = $1', [
        a.accountId,
      ]);
      expect(row).toEqual({ status: 'APPROVED', platform_template_id: platform.id });
    });

    it('GET /templates/status observes an automatic approval by itself (no webhook needed)', async () => {
      const a = await account();
      await create(a, simple(a, 'auto_welcome'));
      await waitForPlatformStatus('auto_welcome', 'APPROVED');
      const res = await t.http.get('/templates/status?template_name=auto_welcome', { token: a.token });
      expect(res.body).toEqual({
        success: true,
        data: { template_name: 'auto_welcome', language: 'en', status: 'APPROVED' },
      });
    });

    it('GET /templates/status: 400 without template_name, 404 for an unknown one', async () => {
      const a = await account();
      const missing = await t.http.get('/templates/status', { token: a.token });
      expect(missing.status).toBe(400);
      expect(missing.body.errors[0].field).toBe('template_name');
      const unknown = await t.http.get('/templates/status?template_name=nope', { token: a.token });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ statusCode: 404, message: 'Template not found' });
    });
  });

  describe('POST /v2/templates/sync', () => {
    it('pulls a rejection with its reason; a second sync reports nothing new', async () => {
      const a = await account();
      await create(a, simple(a, 'reject_promo'));
      await create(a, simple(a, 'manual_untouched'));
      await waitForPlatformStatus('reject_promo', 'REJECTED');

      const res = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          updated: [{ name: 'reject_promo', language: 'en', status: 'REJECTED', rejected_reason: 'INVALID_FORMAT' }],
          errors: [],
        },
      });
      expect(
        (await t.http.get('/templates/status?template_name=reject_promo', { token: a.token })).body.data,
      ).toMatchObject({ status: 'REJECTED', rejected_reason: 'INVALID_FORMAT' });
      const [event] = await t.db.query('SELECT payload FROM account_events WHERE account_id = $1', [a.accountId]);
      expect(event.payload).toMatchObject({ template_name: 'reject_promo', status: 'REJECTED', source: 'sync' });

      const again = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
      expect(again.body.data).toEqual({ updated: [], errors: [] });
    });

    it('one template failing on the platform does not stop the others; it is listed in errors[]', async () => {
      const a = await account();
      for (const n of ['manual_sync_a', 'manual_sync_b', 'manual_sync_c']) await create(a, simple(a, n));
      for (const n of ['manual_sync_a', 'manual_sync_b', 'manual_sync_c']) await review(n, 'APPROVED');
      await control('POST', '/_sandbox/templates/fail', { name: 'manual_sync_b' });
      try {
        const res = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
        expect(res.status).toBe(200);
        expect(res.body.data.updated).toEqual([
          { name: 'manual_sync_a', language: 'en', status: 'APPROVED', rejected_reason: null },
          { name: 'manual_sync_c', language: 'en', status: 'APPROVED', rejected_reason: null },
        ]);
        expect(res.body.data.errors).toEqual([
          { name: 'manual_sync_b', language: 'en', message: expect.stringMatching(/unexpected error/i) },
        ]);
        expect((await t.http.get('/v2/templates/manual_sync_b', { token: a.token })).body.data.status).toBe('PENDING');
      } finally {
        await control('POST', '/_sandbox/templates/fail', { name: 'manual_sync_b', fail: false });
      }
      const retry = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
      expect(retry.body.data).toEqual({
        updated: [{ name: 'manual_sync_b', language: 'en', status: 'APPROVED', rejected_reason: null }],
        errors: [],
      });
    });

    it('repairs a template whose platform id was never saved (crash after submission) by finding it by name', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_orphan'));
      const [platform] = await platformTemplates('manual_orphan');
      await t.db.query('UPDATE templates SET platform_template_id = NULL WHERE account_id = $1', [a.accountId]);
      await review('manual_orphan', 'APPROVED');
      const res = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
      expect(res.body.data).toEqual({
        updated: [{ name: 'manual_orphan', language: 'en', status: 'APPROVED', rejected_reason: null }],
        errors: [],
      });
      const [row] = await t.db.query('SELECT platform_template_id FROM templates WHERE account_id = $1', [a.accountId]);
      expect(row.platform_template_id).toBe(platform.id);
    });

    it('an account without templates syncs to empty lists', async () => {
      const a = await account();
      const res = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
      expect(res.body).toEqual({ success: true, data: { updated: [], errors: [] } });
    });
  });

  describe('GET /v2/templates', () => {
    let a: TestAccount;
    beforeAll(async () => {
      a = await account();
      for (const n of ['manual_list_one', 'manual_list_two', 'manual_list_three', 'manual_other_list'])
        await create(a, simple(a, n));
      await review('manual_list_two', 'APPROVED');
      const [event] = await statusEvents('manual_list_two');
      await service().applyPlatformStatus(event);
    });

    it('pages newest first with total', async () => {
      const first = await t.http.get('/v2/templates?pageSize=3', { token: a.token });
      expect(first.body.data.templates.map((x: any) => x.template_name)).toEqual([
        'manual_other_list',
        'manual_list_three',
        'manual_list_two',
      ]);
      expect(first.body.data).toMatchObject({ page: 1, pageSize: 3, total: 4 });
      const second = await t.http.get('/v2/templates?pageSize=3&page=2', { token: a.token });
      expect(second.body.data.templates.map((x: any) => x.template_name)).toEqual(['manual_list_one']);
      const past = await t.http.get('/v2/templates?page=9', { token: a.token });
      expect(past.status).toBe(200);
      expect(past.body.data).toEqual({ templates: [], page: 9, pageSize: 50, total: 4 });
    });

    it('filters by status and by name', async () => {
      const approved = await t.http.get('/v2/templates?status=APPROVED', { token: a.token });
      expect(approved.body.data.templates.map((x: any) => x.template_name)).toEqual(['manual_list_two']);
      const pending = await t.http.get('/v2/templates?status=PENDING&search=list_', { token: a.token });
      expect(pending.body.data.templates.map((x: any) => x.template_name)).toEqual([
        'manual_list_three',
        'manual_list_one',
      ]);
      expect(pending.body.data.total).toBe(2);
      const none = await t.http.get('/v2/templates?status=REJECTED', { token: a.token });
      expect(none.body.data).toEqual({ templates: [], page: 1, pageSize: 50, total: 0 });
    });

    it.each([
      ['pageSize=101', 'pageSize'],
      ['pageSize=abc', 'pageSize'],
      ['pageSize=0', 'pageSize'],
      ['page=0', 'page'],
      ['page=two', 'page'],
      ['page=1e30', 'page'],
      ['page=1.5', 'page'],
      ['status=LIVE', 'status'],
    ])('%s → 400 naming %s', async (query, field) => {
      const res = await t.http.get(`/v2/templates?${query}`, { token: a.token });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: any) => e.field)).toEqual([field]);
    });

    it('messagingPhoneId: only the templates that number can send (its WhatsApp Business Account); another account’s number is a 400', async () => {
      const numberBeside = async (suffix: string, waba: string) => {
        const id = `${a.messagingPhoneId}${suffix}`;
        await t.db.query(
          `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                      api_base_url, api_version, access_token_encrypted, messages_per_second)
           SELECT account_id, $2, display_phone_number, verified_name, ${waba},
                  api_base_url, api_version, access_token_encrypted, messages_per_second
             FROM phone_numbers WHERE messaging_phone_id = $1`,
          [a.messagingPhoneId, id],
        );
        return id;
      };
      const sameWaba = await numberBeside('1', 'business_account_id');
      const otherWaba = await numberBeside('2', "business_account_id || '9'");
      const names = async (number: string) => {
        const res = await t.http.get(`/v2/templates?messagingPhoneId=${number}`, { token: a.token });
        expect(res.status).toBe(200);
        return res.body.data.templates.map((x: any) => x.template_name);
      };
      const all = ['manual_other_list', 'manual_list_three', 'manual_list_two', 'manual_list_one'];
      expect(await names(a.messagingPhoneId)).toEqual(all);
      expect(await names(sameWaba)).toEqual(all);
      expect(await names(otherWaba)).toEqual([]);
      const approvedHere = await t.http.get(`/v2/templates?status=APPROVED&messagingPhoneId=${sameWaba}`, {
        token: a.token,
      });
      expect(approvedHere.body.data).toMatchObject({ total: 1, templates: [{ template_name: 'manual_list_two' }] });
      const stranger = await account();
      const refused = await t.http.get(`/v2/templates?messagingPhoneId=${stranger.messagingPhoneId}`, {
        token: a.token,
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        message: `messagingPhoneId ${stranger.messagingPhoneId} is not a number of this account`,
        field: 'messagingPhoneId',
      });
    });

    it('pageSize 100 is allowed', async () => {
      const res = await t.http.get('/v2/templates?pageSize=100', { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body.data.pageSize).toBe(100);
    });
  });

  describe('PUT /templates/update', () => {
    it('twelve edits at once on a pool of 2 connections all answer (each edit holds its lock outside the pool)', async () => {
      const small = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', DATABASE_POOL_SIZE: '2' });
      try {
        const a = await small.createAccount({ apiBaseUrl: sandboxUrl });
        const names = Array.from({ length: 12 }, (_, i) => `pool_edit_${a.accountId}_${i}`);
        for (const name of names) {
          const created = await small.http.post('/templates/create', simple(a, name), { token: a.token });
          expect(typeof created.body.data).toBe('object');
        }
        const edits = await Promise.all(
          names.map((name) =>
            small.http.put(
              `/templates/update?template_name=${name}`,
              { components: simple(a, name, 'Hello {{name}}, welcome back.').components },
              { token: a.token },
            ),
          ),
        );
        expect(edits.map((r) => r.status)).toEqual(names.map(() => 200));
      } finally {
        await small.close();
      }
    }, 60_000);

    it('a sync or status check while an edit is out leaves the edit PENDING (Meta still answered the old APPROVED)', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_sync_during_edit'));
      await review('manual_sync_during_edit', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_sync_during_edit')).at(-1)!);
      const editTemplate = CloudApiClient.prototype.editTemplate;
      const syncMeanwhile = jest.spyOn(CloudApiClient.prototype, 'editTemplate').mockImplementation(async function (
        this: CloudApiClient,
        id,
        edit,
      ) {
        // before Meta has the edit: it still says APPROVED, while our row says PENDING
        const synced = await t.http.post('/v2/templates/sync', undefined, { token: a.token });
        expect(synced.body.data.updated).toEqual([]);
        await t.http.get('/templates/status?template_name=manual_sync_during_edit', { token: a.token });
        return editTemplate.call(this, id, edit);
      });
      try {
        const res = await t.http.put(
          '/templates/update?template_name=manual_sync_during_edit',
          { components: simple(a, 'manual_sync_during_edit', 'Hello {{name}}, welcome again.').components },
          { token: a.token },
        );
        expect(res.status).toBe(200);
        expect(res.body.data.status).toBe('PENDING');
      } finally {
        syncMeanwhile.mockRestore();
      }
      const stored = await t.http.get('/v2/templates/manual_sync_during_edit', { token: a.token });
      expect(stored.body.data.status).toBe('PENDING');
    });

    it('a change that waits too long for another of the same record is a 409', async () => {
      const { withAdvisoryLock } = await import('@switchboard/core/database');
      const { Client } = await import('pg');
      const holder = new Client({ connectionString: t.config.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query(`SELECT pg_advisory_lock(hashtextextended('test-lock', 0))`);
        const waited = await withAdvisoryLock(t.db, 'test-lock', async () => 'ran', 300).catch((e) => e);
        expect(waited.getStatus?.()).toBe(409);
        expect(waited.getResponse().message).toBe('Another change of this record is in progress; try again shortly');
        await holder.query(`SELECT pg_advisory_unlock(hashtextextended('test-lock', 0))`);
        expect(await withAdvisoryLock(t.db, 'test-lock', async () => 'ran', 300)).toBe('ran');
      } finally {
        await holder.end();
      }
    });

    it('edits on the platform; status back to PENDING; the new version is reviewed again', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_reminder'));
      await review('manual_reminder', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_reminder')).at(-1)!);
      expect((await t.http.get('/v2/templates/manual_reminder', { token: a.token })).body.data.status).toBe('APPROVED');

      const components = [
        { type: 'image', image: { link: 'https://cdn.example.com/r.png' } },
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Hi {{first_name}}, see you at {{time}}.' },
            { type: 'variable', variable: { text: 'first_name', value: 'Ann' } },
            { type: 'variable', variable: { text: 'time', value: '10:00' } },
          ],
        },
      ];
      const res = await t.http.put(
        '/templates/update?template_name=manual_reminder',
        { components, category: 'UTILITY' },
        { token: a.token },
      );
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        template_name: 'manual_reminder',
        status: 'PENDING',
        category: 'UTILITY',
        variables: ['first_name', 'time'],
        header_type: 'image',
        components,
      });
      const [platform] = await platformTemplates('manual_reminder');
      expect(platform).toMatchObject({ status: 'PENDING', category: 'UTILITY' });
      expect(platform.components[1].text).toBe('Hi {{first_name}}, see you at {{time}}.');
      expect(await service().findApprovedForSend(a.accountId, 'manual_reminder')).toEqual({
        ok: false,
        reason: 'Template is not approved (status PENDING)',
      });

      await review('manual_reminder', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_reminder')).at(-1)!);
      expect(
        (await t.http.get('/templates/status?template_name=manual_reminder', { token: a.token })).body.data.status,
      ).toBe('APPROVED');

      const categoryOnly = await t.http.put(
        '/templates/update?template_name=manual_reminder',
        { category: 'MARKETING' },
        { token: a.token },
      );
      expect(categoryOnly.body.data).toMatchObject({
        status: 'PENDING',
        category: 'MARKETING',
        variables: ['first_name', 'time'],
      });
    });

    it('an edit whose answer was lost (the platform made it) is stored, under review; one the platform does not have is refused', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_lost_edit'));
      await review('manual_lost_edit', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_lost_edit')).at(-1)!);
      const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Your order has shipped. Thank you!' }] }];
      await control('POST', '/_sandbox/config', { garbledTemplateEdits: 1 });
      const res = await t.http.put(
        '/templates/update?template_name=manual_lost_edit',
        { components },
        { token: a.token },
      );
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ template_name: 'manual_lost_edit', status: 'PENDING', components });
      const [platform] = await platformTemplates('manual_lost_edit');
      expect(platform.status).toBe('PENDING');
      expect(platform.components[0].text).toBe('Your order has shipped. Thank you!');

      // the platform's answer lost before it took the edit (a 5xx): refused, the stored template as it was
      await review('manual_lost_edit', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_lost_edit')).at(-1)!);
      const editTemplate = jest
        .spyOn(CloudApiClient.prototype, 'editTemplate')
        .mockRejectedValueOnce(
          new CloudApiError({ kind: 'api', code: 2, httpStatus: 503, message: 'Service temporarily unavailable' }),
        );
      try {
        const refused = await t.http.put(
          '/templates/update?template_name=manual_lost_edit',
          { components: [{ type: 'body', parameters: [{ type: 'text', text: 'Never made' }] }] },
          { token: a.token },
        );
        expect(refused.status).toBe(502);
      } finally {
        editTemplate.mockRestore();
      }
      expect((await t.http.get('/v2/templates/manual_lost_edit', { token: a.token })).body.data).toMatchObject({
        status: 'APPROVED',
        components,
      });
    });

    it('an approval of the edit applied before the edit call returned stays APPROVED; a refused edit leaves the status as it was', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_quick_edit'));
      await review('manual_quick_edit', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_quick_edit')).at(-1)!);
      const [{ id: platformId }] = await platformTemplates('manual_quick_edit');
      const [{ waba }] = await t.db.query(
        'SELECT business_account_id AS waba FROM phone_numbers WHERE messaging_phone_id = $1',
        [a.messagingPhoneId],
      );
      const editTemplate = CloudApiClient.prototype.editTemplate;
      const approveAtOnce = jest.spyOn(CloudApiClient.prototype, 'editTemplate').mockImplementation(async function (
        this: CloudApiClient,
        id,
        edit,
      ) {
        const answer = await editTemplate.call(this, id, edit);
        // the platform approves the edit, and its webhook is applied, before the edit's answer is read
        await service().applyPlatformStatus({
          event: 'APPROVED',
          templateId: String(platformId),
          templateName: 'manual_quick_edit',
          language: 'en_US',
          wabaId: String(waba),
        } as any);
        return answer;
      });
      try {
        const res = await t.http.put(
          '/templates/update?template_name=manual_quick_edit',
          { category: 'MARKETING' },
          {
            token: a.token,
          },
        );
        expect(res.status).toBe(200);
        expect(res.body.data).toMatchObject({ status: 'APPROVED', category: 'MARKETING' });
      } finally {
        approveAtOnce.mockRestore();
      }
      expect((await t.http.get('/v2/templates/manual_quick_edit', { token: a.token })).body.data.status).toBe(
        'APPROVED',
      );

      const refuse = jest.spyOn(CloudApiClient.prototype, 'editTemplate').mockRejectedValue(
        new CloudApiError({
          kind: 'api',
          code: 100,
          httpStatus: 400,
          message: 'Invalid parameter',
        }),
      );
      try {
        const res = await t.http.put(
          '/templates/update?template_name=manual_quick_edit',
          { category: 'UTILITY' },
          {
            token: a.token,
          },
        );
        expect(res.status).toBe(400);
      } finally {
        refuse.mockRestore();
      }
      expect((await t.http.get('/v2/templates/manual_quick_edit', { token: a.token })).body.data).toMatchObject({
        status: 'APPROVED',
        category: 'MARKETING',
      });
    });

    it('two edits at once, the first refused by the platform: the second stays under review (edits take turns)', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_two_edits'));
      await review('manual_two_edits', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_two_edits')).at(-1)!);
      const editTemplate = CloudApiClient.prototype.editTemplate;
      const slowRefusal = jest.spyOn(CloudApiClient.prototype, 'editTemplate').mockImplementation(async function (
        this: CloudApiClient,
        id,
        edit,
      ) {
        if ((edit as { category?: string }).category !== 'UTILITY') return editTemplate.call(this, id, edit);
        await new Promise((r) => setTimeout(r, 400));
        throw new CloudApiError({ kind: 'api', code: 100, httpStatus: 400, message: 'Invalid parameter' });
      });
      const put = (category: string) =>
        t.http.put('/templates/update?template_name=manual_two_edits', { category }, { token: a.token });
      try {
        const refused = put('UTILITY');
        await new Promise((r) => setTimeout(r, 100)); // the refused edit has read the template and called out
        const accepted = put('AUTHENTICATION');
        expect((await refused).status).toBe(400);
        expect((await accepted).status).toBe(200);
      } finally {
        slowRefusal.mockRestore();
      }
      // the refusal put back what it read (APPROVED) before the second edit began; it no longer undoes that edit
      expect((await t.http.get('/v2/templates/manual_two_edits', { token: a.token })).body.data).toMatchObject({
        status: 'PENDING',
        category: 'AUTHENTICATION',
      });
    });

    it('404 for an unknown template, 400 for bad input or no template_name', async () => {
      const a = await account();
      await create(a, simple(a, 'manual_edit_me'));
      const unknown = await t.http.put(
        '/templates/update?template_name=nope',
        { category: 'UTILITY' },
        { token: a.token },
      );
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ statusCode: 404, message: 'Template not found' });
      const empty = await t.http.put('/templates/update?template_name=manual_edit_me', {}, { token: a.token });
      expect(empty.status).toBe(400);
      expect(empty.body.errors[0].field).toBe('components');
      // nulls are nothing to edit too: refused here, not sent to the platform (whose 400 named no field)
      const nulls = await t.http.put(
        '/templates/update?template_name=manual_edit_me',
        { category: null, components: null },
        { token: a.token },
      );
      expect(nulls.status).toBe(400);
      expect(nulls.body.errors).toEqual([
        { field: 'components', message: 'give components and/or category to update' },
      ]);
      const bad = await t.http.put(
        '/templates/update?template_name=manual_edit_me',
        { components: [{ type: 'body', parameters: [{ type: 'text', text: 'Hi {{x}} there' }] }] },
        { token: a.token },
      );
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].field).toBe('components[0].parameters');
      const badCategory = await t.http.put(
        '/templates/update?template_name=manual_edit_me',
        { category: 'SPAM' },
        { token: a.token },
      );
      expect(badCategory.status).toBe(400);
      expect(badCategory.body.errors[0].field).toBe('category');
      const noName = await t.http.put('/templates/update', { category: 'UTILITY' }, { token: a.token });
      expect(noName.status).toBe(400);
      expect(noName.body.errors[0].field).toBe('template_name');
    });
  });

  describe('account isolation', () => {
    it("B cannot see, check or edit A's template; the same name is allowed in both", async () => {
      const a = await account();
      const b = await account();
      await create(a, simple(a, 'manual_shared_name'));

      expect((await t.http.get('/v2/templates/manual_shared_name', { token: b.token })).status).toBe(404);
      expect((await t.http.get('/v2/templates', { token: b.token })).body.data).toEqual({
        templates: [],
        page: 1,
        pageSize: 50,
        total: 0,
      });
      expect((await t.http.get('/templates/status?template_name=manual_shared_name', { token: b.token })).status).toBe(
        404,
      );
      expect(
        (
          await t.http.put(
            '/templates/update?template_name=manual_shared_name',
            { category: 'UTILITY' },
            { token: b.token },
          )
        ).status,
      ).toBe(404);
      expect((await t.http.post('/v2/templates/sync', undefined, { token: b.token })).body.data).toEqual({
        updated: [],
        errors: [],
      });

      const mine = await create(b, simple(b, 'manual_shared_name'));
      expect(mine).toMatchObject({
        success: true,
        data: { template_name: 'manual_shared_name', status: 'PENDING', messagingPhoneId: b.messagingPhoneId },
      });
      // the webhook of A's template moves only A's row
      await review('manual_shared_name', 'APPROVED', undefined);
      const events = await statusEvents('manual_shared_name');
      const [aRow] = await t.db.query('SELECT platform_template_id FROM templates WHERE account_id = $1', [
        a.accountId,
      ]);
      await service().applyPlatformStatus(events.find((e) => e.templateId === aRow.platform_template_id)!);
      expect((await t.http.get('/v2/templates/manual_shared_name', { token: a.token })).body.data.status).toBe(
        'APPROVED',
      );
      expect((await t.http.get('/v2/templates/manual_shared_name', { token: b.token })).body.data.status).toBe(
        'PENDING',
      );
      expect((await t.http.get('/templates/get-templates', { token: b.token })).body).toEqual({
        success: true,
        data: [],
      });
    });
  });

  describe('findApprovedForSend (for messaging)', () => {
    it('returns the approved template with variables, header type and button info, or the reason', async () => {
      const a = await account();
      await create(a, orderUpdate(a, 'manual_for_send'));
      expect(await service().findApprovedForSend(a.accountId, 'nope')).toEqual({
        ok: false,
        reason: 'No Template found',
      });
      await review('manual_for_send', 'APPROVED');
      await service().applyPlatformStatus((await statusEvents('manual_for_send')).at(-1)!);
      const found = await service().findApprovedForSend(a.accountId, 'manual_for_send', 'en_US');
      expect(found.ok).toBe(true);
      if (!found.ok) return;
      expect(found.template).toMatchObject({
        name: 'manual_for_send',
        language: 'en_US',
        variables: ['name', 'order_id', 'date'],
        headerType: 'text',
      });
      expect(found.template.buttons.map((btn) => [btn.type, btn.dynamic_suffix ?? false])).toEqual([
        ['quick_reply', false],
        ['quick_reply', false],
        ['url', true],
        ['phone', false],
      ]);
      expect(await service().findApprovedForSend(a.accountId, 'manual_for_send', 'de')).toEqual({
        ok: false,
        reason: 'No Template found',
      });
      const b = await account();
      expect(await service().findApprovedForSend(b.accountId, 'manual_for_send')).toEqual({
        ok: false,
        reason: 'No Template found',
      });
    });
  });
});
