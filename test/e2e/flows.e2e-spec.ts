import { CloudApiClient } from '@switchboard/whatsapp';
import { waitsForLock } from '../helpers/lock-waits';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * SPEC §2 Flow, §3 Flow states, §4 Flows (grant /flow), end to end: the real API and worker, the real Cloud API
 * client, the sandbox over HTTP as the platform (it keeps Meta's Flows rules and enforces the 24-hour window).
 */
describe('Flows', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let seq = 0;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    sandbox = await startTestSandbox(t, { statusWebhooks: false });
  });
  afterAll(async () => {
    await sandbox?.close();
    await t?.close();
  });

  const account = () => t.createAccount({ apiBaseUrl: sandbox.url });
  const uniqueName = (base = 'form') => `${base}_${Date.now().toString(36)}_${++seq}`;

  /** The flow as the sandbox (the platform) holds it, with its uploaded Flow JSON parsed. */
  const platformFlow = async (flowId: string) => {
    const { body } = await sandbox.control.get('/_sandbox/flows');
    const f = body.data.find((x: any) => x.id === flowId);
    return f ? { ...f, flow_json: f.flow_json ? JSON.parse(f.flow_json) : null } : undefined;
  };
  const platformFlowCount = async () => (await sandbox.control.get('/_sandbox/flows')).body.data.length as number;

  /** Two screens: contact details, then a survey; the second brings its own Footer label. */
  const signUp = (name = uniqueName('sign_up')) => ({
    name,
    categories: ['SIGN_UP', 'SURVEY'],
    screens: [
      {
        id: 'DETAILS',
        title: 'Your details',
        layout: {
          children: [
            { type: 'TextHeading', text: 'Join us' },
            { type: 'TextBody', text: 'It takes a minute.' },
            { type: 'TextInput', name: 'full_name', label: 'Name', 'input-type': 'text', required: true },
            {
              type: 'TextInput',
              name: 'email',
              label: 'Email',
              'input-type': 'email',
              'helper-text': 'We never share it',
              pattern: '^.+@.+$',
            },
            { type: 'DatePicker', name: 'birthday', label: 'Birthday' },
          ],
        },
      },
      {
        id: 'SURVEY',
        title: 'A few questions',
        layout: {
          children: [
            { type: 'TextSubheading', text: 'Tell us more' },
            {
              type: 'Dropdown',
              name: 'plan',
              label: 'Plan',
              required: true,
              options: [
                { id: 'basic', title: 'Basic' },
                { id: 'pro', title: 'Pro' },
              ],
            },
            {
              type: 'RadioButtonsGroup',
              name: 'size',
              label: 'Team size',
              options: [
                { id: 'small', title: '1-10' },
                { id: 'large', title: '11+' },
              ],
            },
            {
              type: 'CheckboxGroup',
              name: 'topics',
              label: 'Topics',
              options: [
                { id: 'news', title: 'News' },
                { id: 'tips', title: 'Tips' },
              ],
            },
            { type: 'TextArea', name: 'comments', label: 'Comments' },
            { type: 'OptIn', name: 'marketing', label: 'Send me offers' },
            { type: 'PhotoPicker', name: 'avatar', label: 'Your photo' },
            { type: 'Footer', label: 'Sign up' },
          ],
        },
      },
    ],
  });

  /** One screen, no Footer. */
  const contactUs = (name = uniqueName('contact')) => ({
    name,
    categories: ['CONTACT_US'],
    screens: [
      {
        id: 'CONTACT',
        title: 'Contact us',
        layout: {
          children: [
            { type: 'TextInput', name: 'email', label: 'Email', 'input-type': 'email', required: true },
            { type: 'TextArea', name: 'message', label: 'Message' },
          ],
        },
      },
    ],
  });

  const create = async (a: TestAccount, flow: unknown = contactUs()) => {
    const res = await t.http.post('/flow/create', { messagingPhoneId: a.messagingPhoneId, flow }, { token: a.token });
    expect(res.status).toBe(201);
    return res.body.flow_id as string;
  };
  const update = (a: TestAccount, body: Record<string, unknown>) =>
    t.http.put('/flow/update', body, { token: a.token });
  const publish = (a: TestAccount, flowId: string) => update(a, { flow_id: flowId, action: 'publish' });
  const remove = (a: TestAccount, flowId: string) =>
    t.http.request('DELETE', '/flow/delete', { token: a.token, body: { flow_id: flowId } });
  const get = (a: TestAccount, flowId: string) => t.http.get(`/v2/flows/${flowId}`, { token: a.token });
  const send = (a: TestAccount, flowId: string, body: Record<string, unknown>) =>
    t.http.post(`/v2/flows/${flowId}/send`, body, { token: a.token });
  const inbound = (a: TestAccount, from: string, extra: Record<string, unknown> = { text: 'hi' }) =>
    sandbox.control.post('/_sandbox/inbound', { from, phone_number_id: a.messagingPhoneId, name: 'Ann', ...extra });

  describe('POST /flow/create', () => {
    it('validates, translates to Flow JSON, creates and uploads it on the platform, and stores a draft', async () => {
      const a = await account();
      const flow = signUp();
      const res = await t.http.post('/flow/create', { messagingPhoneId: a.messagingPhoneId, flow }, { token: a.token });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        message: 'WhatsApp flow created successfully',
        flow_id: expect.any(String),
      });
      const flowId = res.body.flow_id;

      const stored = await get(a, flowId);
      expect(stored.status).toBe(200);
      expect(stored.body.data).toMatchObject({
        flow_id: flowId,
        name: flow.name,
        categories: ['SIGN_UP', 'SURVEY'],
        status: 'draft',
        messagingPhoneId: a.messagingPhoneId,
        definition: flow,
        published_at: null,
        deprecated_at: null,
      });
      expect(Date.parse(stored.body.data.created_at)).not.toBeNaN();

      const platform = await platformFlow(flowId);
      expect(platform).toMatchObject({
        name: flow.name,
        status: 'DRAFT',
        categories: ['SIGN_UP', 'SURVEY'],
        validation_errors: [],
        json_version: '6.0',
      });
      expect(platform.flow_json).toEqual(stored.body.data.flow_json);
      expect(platform.flow_json).toEqual({
        version: '6.0',
        screens: [
          {
            id: 'DETAILS',
            title: 'Your details',
            layout: {
              type: 'SingleColumnLayout',
              children: [
                { type: 'TextHeading', text: 'Join us' },
                { type: 'TextBody', text: 'It takes a minute.' },
                { type: 'TextInput', name: 'full_name', label: 'Name', 'input-type': 'text', required: true },
                {
                  type: 'TextInput',
                  name: 'email',
                  label: 'Email',
                  'input-type': 'email',
                  'helper-text': 'We never share it',
                  pattern: '^.+@.+$',
                },
                { type: 'DatePicker', name: 'birthday', label: 'Birthday' },
                // added: the first screen had no Footer
                {
                  type: 'Footer',
                  label: 'Continue',
                  'on-click-action': {
                    name: 'navigate',
                    next: { type: 'screen', name: 'SURVEY' },
                    payload: { full_name: '${form.full_name}', email: '${form.email}', birthday: '${form.birthday}' },
                  },
                },
              ],
            },
          },
          {
            id: 'SURVEY',
            title: 'A few questions',
            terminal: true,
            success: true,
            data: {
              full_name: { type: 'string', __example__: 'Example' },
              email: { type: 'string', __example__: 'Example' },
              birthday: { type: 'string', __example__: 'Example' },
            },
            layout: {
              type: 'SingleColumnLayout',
              children: [
                { type: 'TextSubheading', text: 'Tell us more' },
                {
                  type: 'Dropdown',
                  name: 'plan',
                  label: 'Plan',
                  required: true,
                  'data-source': [
                    { id: 'basic', title: 'Basic' },
                    { id: 'pro', title: 'Pro' },
                  ],
                },
                {
                  type: 'RadioButtonsGroup',
                  name: 'size',
                  label: 'Team size',
                  'data-source': [
                    { id: 'small', title: '1-10' },
                    { id: 'large', title: '11+' },
                  ],
                },
                {
                  type: 'CheckboxGroup',
                  name: 'topics',
                  label: 'Topics',
                  'data-source': [
                    { id: 'news', title: 'News' },
                    { id: 'tips', title: 'Tips' },
                  ],
                },
                { type: 'TextArea', name: 'comments', label: 'Comments' },
                { type: 'OptIn', name: 'marketing', label: 'Send me offers' },
                { type: 'PhotoPicker', name: 'avatar', label: 'Your photo' },
                // the client's Footer label, with the completing action carrying every field of the flow
                {
                  type: 'Footer',
                  label: 'Sign up',
                  'on-click-action': {
                    name: 'complete',
                    payload: {
                      full_name: '${data.full_name}',
                      email: '${data.email}',
                      birthday: '${data.birthday}',
                      plan: '${form.plan}',
                      size: '${form.size}',
                      topics: '${form.topics}',
                      comments: '${form.comments}',
                      marketing: '${form.marketing}',
                      avatar: '${form.avatar}',
                    },
                  },
                },
              ],
            },
          },
        ],
      });
    });

    it('adds a Submit Footer completing the flow to a single screen without one', async () => {
      const a = await account();
      const flowId = await create(a, contactUs());
      const { flow_json } = await platformFlow(flowId);
      expect(flow_json.screens[0].terminal).toBe(true);
      expect(flow_json.screens[0].layout.children.at(-1)).toEqual({
        type: 'Footer',
        label: 'Submit',
        'on-click-action': { name: 'complete', payload: { email: '${form.email}', message: '${form.message}' } },
      });
    });

    const at = (si: number, fi: number, member: string) => `flow.screens[${si}].layout.children[${fi}].${member}`;
    const withField = (field: Record<string, unknown>) => ({
      name: uniqueName('bad'),
      categories: ['OTHER'],
      screens: [
        {
          id: 'ONE',
          title: 'One',
          layout: { children: [{ type: 'TextHeading', text: 'Hi' }, { type: 'TextBody', text: 'x' }, field] },
        },
      ],
    });
    const twoScreens = (second: Record<string, unknown>) => ({
      name: uniqueName('bad'),
      categories: ['OTHER'],
      screens: [
        {
          id: 'ONE',
          title: 'One',
          layout: { children: [{ type: 'TextInput', name: 'a', label: 'A', 'input-type': 'text' }] },
        },
        second,
      ],
    });

    it.each([
      ['TextInput without input-type', withField({ type: 'TextInput', name: 'x', label: 'X' }), at(0, 2, 'input-type')],
      [
        'TextInput with an unknown input-type',
        withField({ type: 'TextInput', name: 'x', label: 'X', 'input-type': 'url' }),
        at(0, 2, 'input-type'),
      ],
      ['TextInput without name', withField({ type: 'TextInput', label: 'X', 'input-type': 'text' }), at(0, 2, 'name')],
      ['TextInput without label', withField({ type: 'TextInput', name: 'x', 'input-type': 'text' }), at(0, 2, 'label')],
      [
        'TextInput with a non-boolean required',
        withField({ type: 'TextInput', name: 'x', label: 'X', 'input-type': 'text', required: 'yes' }),
        at(0, 2, 'required'),
      ],
      [
        'TextInput with a broken pattern',
        withField({ type: 'TextInput', name: 'x', label: 'X', 'input-type': 'text', pattern: '([a-z' }),
        at(0, 2, 'pattern'),
      ],
      [
        'TextInput with an unknown member',
        withField({ type: 'TextInput', name: 'x', label: 'X', 'input-type': 'text', inputType: 'text' }),
        at(0, 2, 'inputType'),
      ],
      ['TextBody without text', withField({ type: 'TextBody' }), at(0, 2, 'text')],
      ['TextHeading with empty text', withField({ type: 'TextHeading', text: ' ' }), at(0, 2, 'text')],
      ['TextArea without label', withField({ type: 'TextArea', name: 'x' }), at(0, 2, 'label')],
      ['DatePicker without name', withField({ type: 'DatePicker', label: 'When' }), at(0, 2, 'name')],
      ['OptIn without label', withField({ type: 'OptIn', name: 'ok' }), at(0, 2, 'label')],
      ['Dropdown without options', withField({ type: 'Dropdown', name: 'x', label: 'X' }), at(0, 2, 'options')],
      [
        'Dropdown with empty options',
        withField({ type: 'Dropdown', name: 'x', label: 'X', options: [] }),
        at(0, 2, 'options'),
      ],
      [
        'RadioButtonsGroup option without title',
        withField({ type: 'RadioButtonsGroup', name: 'x', label: 'X', options: [{ id: 'a' }] }),
        `${at(0, 2, 'options')}[0].title`,
      ],
      [
        'CheckboxGroup with repeated option ids',
        withField({
          type: 'CheckboxGroup',
          name: 'x',
          label: 'X',
          options: [
            { id: 'a', title: 'A' },
            { id: 'a', title: 'B' },
          ],
        }),
        `${at(0, 2, 'options')}[1].id`,
      ],
      ['an unknown field type', withField({ type: 'Slider', name: 'x' }), at(0, 2, 'type')],
      ['a field name with a dot', withField({ type: 'TextArea', name: 'a.b', label: 'X' }), at(0, 2, 'name')],
      [
        'the reserved name flow_token',
        withField({ type: 'TextArea', name: 'flow_token', label: 'X' }),
        at(0, 2, 'name'),
      ],
      [
        'two Footers on a screen',
        {
          ...withField({ type: 'Footer', label: 'Go' }),
          screens: [
            {
              id: 'ONE',
              title: 'One',
              layout: {
                children: [
                  { type: 'Footer', label: 'A' },
                  { type: 'TextBody', text: 'x' },
                  { type: 'Footer', label: 'B' },
                ],
              },
            },
          ],
        },
        at(0, 2, 'type'),
      ],
      ['a Footer without label', withField({ type: 'Footer' }), at(0, 2, 'label')],
      [
        'a repeated name within a screen',
        {
          ...withField({}),
          screens: [
            {
              id: 'ONE',
              title: 'One',
              layout: {
                children: [
                  { type: 'TextArea', name: 'x', label: 'A' },
                  { type: 'TextBody', text: 'x' },
                  { type: 'TextArea', name: 'x', label: 'B' },
                ],
              },
            },
          ],
        },
        at(0, 2, 'name'),
      ],
      [
        'a name already used on an earlier screen',
        twoScreens({
          id: 'TWO',
          title: 'Two',
          layout: { children: [{ type: 'TextArea', name: 'a', label: 'A again' }] },
        }),
        at(1, 0, 'name'),
      ],
      [
        'a PhotoPicker before the last screen',
        {
          ...twoScreens({ id: 'TWO', title: 'Two', layout: { children: [{ type: 'TextBody', text: 'x' }] } }),
          screens: [
            { id: 'ONE', title: 'One', layout: { children: [{ type: 'PhotoPicker', name: 'p', label: 'Photo' }] } },
            { id: 'TWO', title: 'Two', layout: { children: [{ type: 'TextBody', text: 'x' }] } },
          ],
        },
        at(0, 0, 'type'),
      ],
      [
        'a PhotoPicker and a DocumentPicker on one screen',
        {
          ...withField({}),
          screens: [
            {
              id: 'ONE',
              title: 'One',
              layout: {
                children: [
                  { type: 'PhotoPicker', name: 'p', label: 'P' },
                  { type: 'TextBody', text: 'x' },
                  { type: 'DocumentPicker', name: 'd', label: 'D' },
                ],
              },
            },
          ],
        },
        at(0, 2, 'type'),
      ],
      [
        'a lower-case screen id',
        twoScreens({ id: 'two', title: 'Two', layout: { children: [{ type: 'TextBody', text: 'x' }] } }),
        'flow.screens[1].id',
      ],
      [
        'a repeated screen id',
        twoScreens({ id: 'ONE', title: 'Two', layout: { children: [{ type: 'TextBody', text: 'x' }] } }),
        'flow.screens[1].id',
      ],
      [
        'the reserved screen id SUCCESS',
        twoScreens({ id: 'SUCCESS', title: 'Two', layout: { children: [{ type: 'TextBody', text: 'x' }] } }),
        'flow.screens[1].id',
      ],
      [
        'a screen without title',
        twoScreens({ id: 'TWO', layout: { children: [{ type: 'TextBody', text: 'x' }] } }),
        'flow.screens[1].title',
      ],
      [
        'a screen without children',
        twoScreens({ id: 'TWO', title: 'Two', layout: { children: [] } }),
        'flow.screens[1].layout.children',
      ],
      [
        'another layout type',
        twoScreens({ id: 'TWO', title: 'Two', layout: { type: 'Grid', children: [{ type: 'TextBody', text: 'x' }] } }),
        'flow.screens[1].layout.type',
      ],
      ['no screens', { name: uniqueName('bad'), categories: ['OTHER'], screens: [] }, 'flow.screens'],
      ['no name', { categories: ['OTHER'], screens: contactUs().screens }, 'flow.name'],
      [
        'an unknown category',
        { name: uniqueName('bad'), categories: ['SALES'], screens: contactUs().screens },
        'flow.categories[0]',
      ],
      ['no categories', { name: uniqueName('bad'), categories: [], screens: contactUs().screens }, 'flow.categories'],
    ])('400 for %s, naming %s and creating nothing on the platform', async (_what, flow, field) => {
      const a = await account();
      const before = await platformFlowCount();
      const res = await t.http.post('/flow/create', { messagingPhoneId: a.messagingPhoneId, flow }, { token: a.token });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(res.body.message).toContain(field);
      expect(await platformFlowCount()).toBe(before);
      expect((await t.http.get('/v2/flows', { token: a.token })).body.data.total).toBe(0);
    });

    it('400 without messagingPhoneId or flow', async () => {
      const a = await account();
      const noPhone = await t.http.post('/flow/create', { flow: contactUs() }, { token: a.token });
      expect(noPhone.status).toBe(400);
      expect(noPhone.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'messagingPhoneId' })]),
      );
      const noFlow = await t.http.post('/flow/create', { messagingPhoneId: a.messagingPhoneId }, { token: a.token });
      expect(noFlow.status).toBe(400);
      expect(noFlow.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'flow' })]));
    });

    it('404 for an unknown messagingPhoneId, or another account’s', async () => {
      const [a, b] = await Promise.all([account(), account()]);
      for (const messagingPhoneId of ['999000111222', b.messagingPhoneId]) {
        const res = await t.http.post('/flow/create', { messagingPhoneId, flow: contactUs() }, { token: a.token });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ message: 'Phone number not found' });
      }
    });

    it('400 with the platform’s reason when it refuses the flow (name not unique in the WhatsApp Business Account), nothing stored', async () => {
      const a = await account();
      const flow = contactUs();
      await create(a, flow);
      const res = await t.http.post('/flow/create', { messagingPhoneId: a.messagingPhoneId, flow }, { token: a.token });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('Flow name is not unique');
      expect(res.body.platform_error).toMatchObject({ code: 100 });
      expect((await t.http.get('/v2/flows', { token: a.token })).body.data.total).toBe(1);
    });
  });

  describe('PUT /flow/update', () => {
    it('action update replaces the definition (field `flow`) and the uploaded JSON; the flow stays a draft', async () => {
      const a = await account();
      const flowId = await create(a);
      const next = signUp(uniqueName('renamed'));
      const res = await update(a, { flow_id: flowId, action: 'update', flow: next });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Flow updated successfully',
        flow_id: flowId,
        status: 'draft',
      });

      const stored = (await get(a, flowId)).body.data;
      expect(stored).toMatchObject({ status: 'draft', name: next.name, categories: next.categories, definition: next });
      const platform = await platformFlow(flowId);
      expect(platform).toMatchObject({ status: 'DRAFT', name: next.name, categories: next.categories });
      expect(platform.flow_json).toEqual(stored.flow_json);
      expect(platform.flow_json.screens.map((s: any) => s.id)).toEqual(['DETAILS', 'SURVEY']);
    });

    it('action update may leave out name and categories (kept)', async () => {
      const a = await account();
      const original = contactUs();
      const flowId = await create(a, original);
      const res = await update(a, { flow_id: flowId, action: 'update', flow: { screens: signUp().screens } });
      expect(res.status).toBe(200);
      const stored = (await get(a, flowId)).body.data;
      expect(stored).toMatchObject({
        name: original.name,
        categories: ['CONTACT_US'],
        definition: { name: original.name, screens: signUp().screens },
      });
    });

    it('action update: 400 naming the member for an invalid definition, 400 without `flow`; nothing changes', async () => {
      const a = await account();
      const flowId = await create(a);
      const before = (await get(a, flowId)).body.data;
      const bad = contactUs();
      (bad.screens[0].layout.children[0] as any)['input-type'] = 'url';
      const res = await update(a, { flow_id: flowId, action: 'update', flow: bad });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({ field: 'flow.screens[0].layout.children[0].input-type' }),
      ]);
      const missing = await update(a, { flow_id: flowId, action: 'update' });
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'flow' })]);
      expect((await get(a, flowId)).body.data).toEqual(before);
    });

    it('action update_json uploads the raw Flow JSON (an object or a string); the flow stays a draft, its definition is the JSON', async () => {
      const a = await account();
      const flowId = await create(a);
      const json = {
        version: '6.0',
        screens: [
          {
            id: 'RAW',
            title: 'Raw',
            terminal: true,
            layout: {
              type: 'SingleColumnLayout',
              children: [{ type: 'Footer', label: 'Done', 'on-click-action': { name: 'complete', payload: {} } }],
            },
          },
        ],
      };
      const asObject = await update(a, { flow_id: flowId, action: 'update_json', flow_json: json });
      expect(asObject.status).toBe(200);
      expect(asObject.body).toEqual({
        success: true,
        message: 'Flow updated successfully',
        flow_id: flowId,
        status: 'draft',
      });
      expect((await platformFlow(flowId)).flow_json).toEqual(json);
      expect((await get(a, flowId)).body.data).toMatchObject({ status: 'draft', definition: null, flow_json: json });

      const json2 = { ...json, screens: [{ ...json.screens[0], id: 'RAW_TWO' }] };
      const asString = await update(a, { flow_id: flowId, action: 'update_json', flow_json: JSON.stringify(json2) });
      expect(asString.status).toBe(200);
      expect((await platformFlow(flowId)).flow_json).toEqual(json2);
      expect((await get(a, flowId)).body.data.flow_json).toEqual(json2);
    });

    it('an update racing a publish: our record and the platform still hold the same Flow JSON', async () => {
      const a = await account();
      // the upload's answer takes a moment: a publish arriving then went through before the update was stored
      const upload = CloudApiClient.prototype.uploadFlowJson;
      const slowUpload = jest.spyOn(CloudApiClient.prototype, 'uploadFlowJson').mockImplementation(async function (
        this: CloudApiClient,
        ...args
      ) {
        const answer = await upload.apply(this, args);
        await new Promise((r) => setTimeout(r, 150));
        return answer;
      });
      try {
        for (let round = 0; round < 2; round++) {
          const flowId = await create(a);
          const json = {
            version: '6.0',
            screens: [
              {
                id: `RACE_${round}`,
                title: 'Raced',
                terminal: true,
                layout: {
                  type: 'SingleColumnLayout',
                  children: [{ type: 'Footer', label: 'Done', 'on-click-action': { name: 'complete', payload: {} } }],
                },
              },
            ],
          };
          const editing = update(a, { flow_id: flowId, action: 'update_json', flow_json: json });
          await new Promise((r) => setTimeout(r, 50));
          const [edited, published] = await Promise.all([editing, update(a, { flow_id: flowId, action: 'publish' })]);
          expect(published.status).toBe(200);
          expect([200, 409]).toContain(edited.status);
          const stored = (await get(a, flowId)).body.data;
          expect(stored.status).toBe('published');
          expect((await platformFlow(flowId)).flow_json).toEqual(stored.flow_json);
        }
      } finally {
        slowUpload.mockRestore();
      }
    });

    it('action update_json: 400 when flow_json is not JSON, not an object, or missing', async () => {
      const a = await account();
      const flowId = await create(a);
      for (const flow_json of ['{"version": "6.0", screens: [', '[1, 2]', 42, undefined]) {
        const res = await update(a, { flow_id: flowId, action: 'update_json', flow_json });
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([expect.objectContaining({ field: 'flow_json' })]);
      }
      const res = await update(a, { flow_id: flowId, action: 'update_json', flow_json: '{oops' });
      expect(res.body.message).toMatch(/^flow_json is not valid JSON/);
    });

    it('action update_json: the platform’s validation_errors come back as a 400; the previous JSON stays (here and on the platform)', async () => {
      const a = await account();
      const flowId = await create(a);
      const before = (await get(a, flowId)).body.data.flow_json;
      const res = await update(a, {
        flow_id: flowId,
        action: 'update_json',
        flow_json: { version: '6.0', screens: [{ title: 'No id' }] },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^The platform rejected the Flow JSON/);
      expect(res.body.validation_errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ error: 'MISSING_REQUIRED_PROPERTY', message: expect.stringContaining("'id'") }),
          expect.objectContaining({ error: 'MISSING_REQUIRED_PROPERTY', message: expect.stringContaining("'layout'") }),
        ]),
      );
      expect((await get(a, flowId)).body.data.flow_json).toEqual(before);
      const platform = await platformFlow(flowId);
      expect(platform.flow_json).toEqual(before);
      expect(platform.validation_errors).toEqual([]);
      // still publishable
      expect((await publish(a, flowId)).status).toBe(200);
    });

    it('action update: renaming to the name of another flow of the account is a 400 naming flow.name; nothing changes', async () => {
      const a = await account();
      const taken = contactUs();
      await create(a, taken);
      const flowId = await create(a);
      const before = (await get(a, flowId)).body.data;
      const platformBefore = await platformFlow(flowId);
      const res = await update(a, { flow_id: flowId, action: 'update', flow: { ...signUp(), name: taken.name } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { field: 'flow.name', message: 'flow.name is already used by another flow of this account' },
      ]);
      expect((await get(a, flowId)).body.data).toEqual(before);
      expect(await platformFlow(flowId)).toEqual(platformBefore);
    });

    it('Meta’s flow-state errors (139001, 139002) answer 409 with the platform’s message; a publish the platform has already (done behind our back, or whose answer was lost) is taken from it', async () => {
      const a = await account();
      const onPlatform = (flowId: string, action: 'publish' | 'deprecate') =>
        fetch(`${sandbox.url}/v21.0/${flowId}/${action}`, { method: 'POST', headers: { authorization: 'Bearer x' } });
      const flowId = await create(a);
      // published behind our back (in Meta's Flow Builder, or our publish whose answer never came back)
      expect((await onPlatform(flowId, 'publish')).status).toBe(200);
      const edit = await update(a, { flow_id: flowId, action: 'update', flow: { screens: signUp().screens } });
      expect(edit.status).toBe(409);
      expect(edit.body).toMatchObject({
        message: expect.stringMatching(/^The platform refused/),
        platform_error: { code: 139001 },
      });
      // the retry is refused (139002: not a draft), and the platform shows the flow published: so is our record
      const pub = await publish(a, flowId);
      expect(pub.status).toBe(200);
      expect(pub.body).toMatchObject({ success: true, message: 'Flow published successfully', status: 'published' });
      expect((await get(a, flowId)).body.data.status).toBe('published');

      // published and then deprecated behind our back: the publish is refused, and the flow is no draft to publish
      const gone = await create(a);
      expect((await onPlatform(gone, 'publish')).status).toBe(200);
      expect((await onPlatform(gone, 'deprecate')).status).toBe(200);
      const refused = await publish(a, gone);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ platform_error: { code: 139002 } });
      expect((await get(a, gone)).body.data.status).toBe('draft');
    });

    it('a deprecate the platform has already (behind our back, or its answer lost) is taken from it: the delete answers deprecated', async () => {
      const a = await account();
      const flowId = await create(a);
      expect((await publish(a, flowId)).status).toBe(200);
      const graph = await fetch(`${sandbox.url}/v21.0/${flowId}/deprecate`, {
        method: 'POST',
        headers: { authorization: 'Bearer x' },
      });
      expect(graph.status).toBe(200);
      const res = await remove(a, flowId);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ flow_id: flowId, status: 'deprecated' });
      expect((await get(a, flowId)).body.data.status).toBe('deprecated');
    });

    it('400 for an unknown action or without flow_id', async () => {
      const a = await account();
      const flowId = await create(a);
      const res = await update(a, { flow_id: flowId, action: 'archive' });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'action' })]);
      const noId = await update(a, { action: 'publish' });
      expect(noId.status).toBe(400);
      expect(noId.body.errors).toEqual([expect.objectContaining({ field: 'flow_id' })]);
    });

    it('404 Flow not found for an unknown flow', async () => {
      const a = await account();
      for (const body of [
        { action: 'publish' },
        { action: 'update', flow: contactUs() },
        { action: 'update_json', flow_json: '{}' },
      ]) {
        const res = await update(a, { flow_id: '123456789', ...body });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ message: 'Flow not found' });
      }
    });
  });

  describe('states (SPEC §3)', () => {
    it('publish: draft → published (on the platform too); then it can no longer be edited or published again (409)', async () => {
      const a = await account();
      const flowId = await create(a);
      const res = await publish(a, flowId);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Flow published successfully',
        flow_id: flowId,
        status: 'published',
      });
      expect((await platformFlow(flowId)).status).toBe('PUBLISHED');
      const stored = (await get(a, flowId)).body.data;
      expect(stored.status).toBe('published');
      expect(Date.parse(stored.published_at)).not.toBeNaN();

      for (const body of [
        { action: 'update', flow: contactUs() },
        { action: 'update_json', flow_json: stored.flow_json },
        // an edit whose definition is also invalid: still the 409 (its field errors would not help)
        { action: 'update', flow: { screens: [] } },
      ]) {
        const edit = await update(a, { flow_id: flowId, ...body });
        expect(edit.status).toBe(409);
        expect(edit.body).toMatchObject({ message: 'Flow is published and can no longer be edited' });
      }
      const again = await publish(a, flowId);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ message: 'Flow is already published' });
      expect((await get(a, flowId)).body.data).toEqual(stored);
    });

    it('delete a draft: removed on the platform and here (404 afterwards)', async () => {
      const a = await account();
      const flowId = await create(a);
      const res = await remove(a, flowId);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Flow deleted successfully',
        flow_id: flowId,
        status: 'deleted',
      });
      expect(await platformFlow(flowId)).toBeUndefined();
      const after = await get(a, flowId);
      expect(after.status).toBe(404);
      expect(after.body).toMatchObject({ message: 'Flow not found' });
      expect((await remove(a, flowId)).status).toBe(404);
      expect((await publish(a, flowId)).status).toBe(404);
    });

    it('delete a published flow: deprecated (platform too), not removed, still readable; deleting again is an idempotent 200', async () => {
      const a = await account();
      const flowId = await create(a);
      await publish(a, flowId);
      const res = await remove(a, flowId);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Flow is published: it was deprecated, not deleted',
        flow_id: flowId,
        status: 'deprecated',
      });
      expect((await platformFlow(flowId)).status).toBe('DEPRECATED');
      const stored = (await get(a, flowId)).body.data;
      expect(stored).toMatchObject({ flow_id: flowId, status: 'deprecated' });
      expect(Date.parse(stored.deprecated_at)).not.toBeNaN();

      const again = await remove(a, flowId);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({
        success: true,
        message: 'Flow is already deprecated',
        flow_id: flowId,
        status: 'deprecated',
      });

      for (const body of [
        { action: 'publish' },
        { action: 'update', flow: contactUs() },
        { action: 'update_json', flow_json: '{}' },
      ]) {
        const r = await update(a, { flow_id: flowId, ...body });
        expect(r.status).toBe(409);
        expect(r.body).toMatchObject({ message: 'Flow is deprecated and can no longer be edited or published' });
      }
      const sent = await send(a, flowId, { to: '15550001111', body: 'Hi', cta: 'Open' });
      expect(sent.status).toBe(409);
      expect(sent.body).toMatchObject({ message: 'Flow is deprecated and can no longer be sent' });
    });

    it('delete: 400 without flow_id, 404 for an unknown flow', async () => {
      const a = await account();
      const none = await t.http.request('DELETE', '/flow/delete', { token: a.token, body: {} });
      expect(none.status).toBe(400);
      expect(none.body.errors).toEqual([expect.objectContaining({ field: 'flow_id' })]);
      const unknown = await remove(a, '424242');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ message: 'Flow not found' });
    });
  });

  describe('GET /v2/flows', () => {
    it('lists the account’s flows newest first, paginated, with a status filter', async () => {
      const a = await account();
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await create(a));
      await publish(a, ids[1]);

      const all = await t.http.get('/v2/flows', { token: a.token });
      expect(all.status).toBe(200);
      expect(all.body.data).toMatchObject({ page: 1, pageSize: 20, total: 3 });
      expect(all.body.data.flows.map((f: any) => f.flow_id)).toEqual([...ids].reverse());
      expect(all.body.data.flows[0]).toEqual({
        flow_id: ids[2],
        name: expect.any(String),
        categories: ['CONTACT_US'],
        status: 'draft',
        messagingPhoneId: a.messagingPhoneId,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });

      const page2 = await t.http.get('/v2/flows?page=2&pageSize=2', { token: a.token });
      expect(page2.body.data).toMatchObject({ page: 2, pageSize: 2, total: 3 });
      expect(page2.body.data.flows.map((f: any) => f.flow_id)).toEqual([ids[0]]);

      const published = await t.http.get('/v2/flows?status=published', { token: a.token });
      expect(published.body.data.total).toBe(1);
      expect(published.body.data.flows[0]).toMatchObject({ flow_id: ids[1], status: 'published' });

      for (const q of ['status=PUBLISHED', 'pageSize=101', 'page=0']) {
        const bad = await t.http.get(`/v2/flows?${q}`, { token: a.token });
        expect(bad.status).toBe(400);
      }
    });
  });

  describe('account isolation', () => {
    it('another account cannot read, list, update, publish, delete, send or read the responses of a flow', async () => {
      const [a, b] = await Promise.all([account(), account()]);
      const flowId = await create(a);
      const notFound = (res: { status: number; body: any }) => {
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ message: 'Flow not found' });
      };
      notFound(await get(b, flowId));
      notFound(await update(b, { flow_id: flowId, action: 'update', flow: contactUs() }));
      notFound(await update(b, { flow_id: flowId, action: 'update_json', flow_json: '{}' }));
      notFound(await publish(b, flowId));
      notFound(await remove(b, flowId));
      notFound(await send(b, flowId, { to: '15550001111', body: 'Hi', cta: 'Open' }));
      notFound(await t.http.get(`/v2/flows/${flowId}/responses`, { token: b.token }));
      expect((await t.http.get('/v2/flows', { token: b.token })).body.data.total).toBe(0);

      // untouched, for its owner and on the platform
      expect((await get(a, flowId)).body.data.status).toBe('draft');
      expect((await platformFlow(flowId)).status).toBe('DRAFT');
      await publish(a, flowId);
      notFound(await send(b, flowId, { to: '15550001111', body: 'Hi', cta: 'Open' }));
      notFound(await remove(b, flowId));
      expect((await platformFlow(flowId)).status).toBe('PUBLISHED');
    });
  });

  describe('POST /v2/flows/{flow_id}/send and completed forms', () => {
    it('409 for a draft; 404 for an unknown flow; 400 for a bad number or a too long CTA', async () => {
      const a = await account();
      const flowId = await create(a);
      const draft = await send(a, flowId, { to: '15550001111', body: 'Hi', cta: 'Open' });
      expect(draft.status).toBe(409);
      expect(draft.body).toMatchObject({ message: 'Flow is a draft: publish it before sending' });
      expect((await send(a, '777', { to: '15550001111', body: 'Hi', cta: 'Open' })).status).toBe(404);
      await publish(a, flowId);
      const badTo = await send(a, flowId, { to: 'abc', body: 'Hi', cta: 'Open' });
      expect(badTo.status).toBe(400);
      expect(badTo.body.errors).toEqual([expect.objectContaining({ field: 'to' })]);
      const longCta = await send(a, flowId, { to: '15550001111', body: 'Hi', cta: 'x'.repeat(21) });
      expect(longCta.status).toBe(400);
      expect(longCta.body.errors).toEqual([expect.objectContaining({ field: 'cta' })]);
      const otherPhone = await send(a, flowId, {
        to: '15550001111',
        body: 'Hi',
        cta: 'Open',
        messagingPhoneId: '999999',
      });
      expect(otherPhone.status).toBe(404);
      expect(otherPhone.body).toMatchObject({ message: 'Phone number not found' });

      // its number disconnected (the operator's disconnect-number): refused, nothing stored
      await t.db.query(`UPDATE phone_numbers SET status = 'DISCONNECTED' WHERE messaging_phone_id = $1`, [
        a.messagingPhoneId,
      ]);
      const fromDisconnected = await send(a, flowId, { to: '15550001111', body: 'Hi', cta: 'Open' });
      expect(fromDisconnected.status).toBe(404);
      expect(fromDisconnected.body.message).toBe(
        `Phone number not found: the flow's number ${a.messagingPhoneId} is not connected any more; send with the messagingPhoneId of a connected number of its WhatsApp Business Account`,
      );
      const naming = await send(a, flowId, {
        to: '15550001111',
        body: 'Hi',
        cta: 'Open',
        messagingPhoneId: a.messagingPhoneId,
      });
      expect(naming.status).toBe(404);
      expect(naming.body).toMatchObject({ message: 'Phone number not found' });
      const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1`, [a.accountId]);
      expect(n).toBe(0);
    });

    it('outside the 24-hour window: accepted as by Meta, then the failed status (131047) marks the message failed', async () => {
      const a = await account();
      const flowId = await create(a);
      await publish(a, flowId);
      await sandbox.control.post('/_sandbox/config', { statusWebhooks: true }); // this suite runs without statuses otherwise
      const res = await send(a, flowId, { to: '+1 555 020 0001', body: 'Tell us', cta: 'Open form' }).finally(() =>
        sandbox.control.post('/_sandbox/config', { statusWebhooks: false }),
      );
      expect(res.status).toBe(200);
      const row = await eventually(
        async () => {
          const [r] = await t.db.query(`SELECT * FROM messages WHERE id = $1`, [res.body.message_id]);
          return r?.status === 'failed' ? r : null;
        },
        10_000,
        'the failed status',
      );
      expect(row).toMatchObject({
        direction: 'outbound',
        kind: 'flow',
        status: 'failed',
        error_code: 131047,
        recipient: '15550200001',
        wamid: res.body.wamid,
      });
      expect(row.error_message).toMatch(/24 hours/);
    });

    it('round trip: publish → customer writes → send (flow_token) → completed form (nfm_reply) → GET responses shows the fields', async () => {
      const a = await account();
      const flowId = await create(a, signUp());
      await publish(a, flowId);
      const customer = '15550200002';
      const opened = await inbound(a, customer);
      expect(opened.status).toBe(200);

      const res = await send(a, flowId, {
        to: `+${customer}`,
        body: 'Please sign up',
        cta: 'Sign up',
        header: 'Welcome',
        footer: 'Takes 1 minute',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: 'Flow message sent',
        flow_id: flowId,
        flow_token: expect.stringMatching(/^sb_/),
        message_id: expect.any(String),
        wamid: expect.stringMatching(/^wamid\./),
      });
      const { flow_token, wamid, message_id } = res.body;

      // what the platform received: an interactive flow message opening the first screen, with our flow_token
      const sent = (
        await sandbox.control.get(`/_sandbox/messages?to=${customer}&phone_number_id=${a.messagingPhoneId}`)
      ).body.data;
      expect(sent.at(-1)).toMatchObject({
        wamid,
        type: 'interactive',
        payload: { to: customer, type: 'interactive' },
      });
      expect(sent.at(-1).payload).toMatchObject({
        interactive: {
          type: 'flow',
          header: { type: 'text', text: 'Welcome' },
          body: { text: 'Please sign up' },
          footer: { text: 'Takes 1 minute' },
          action: {
            name: 'flow',
            parameters: {
              flow_message_version: '3',
              flow_id: flowId,
              flow_cta: 'Sign up',
              flow_token,
              flow_action: 'navigate',
              flow_action_payload: { screen: 'DETAILS' },
            },
          },
        },
      });
      // sent by the messaging send pipeline (its executor puts our message id into biz_opaque_callback_data)
      expect(sent.at(-1).payload.biz_opaque_callback_data).toBe(message_id);
      // stored as sent (messages.payload is the Cloud API request)
      expect(sent.at(-1).payload.interactive).toEqual(
        (await t.db.query(`SELECT payload FROM messages WHERE id = $1`, [message_id]))[0].payload.interactive,
      );
      const [row] = await t.db.query(`SELECT * FROM messages WHERE id = $1`, [message_id]);
      expect(row).toMatchObject({
        account_id: a.accountId,
        direction: 'outbound',
        kind: 'flow',
        status: 'accepted',
        wamid,
        recipient: customer,
        body: 'Please sign up',
      });
      expect(row.accepted_at).not.toBeNull();
      expect(row.payload.interactive.action.parameters).toMatchObject({ flow_id: flowId, flow_token });
      // the customer's conversation shows the form message, as every message sent to them
      const contactId = String(row.contact_id);
      const conversation = await t.http.get(`/v2/conversations/${contactId}/messages`, { token: a.token });
      expect(conversation.status).toBe(200);
      expect(JSON.stringify(conversation.body)).toContain(message_id);

      // the customer completes the form
      const answers = {
        full_name: 'Ann Lee',
        email: 'ann@example.com',
        birthday: '1990-04-01',
        plan: 'pro',
        topics: ['news', 'tips'],
        marketing: true,
      };
      const reply = await inbound(a, customer, {
        interactive: { type: 'nfm_reply', nfm_reply: { response_json: { flow_token, ...answers } } },
        context_message_id: wamid,
      });
      expect(reply.status).toBe(200);

      const responses = await eventually(
        async () => {
          const r = await t.http.get(`/v2/flows/${flowId}/responses`, { token: a.token });
          return r.body.data?.total === 1 ? r.body.data : null;
        },
        20_000,
        'the flow response',
      );
      expect(responses).toMatchObject({ page: 1, pageSize: 20, total: 1 });
      expect(responses.responses[0]).toEqual({
        response_id: expect.any(String),
        flow_token,
        contact_number: customer,
        response: { flow_token, ...answers },
        message_id: expect.any(String),
        received_at: expect.any(String),
      });
      const [stored] = await t.db.query(`SELECT * FROM messages WHERE id = $1`, [responses.responses[0].message_id]);
      expect(stored).toMatchObject({
        direction: 'inbound',
        kind: 'nfm_reply',
        recipient: customer,
        wamid: reply.body.wamid,
      });

      // the owner only
      const b = await account();
      expect((await t.http.get(`/v2/flows/${flowId}/responses`, { token: b.token })).status).toBe(404);
    });

    it('403 for a contact who opted out (blocked), as every send: nothing stored or sent', async () => {
      const a = await account();
      const flowId = await create(a);
      await publish(a, flowId);
      const customer = '15550200012';
      expect((await inbound(a, customer)).status).toBe(200);
      const contactId = await messagingHelpers(t, () => sandbox).contactIdOf(a, customer);
      const blocked = await t.http.request('PATCH', `/v2/contacts/${contactId}`, {
        token: a.token,
        body: { isBlocked: true },
      });
      expect(blocked.status).toBe(200);

      const res = await send(a, flowId, { to: `+${customer}`, body: 'Please write to us', cta: 'Open' });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, message: 'Contact has opted out (blocked)' });
      const stored = await t.db.query(
        `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'outbound'`,
        [a.accountId],
      );
      expect(stored[0].n).toBe(0);
      expect(
        (await t.db.query(`SELECT count(*)::int AS n FROM flow_sends WHERE account_id = $1`, [a.accountId]))[0].n,
      ).toBe(0);
      const sent = (
        await sandbox.control.get(`/_sandbox/messages?to=${customer}&phone_number_id=${a.messagingPhoneId}`)
      ).body.data;
      expect(sent).toEqual([]);
    });

    it('a caller-given flowToken is used; a completed form with an unknown token is kept as a message only', async () => {
      const a = await account();
      const flowId = await create(a);
      await publish(a, flowId);
      const customer = '15550200003';
      await inbound(a, customer);
      const res = await send(a, flowId, { to: customer, body: 'Contact us', cta: 'Open', flowToken: 'order-42' });
      expect(res.status).toBe(200);
      expect(res.body.flow_token).toBe('order-42');

      const stray = await inbound(a, customer, {
        interactive: { type: 'nfm_reply', nfm_reply: { response_json: { flow_token: 'not-ours', email: 'x@y.z' } } },
      });
      const ours = await inbound(a, customer, {
        interactive: {
          type: 'nfm_reply',
          nfm_reply: { response_json: { flow_token: 'order-42', email: 'a@b.c', message: 'Call me' } },
        },
      });
      await eventually(
        async () => {
          const [{ count }] = await t.db.query(`SELECT count(*) FROM messages WHERE wamid = ANY($1)`, [
            [stray.body.wamid, ours.body.wamid],
          ]);
          return Number(count) === 2;
        },
        20_000,
        'both replies stored',
      );
      // the form is recorded as a response by the inbound handler, after the message itself is stored
      await eventually(
        async () => (await t.http.get(`/v2/flows/${flowId}/responses`, { token: a.token })).body.data.total >= 1,
        20_000,
        'the response recorded',
      );
      const { data } = (await t.http.get(`/v2/flows/${flowId}/responses`, { token: a.token })).body;
      expect(data.total).toBe(1);
      expect(data.responses[0]).toMatchObject({
        flow_token: 'order-42',
        response: { flow_token: 'order-42', email: 'a@b.c', message: 'Call me' },
      });

      // the same token for another flow of the account is refused
      const other = await create(a);
      await publish(a, other);
      const reused = await send(a, other, { to: customer, body: 'Again', cta: 'Open', flowToken: 'order-42' });
      expect(reused.status).toBe(400);
      expect(reused.body.errors).toEqual([expect.objectContaining({ field: 'flowToken' })]);
    });

    it('a flowToken taken for another flow by a send committing at the same moment is refused, nothing sent', async () => {
      const a = await account();
      const [first, second] = [await create(a), await create(a)];
      await publish(a, first);
      await publish(a, second);
      const customer = '15550200004';
      await inbound(a, customer);
      // a send of `first` with the token, its transaction open: the other send's INSERT of the token waits for it
      const other = t.db.createQueryRunner();
      await other.connect();
      await other.startTransaction();
      let raced: Promise<{ status: number; body: any }> | undefined;
      try {
        await other.query(
          `INSERT INTO flow_sends (account_id, flow_token, flow_id)
           SELECT $1, 'race-7', id FROM flows WHERE account_id = $1 AND platform_flow_id = $2`,
          [a.accountId, first],
        );
        raced = send(a, second, { to: customer, body: 'Raced', cta: 'Open', flowToken: 'race-7' });
        await waitsForLock(t, 'INSERT INTO flow_sends', 'the send waits for the other transaction');
        await other.commitTransaction();
      } finally {
        if (other.isTransactionActive) await other.rollbackTransaction();
        await other.release();
      }
      const res = await raced!;
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'flowToken' })]);
      const [{ n }] = await t.db.query(
        `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'outbound' AND recipient = $2`,
        [a.accountId, customer],
      );
      expect(n).toBe(0);
      const [owner] = await t.db.query(
        `SELECT f.platform_flow_id AS flow_id FROM flow_sends s JOIN flows f ON f.id = s.flow_id
          WHERE s.account_id = $1 AND s.flow_token = 'race-7'`,
        [a.accountId],
      );
      expect(owner.flow_id).toBe(first);
    });
  });
});
