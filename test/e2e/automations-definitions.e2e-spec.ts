import { createWorkflow, seedTemplate, simpleDefinition } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** POST /v1/workflows, GET /workflows/active, GET /v1/workflows/{id}: definitions, versions, validation, isolation. */
describe('Workflow definitions', () => {
  let t: TestApp;
  let account: TestAccount;
  beforeAll(async () => {
    t = await startTestApp({ INBOUND_WEBHOOK_URL: 'https://hooks.example.com' });
    account = await t.createAccount();
  });
  afterAll(() => t.close());

  const waitDefinition = {
    trigger: { type: 'webhook' },
    startNodeId: 'wait',
    nodes: [
      {
        id: 'wait',
        type: 'wait_for_reply',
        timeout: '1h',
        branches: [{ match: { type: 'keyword', keywords: ['yes'] }, next: 'done' }],
        onTimeout: 'done',
      },
      { id: 'done', type: 'end' },
    ],
  };

  it('creates a workflow: version 1, an unguessable identifier and its webhook URL', async () => {
    const res = await t.http.post(
      '/v1/workflows',
      { mode: 'create', name: 'Order follow-up', ...waitDefinition },
      { token: account.token },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.any(Number),
        name: 'Order follow-up',
        isActive: true,
        version: 1,
        identifier: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
        webhookUrl: `https://hooks.example.com/webhook/workflow/${res.body.data.identifier}`,
      },
    });

    const got = await t.http.get(`/v1/workflows/${res.body.data.id}`, { token: account.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      success: true,
      data: {
        ...res.body.data,
        ...waitDefinition,
        layout: null, // node positions, set by the console (docs/console.md)
        hasDraft: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
  });

  it('keeps the key order of template variables', async () => {
    const definition = {
      trigger: { type: 'webhook' },
      startNodeId: 'send',
      nodes: [
        {
          id: 'send',
          type: 'send_template',
          templateName: 'order',
          to: '{{payload.phone}}',
          variables: { zeta: 'z', alpha: 'a', custom1: '1' },
          next: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    };
    await seedTemplate(t, account, 'order');
    const created = await createWorkflow(t, account.token, definition);
    const got = await t.http.get(`/v1/workflows/${created.id}`, { token: account.token });
    expect(Object.keys(got.body.data.nodes[0].variables)).toEqual(['zeta', 'alpha', 'custom1']);
  });

  it('edits: a new version with the new definition; name and isActive alone do not make a version', async () => {
    const created = await createWorkflow(t, account.token, simpleDefinition());
    const edited = await t.http.post(
      '/v1/workflows',
      { mode: 'edit', id: created.id, name: 'Renamed', ...waitDefinition },
      { token: account.token },
    );
    expect(edited.status).toBe(200);
    expect(edited.body.data).toEqual({ ...created, name: 'Renamed', version: 2 });

    const toggled = await t.http.post(
      '/v1/workflows',
      { mode: 'edit', id: created.id, isActive: false },
      { token: account.token },
    );
    expect(toggled.body.data).toEqual({ ...created, name: 'Renamed', version: 2, isActive: false });

    const got = await t.http.get(`/v1/workflows/${created.id}`, { token: account.token });
    expect(got.body.data.startNodeId).toBe('wait');
    const versions = await t.db.query('SELECT version FROM workflow_versions WHERE workflow_id = $1 ORDER BY version', [
      created.id,
    ]);
    expect(versions.map((v: any) => v.version)).toEqual([1, 2]);
  });

  it('GET /workflows/active lists only the active workflows of the account (SPEC shape)', async () => {
    const own = await t.createAccount();
    const a = await createWorkflow(t, own.token, simpleDefinition(), 'A');
    await createWorkflow(t, own.token, simpleDefinition(), 'B (inactive)', false);
    const c = await createWorkflow(t, own.token, simpleDefinition(), 'C');
    const other = await t.createAccount();
    await createWorkflow(t, other.token, simpleDefinition(), 'Other account');

    const res = await t.http.get('/workflows/active', { token: own.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'Active Workflows :',
      data: [
        { id: a.id, name: 'A', isActive: true },
        { id: c.id, name: 'C', isActive: true },
      ],
    });
    const empty = await t.createAccount();
    expect((await t.http.get('/workflows/active', { token: empty.token })).body).toEqual({
      message: 'Active Workflows :',
      data: [],
    });
  });

  describe('validation (400, nothing written)', () => {
    async function expectRejected(body: Record<string, unknown>, expected: unknown) {
      const before = await t.db.query('SELECT count(*)::int AS n FROM workflows');
      const res = await t.http.post('/v1/workflows', body, { token: account.token });
      expect(res.status).toBe(400);
      // the one error shape: `field` repeats the first of `errors` (docs/errors.md)
      const { errors } = expected as { errors: Array<{ field: unknown }> };
      expect(res.body).toEqual({ ...(expected as object), field: errors[0].field });
      const after = await t.db.query('SELECT count(*)::int AS n FROM workflows');
      expect(after[0].n).toBe(before[0].n);
    }

    it('a dangling edge names the node and the field', async () => {
      await expectRejected(
        {
          mode: 'create',
          name: 'Dangling',
          trigger: { type: 'webhook' },
          startNodeId: 'a',
          nodes: [
            { id: 'a', type: 'delay', duration: '1m', next: 'ghost' },
            { id: 'b', type: 'end' },
          ],
        },
        {
          statusCode: 400,
          message: 'node "a": next: points to unknown node "ghost"',
          errors: [{ nodeId: 'a', field: 'next', message: 'points to unknown node "ghost"' }],
        },
      );
    });

    it('a wait_for_reply without timeout', async () => {
      await expectRejected(
        {
          mode: 'create',
          name: 'No timeout',
          trigger: { type: 'webhook' },
          startNodeId: 'w',
          nodes: [
            { id: 'w', type: 'wait_for_reply', branches: [{ match: { type: 'any' }, next: 'e' }], onTimeout: 'e' },
            { id: 'e', type: 'end' },
          ],
        },
        {
          statusCode: 400,
          message: 'node "w": timeout: is required',
          errors: [{ nodeId: 'w', field: 'timeout', message: 'is required' }],
        },
      );
    });

    it('a cycle without delay or wait_for_reply', async () => {
      await expectRejected(
        {
          mode: 'create',
          name: 'Busy loop',
          trigger: { type: 'webhook' },
          startNodeId: 'a',
          nodes: [
            { id: 'a', type: 'http_request', method: 'GET', url: 'https://example.com', next: 'b' },
            { id: 'b', type: 'condition', rules: [{ left: '{{vars.x}}', operator: 'exists', next: 'c' }], else: 'a' },
            { id: 'c', type: 'end' },
          ],
        },
        {
          statusCode: 400,
          message: expect.stringContaining('cycle without a delay or wait_for_reply would loop forever'),
          errors: [
            {
              nodeId: expect.any(String),
              field: expect.any(String),
              message: expect.stringMatching(
                /cycle without a delay or wait_for_reply would loop forever: (a → b → a|b → a → b)/,
              ),
            },
          ],
        },
      );
    });

    it('several errors at once, and a missing definition', async () => {
      const res = await t.http.post(
        '/v1/workflows',
        {
          mode: 'create',
          name: 'Many',
          trigger: { type: 'sms' },
          startNodeId: 'x',
          nodes: [{ id: 'a', type: 'end', nxt: 'b' }],
        },
        { token: account.token },
      );
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field: 'trigger.type' }),
          expect.objectContaining({ field: 'startNodeId' }),
          expect.objectContaining({ nodeId: 'a', field: 'nxt' }),
        ]),
      );
      const missing = await t.http.post('/v1/workflows', { mode: 'create', name: 'Empty' }, { token: account.token });
      expect(missing.status).toBe(400);
      expect(missing.body.errors.map((e: any) => e.field)).toEqual(
        expect.arrayContaining(['trigger', 'startNodeId', 'nodes']),
      );
    });

    it('mode, name and id are checked', async () => {
      await expectRejected(
        { ...simpleDefinition(), mode: 'upsert', name: 'x' },
        {
          statusCode: 400,
          message: 'mode must be one of: create, edit',
          errors: [{ field: 'mode', message: 'mode must be one of: create, edit' }],
        },
      );
      const noName = await t.http.post(
        '/v1/workflows',
        { ...simpleDefinition(), mode: 'create' },
        { token: account.token },
      );
      expect(noName.status).toBe(400);
      expect(noName.body.errors.map((e: any) => e.field)).toContain('name');
      // a name of spaces only was stored as ''
      const created = await createWorkflow(t, account.token, simpleDefinition(), 'Named');
      for (const body of [
        { ...simpleDefinition(), mode: 'create', name: '   ' },
        { mode: 'edit', id: created.id, name: ' \t ' },
      ]) {
        const blank = await t.http.post('/v1/workflows', body, { token: account.token });
        expect(blank.status).toBe(400);
        expect(blank.body.errors).toEqual([{ field: 'name', message: 'name must not be blank' }]);
      }
      expect((await t.http.get(`/v1/workflows/${created.id}`, { token: account.token })).body.data.name).toBe('Named');
      // null is no boolean: it was written as NULL (a 500 from the NOT NULL constraint)
      for (const field of ['isActive', 'asDraft']) {
        const nulled = await t.http.post(
          '/v1/workflows',
          { mode: 'edit', id: created.id, [field]: null },
          { token: account.token },
        );
        expect(nulled.status).toBe(400);
        expect(nulled.body.errors.map((e: any) => e.field)).toEqual([field]);
      }
      expect((await t.http.get(`/v1/workflows/${created.id}`, { token: account.token })).body.data.isActive).toBe(true);
      const noId = await t.http.post(
        '/v1/workflows',
        { ...simpleDefinition(), mode: 'edit' },
        { token: account.token },
      );
      expect(noId.status).toBe(400);
      expect(noId.body.errors).toEqual([
        { field: 'id', message: 'id must be an integer (the workflow to edit)' },
        { field: 'id', message: 'id must not be less than 1' },
        { field: 'id', message: 'id must not be greater than 9007199254740991' },
      ]);
    });

    it('an edit with an invalid definition keeps the current version', async () => {
      const created = await createWorkflow(t, account.token, simpleDefinition());
      const res = await t.http.post(
        '/v1/workflows',
        { mode: 'edit', id: created.id, ...simpleDefinition({ startNodeId: 'nope' }) },
        { token: account.token },
      );
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'startNodeId', message: expect.stringContaining('nope') }]);
      expect((await t.http.get(`/v1/workflows/${created.id}`, { token: account.token })).body.data.version).toBe(1);
    });

    it("template names must exist in the account (another account's template does not count)", async () => {
      const definition = {
        trigger: { type: 'webhook' },
        startNodeId: 's1',
        nodes: [
          { id: 's1', type: 'send_template', templateName: 'welcome', next: 's2' },
          { id: 's2', type: 'send_template', templateName: 'ghost_template', next: 'done' },
          { id: 'done', type: 'end' },
        ],
      };
      await seedTemplate(t, account, 'welcome');
      await seedTemplate(t, await t.createAccount(), 'ghost_template');
      await expectRejected(
        { mode: 'create', name: 'Templates', ...definition },
        {
          statusCode: 400,
          message: 'node "s2": templateName: template "ghost_template" does not exist in this account',
          errors: [
            {
              nodeId: 's2',
              field: 'templateName',
              message: 'template "ghost_template" does not exist in this account',
            },
          ],
        },
      );
      await seedTemplate(t, account, 'ghost_template');
      await createWorkflow(t, account.token, definition);
    });

    it('a send_template whose template is not APPROVED (REJECTED, PENDING, PAUSED) is refused at create and at edit, naming the node', async () => {
      const own = await t.createAccount();
      await seedTemplate(t, own, 'ok_template');
      await seedTemplate(t, own, 'rejected_template', 'REJECTED');
      await seedTemplate(t, own, 'pending_template', 'PENDING');
      const send = (id: string, templateName: string, next: string) => ({
        id,
        type: 'send_template',
        templateName,
        next,
      });
      const definition = {
        trigger: { type: 'webhook' },
        startNodeId: 'a',
        nodes: [
          send('a', 'ok_template', 'b'),
          send('b', 'rejected_template', 'c'),
          send('c', 'pending_template', 'd'),
          send('d', 'nowhere', 'done'),
          { id: 'done', type: 'end' },
        ],
      };
      const expected = {
        statusCode: 400,
        message:
          'node "b": templateName: template "rejected_template" is REJECTED; only an APPROVED template can be sent',
        field: 'templateName',
        errors: [
          {
            nodeId: 'b',
            field: 'templateName',
            message: 'template "rejected_template" is REJECTED; only an APPROVED template can be sent',
          },
          {
            nodeId: 'c',
            field: 'templateName',
            message: 'template "pending_template" is PENDING; only an APPROVED template can be sent',
          },
          { nodeId: 'd', field: 'templateName', message: 'template "nowhere" does not exist in this account' },
        ],
      };
      const created = await t.http.post(
        '/v1/workflows',
        { mode: 'create', name: 'Not approved', ...definition },
        { token: own.token },
      );
      expect(created.status).toBe(400);
      expect(created.body).toEqual(expected);
      expect(await t.db.query('SELECT 1 FROM workflows WHERE account_id = $1', [own.accountId])).toHaveLength(0);

      const wf = await createWorkflow(t, own.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'a',
        nodes: [send('a', 'ok_template', 'done'), { id: 'done', type: 'end' }],
      });
      const edited = await t.http.post(
        '/v1/workflows',
        { mode: 'edit', id: wf.id, ...definition },
        { token: own.token },
      );
      expect(edited.status).toBe(400);
      expect(edited.body).toEqual(expected);
      expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: own.token })).body.data.version).toBe(1);

      // a template paused by the platform (kept as PAUSED) is refused the same way; an APPROVED language is enough
      await t.db.query(
        `UPDATE templates SET platform_status = 'PAUSED' WHERE account_id = $1 AND name = 'rejected_template'`,
        [own.accountId],
      );
      const paused = await t.http.post(
        '/v1/workflows',
        {
          mode: 'edit',
          id: wf.id,
          trigger: { type: 'webhook' },
          startNodeId: 'b',
          nodes: [send('b', 'rejected_template', 'done'), { id: 'done', type: 'end' }],
        },
        { token: own.token },
      );
      expect(paused.body.errors).toEqual([
        {
          nodeId: 'b',
          field: 'templateName',
          message: 'template "rejected_template" is PAUSED; only an APPROVED template can be sent',
        },
      ]);
      await t.db.query(
        `INSERT INTO templates (account_id, phone_number_id, name, language, category, status, components, platform_components)
         SELECT account_id, phone_number_id, name, 'de', category, 'APPROVED', components, platform_components FROM templates WHERE account_id = $1 AND name = 'pending_template'`,
        [own.accountId],
      );
      const oneApproved = await t.http.post(
        '/v1/workflows',
        {
          mode: 'edit',
          id: wf.id,
          trigger: { type: 'webhook' },
          startNodeId: 'c',
          nodes: [send('c', 'pending_template', 'done'), { id: 'done', type: 'end' }],
        },
        { token: own.token },
      );
      expect(oneApproved.status).toBe(200);
    });
  });

  describe('account isolation', () => {
    it("another account's workflow is not found for GET, edit and runs", async () => {
      const owner = await t.createAccount();
      const intruder = await t.createAccount();
      const wf = await createWorkflow(t, owner.token, simpleDefinition(), 'Private');

      const get = await t.http.get(`/v1/workflows/${wf.id}`, { token: intruder.token });
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ statusCode: 404, message: 'Workflow not found' });

      const edit = await t.http.post(
        '/v1/workflows',
        { mode: 'edit', id: wf.id, name: 'Hijacked', ...simpleDefinition() },
        { token: intruder.token },
      );
      expect(edit.status).toBe(404);
      expect(edit.body).toEqual({ statusCode: 404, message: 'Workflow not found' });
      const toggle = await t.http.post(
        '/v1/workflows',
        { mode: 'edit', id: wf.id, isActive: false },
        { token: intruder.token },
      );
      expect(toggle.status).toBe(404);

      const runs = await t.http.get(`/v1/workflows/${wf.id}/runs`, { token: intruder.token });
      expect(runs.status).toBe(404);
      expect((await t.http.get('/workflows/active', { token: intruder.token })).body.data).toEqual([]);

      const still = await t.http.get(`/v1/workflows/${wf.id}`, { token: owner.token });
      expect(still.body.data).toMatchObject({ name: 'Private', isActive: true, version: 1 });
    });

    it('unknown and malformed ids are 404', async () => {
      for (const path of [
        '/v1/workflows/999999',
        '/v1/workflows/abc',
        '/v1/workflows/1e3',
        '/v1/workflow-runs/not-a-uuid',
        '/v1/workflow-runs/00000000-0000-4000-8000-000000000000',
      ]) {
        const res = await t.http.get(path, { token: account.token });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
    });
  });
});
