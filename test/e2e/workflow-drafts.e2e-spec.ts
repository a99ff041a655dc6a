import { asUser, consoleSession } from '../helpers/console';
import { createWorkflow, simpleDefinition, waitForRun } from '../helpers/automations';
import { startTestApp, TestApp } from '../helpers/test-app';

/** The builder's API (docs/console.md): list, archive, drafts with optimistic concurrency, publish, versions, restore. */
describe('Workflow list, drafts and versions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
  });
  afterAll(() => t.close());

  const twoStep = (target = 'done') => ({
    trigger: { type: 'webhook' },
    startNodeId: 'wait',
    nodes: [
      { id: 'wait', type: 'delay', duration: '1s', next: target },
      { id: 'done', type: 'end' },
    ],
  });

  it("GET /v1/workflows lists the account's workflows with version, draft flag and runs waiting / failed in 24 h", async () => {
    const account = await t.createAccount();
    const other = await t.createAccount();
    const first = await createWorkflow(t, account.token, simpleDefinition(), 'Welcome');
    const second = await createWorkflow(t, account.token, twoStep(), 'Reminder');
    await createWorkflow(t, other.token, simpleDefinition(), 'Not mine');
    await t.db.query(
      `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, finished_at) VALUES
        (gen_random_uuid(), $1, $2, 1, 'waiting', NULL), (gen_random_uuid(), $1, $2, 1, 'waiting', NULL),
        (gen_random_uuid(), $1, $2, 1, 'failed', now() - interval '1 hour'), (gen_random_uuid(), $1, $2, 1, 'failed', now() - interval '30 hours')`,
      [account.accountId, second.id],
    );
    const res = await t.http.get('/v1/workflows?page=1&pageSize=10', { token: account.token });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, pageSize: 10, total: 2, totalPages: 1 });
    const byName = Object.fromEntries(res.body.data.map((w: any) => [w.name, w]));
    expect(byName.Reminder).toMatchObject({
      id: second.id,
      isActive: true,
      version: 1,
      hasDraft: false,
      runsWaiting: 2,
      runsFailed24h: 1,
      triggerType: 'webhook',
    });
    expect(byName.Welcome).toMatchObject({ id: first.id, runsWaiting: 0, runsFailed24h: 0 });
    const searched = await t.http.get('/v1/workflows?search=remind', { token: account.token });
    expect(searched.body.data.map((w: any) => w.name)).toEqual(['Reminder']);
    const tooBig = await t.http.get('/v1/workflows?pageSize=101', { token: account.token });
    expect(tooBig.status).toBe(400);
  });

  it('a draft is saved with a revision; a stale save gets 409; publish makes it the next version with its layout', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Draft me');
    expect((await t.http.get(`/v1/workflows/${wf.id}/draft`, { token: account.token })).status).toBe(404);

    const layout = { nodes: { wait: { x: 100, y: 40 }, done: { x: 400, y: 40 } }, trigger: { x: -200, y: 40 } };
    const saved = await t.http.put(
      `/v1/workflows/${wf.id}/draft`,
      { revision: 0, name: 'Draft me v2', definition: { ...twoStep('nowhere') }, layout },
      { token: account.token },
    );
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({ revision: 1, baseVersion: 1, name: 'Draft me v2', layout });
    // drafts may be invalid: the engine's verdict comes back with the save
    expect(saved.body.data.errors).toEqual([
      { nodeId: 'wait', field: 'next', message: 'points to unknown node "nowhere"' },
    ]);

    // a second tab still at revision 0 (or a stale 1 after the next save) is refused
    const stale = await t.http.put(
      `/v1/workflows/${wf.id}/draft`,
      { revision: 0, definition: twoStep() },
      { token: account.token },
    );
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      message: 'The draft was changed elsewhere (it is at revision 1): reload it before saving',
      currentRevision: 1,
    });

    // publishing an invalid draft is refused naming the node; nothing changes
    const refused = await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 1 }, { token: account.token });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('node "wait": next: points to unknown node "nowhere"');
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token })).body.data.version).toBe(1);

    const fixed = await t.http.put(
      `/v1/workflows/${wf.id}/draft`,
      { revision: 1, name: 'Draft me v2', definition: twoStep(), layout },
      { token: account.token },
    );
    expect(fixed.body.data).toMatchObject({ revision: 2, errors: [] });
    expect(
      (await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 1 }, { token: account.token })).status,
    ).toBe(409);
    const published = await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 2 }, { token: account.token });
    expect(published.status).toBe(200);
    expect(published.body.data).toEqual({ id: wf.id, version: 2 });

    const current = await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token });
    expect(current.body.data).toMatchObject({
      name: 'Draft me v2',
      version: 2,
      startNodeId: 'wait',
      layout,
      hasDraft: false,
      nodes: twoStep().nodes,
    });
    expect((await t.http.get(`/v1/workflows/${wf.id}/draft`, { token: account.token })).status).toBe(404);

    // runs start on the new version; the old one is still readable
    const run = await t.http.post(
      `/v1/workflows/${wf.id}/test-runs`,
      { payload: { phone: '+15550001111' } },
      { token: account.token },
    );
    expect(run.status).toBe(201);
    const finished = await waitForRun(t, account.token, run.body.data.runId, ['completed']);
    expect(finished.workflowVersion).toBe(2);
    expect(finished.history.map((h: any) => h.nodeId)).toEqual(['wait', 'done']);
  });

  it('a workflow created as a draft has no version until published: webhook 404, test run 409, then version 1', async () => {
    const account = await t.createAccount();
    const created = await t.http.post(
      '/v1/workflows',
      {
        mode: 'create',
        name: 'Unpublished',
        asDraft: true,
        trigger: { type: 'webhook' },
        startNodeId: '',
        nodes: [],
        layout: { nodes: {}, trigger: { x: 0, y: 0 } },
      },
      { token: account.token },
    );
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ name: 'Unpublished', version: 0, hasDraft: true });
    const id = created.body.data.id;
    const active = async () =>
      (await t.http.get('/workflows/active', { token: account.token })).body.data.map((w: any) => w.id);
    expect(await active()).toEqual([]); // nothing to start yet
    expect((await t.http.get(`/v1/workflows/${id}`, { token: account.token })).body.data).toMatchObject({
      version: 0,
      nodes: [],
      hasDraft: true,
    });
    expect((await t.http.post(new URL(created.body.data.webhookUrl).pathname, {})).status).toBe(404);
    const early = await t.http.post(`/v1/workflows/${id}/test-runs`, { payload: {} }, { token: account.token });
    expect(early.status).toBe(409);
    expect(early.body.message).toBe('This workflow has no published version yet: publish its draft first');
    const draft = await t.http.get(`/v1/workflows/${id}/draft`, { token: account.token });
    expect(draft.body.data).toMatchObject({
      revision: 1,
      baseVersion: 0,
      errors: [
        { field: 'nodes', message: 'must be a non-empty array of nodes' },
        { field: 'startNodeId', message: 'is required (id of the first node)' },
      ],
    });
    await t.http.put(`/v1/workflows/${id}/draft`, { revision: 1, definition: twoStep() }, { token: account.token });
    const published = await t.http.post(`/v1/workflows/${id}/publish`, { revision: 2 }, { token: account.token });
    expect(published.body.data).toEqual({ id, version: 1 });
    expect(await active()).toEqual([id]);
    expect((await t.http.post(new URL(created.body.data.webhookUrl).pathname, { phone: '+15550003333' })).status).toBe(
      200,
    );
  });

  it('versions are listed and readable; an earlier one is restored as the draft; a draft can be discarded', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Versions');
    await t.http.put(`/v1/workflows/${wf.id}/draft`, { revision: 0, definition: twoStep() }, { token: account.token });
    await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 1 }, { token: account.token });

    const versions = await t.http.get(`/v1/workflows/${wf.id}/versions`, { token: account.token });
    expect(versions.body.data.map((v: any) => [v.version, v.current, v.nodeCount])).toEqual([
      [2, true, 2],
      [1, false, 1],
    ]);
    const v1 = await t.http.get(`/v1/workflows/${wf.id}/versions/1`, { token: account.token });
    expect(v1.body.data).toMatchObject({ version: 1, current: false, definition: simpleDefinition(), layout: null });
    expect((await t.http.get(`/v1/workflows/${wf.id}/versions/9`, { token: account.token })).status).toBe(404);

    const restored = await t.http.post(`/v1/workflows/${wf.id}/versions/1/restore`, undefined, {
      token: account.token,
    });
    expect(restored.status).toBe(200);
    // revision 1 went to the published draft: a revision is never handed out twice
    // its base is the live version it would replace (2), not the version restored
    expect(restored.body.data).toMatchObject({ revision: 2, baseVersion: 2, definition: simpleDefinition() });
    // the live version is untouched until publish
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token })).body.data).toMatchObject({
      version: 2,
      hasDraft: true,
    });
    const again = await t.http.post(`/v1/workflows/${wf.id}/versions/2/restore`, undefined, { token: account.token });
    expect(again.body.data.revision).toBe(3);

    expect((await t.http.delete(`/v1/workflows/${wf.id}/draft`, { token: account.token })).status).toBe(200);
    expect((await t.http.delete(`/v1/workflows/${wf.id}/draft`, { token: account.token })).status).toBe(404);
    expect((await t.http.get(`/v1/workflows/${wf.id}/draft`, { token: account.token })).body).toEqual({
      statusCode: 404,
      message: 'This workflow has no draft',
    });
  });

  it('a draft revision is never handed out twice: an editor holding a published or discarded draft gets 409', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Two tabs');
    const save = (revision: number, target: string) =>
      t.http.put(`/v1/workflows/${wf.id}/draft`, { revision, definition: twoStep(target) }, { token: account.token });
    expect((await save(0, 'done')).body.data.revision).toBe(1); // tab A
    // tab B publishes A's draft and starts a new one
    expect(
      (await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 1 }, { token: account.token })).status,
    ).toBe(200);
    const b = await save(0, 'done');
    expect(b.body.data.revision).toBe(2);
    // tab A autosaves with the revision it holds: refused, B's draft kept
    const a = await save(1, 'nowhere');
    expect(a.status).toBe(409);
    expect(a.body.currentRevision).toBe(2);
    // the same after a discard
    expect((await t.http.delete(`/v1/workflows/${wf.id}/draft`, { token: account.token })).status).toBe(200);
    expect((await save(0, 'done')).body.data.revision).toBe(3);
    expect((await save(2, 'nowhere')).status).toBe(409);
    const draft = await t.http.get(`/v1/workflows/${wf.id}/draft`, { token: account.token });
    expect(draft.body.data).toMatchObject({ revision: 3, errors: [] });
  });

  it('an edit with asDraft is refused naming asDraft (it would have gone live at once)', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Live');
    const res = await t.http.post(
      '/v1/workflows',
      { mode: 'edit', id: wf.id, asDraft: true, ...twoStep() },
      { token: account.token },
    );
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'asDraft', message: 'asDraft is for mode create only: save a draft with PUT /v1/workflows/{id}/draft' },
    ]);
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token })).body.data.version).toBe(1);
  });

  it('publishing a draft over a version published since (an API edit) is a 409 until it says it replaces that version', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Edited twice');
    const draft = await t.http.put(
      `/v1/workflows/${wf.id}/draft`,
      { revision: 0, definition: twoStep() },
      { token: account.token },
    );
    expect(draft.body.data).toMatchObject({ revision: 1, baseVersion: 1 });
    // meanwhile a script edits the live workflow through the API: version 2 (drafts are left alone)
    const edited = await t.http.post(
      '/v1/workflows',
      { mode: 'edit', id: wf.id, name: 'Edited by a script', ...twoStep('done') },
      { token: account.token },
    );
    expect(edited.body.data.version).toBe(2);
    const refused = await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 1 }, { token: account.token });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 409,
      body: {
        statusCode: 409,
        message:
          'Version 2 was published after this draft was started from version 1: publishing would undo its changes. ' +
          'Compare them, then publish with replaces: 2',
        currentVersion: 2,
        baseVersion: 1,
      },
    });
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token })).body.data).toMatchObject({
      version: 2,
      name: 'Edited by a script',
      hasDraft: true,
    });
    const stale = await t.http.post(
      `/v1/workflows/${wf.id}/publish`,
      { revision: 1, replaces: 1 },
      { token: account.token },
    );
    expect(stale.status).toBe(409);
    const bad = await t.http.post(
      `/v1/workflows/${wf.id}/publish`,
      { revision: 1, replaces: 'latest' },
      { token: account.token },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('replaces');
    const replaced = await t.http.post(
      `/v1/workflows/${wf.id}/publish`,
      { revision: 1, replaces: 2 },
      { token: account.token },
    );
    expect(replaced.body.data).toEqual({ id: wf.id, version: 3 });

    // a restored version replaces the live one it was restored over: no 409
    const restored = await t.http.post(`/v1/workflows/${wf.id}/versions/1/restore`, undefined, {
      token: account.token,
    });
    expect(restored.body.data.baseVersion).toBe(3);
    const republished = await t.http.post(
      `/v1/workflows/${wf.id}/publish`,
      { revision: restored.body.data.revision },
      { token: account.token },
    );
    expect(republished.body.data).toEqual({ id: wf.id, version: 4 });
  });

  it('bad drafts get a 400 naming the field', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition());
    const cases: Array<[unknown, string]> = [
      [{ definition: twoStep() }, 'revision'],
      [{ revision: 0, definition: 'nope' }, 'definition'],
      [{ revision: 0, definition: twoStep(), layout: { nodes: { wait: { x: 'a', y: 1 } } } }, 'layout.nodes.wait'],
      [{ revision: 0, definition: twoStep(), name: '' }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await t.http.put(`/v1/workflows/${wf.id}/draft`, body, { token: account.token });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    const res = await t.http.post(`/v1/workflows/${wf.id}/publish`, {}, { token: account.token });
    expect(res.status).toBe(400);
    expect(await t.db.query('SELECT 1 FROM workflow_drafts WHERE workflow_id = $1', [wf.id])).toEqual([]);
    // a field the engine does not know is shown in the draft's errors, and publish refuses it the same (it was dropped)
    const extra = await t.http.put(
      `/v1/workflows/${wf.id}/draft`,
      { revision: 0, definition: { ...twoStep(), extra: 1 } },
      { token: account.token },
    );
    expect(extra.body.data.errors).toHaveLength(1);
    const published = await t.http.post(`/v1/workflows/${wf.id}/publish`, { revision: 1 }, { token: account.token });
    expect(published.status).toBe(400);
    expect(published.body.errors).toEqual(extra.body.data.errors);
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token })).body.data.version).toBe(1);
  });

  it('DELETE archives: gone from the list and the API, webhook 404, runs still readable', async () => {
    const account = await t.createAccount();
    const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Old one');
    const started = await t.http.post(new URL(wf.webhookUrl).pathname, { phone: '+15550002222' });
    expect(started.status).toBe(200);
    const res = await t.http.delete(`/v1/workflows/${wf.id}`, { token: account.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Workflow archived' });
    expect((await t.http.get('/v1/workflows', { token: account.token })).body.data).toEqual([]);
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: account.token })).status).toBe(404);
    expect((await t.http.delete(`/v1/workflows/${wf.id}`, { token: account.token })).status).toBe(404);
    expect((await t.http.post(new URL(wf.webhookUrl).pathname, {})).status).toBe(404);
    expect((await t.http.get(`/v1/workflow-runs/${started.body.runId}`, { token: account.token })).status).toBe(200);
    const runs = await t.http.get(`/v1/workflows/${wf.id}/runs`, { token: account.token });
    expect(runs.status).toBe(404);
    expect(runs.body.message).toBe('Workflow not found');
    // nor can a draft be started or published on it
    const draft = await t.http.put(
      `/v1/workflows/${wf.id}/draft`,
      { revision: 0, definition: twoStep() },
      { token: account.token },
    );
    expect(draft.status).toBe(404);
  });

  it("every new endpoint answers 404 for another account's workflow", async () => {
    const owner = await t.createAccount();
    const intruder = await t.createAccount();
    const wf = await createWorkflow(t, owner.token, simpleDefinition());
    await t.http.put(`/v1/workflows/${wf.id}/draft`, { revision: 0, definition: twoStep() }, { token: owner.token });
    const calls: Array<[string, string, unknown?]> = [
      ['DELETE', `/v1/workflows/${wf.id}`],
      ['GET', `/v1/workflows/${wf.id}/draft`],
      ['PUT', `/v1/workflows/${wf.id}/draft`, { revision: 1, definition: twoStep() }],
      ['DELETE', `/v1/workflows/${wf.id}/draft`],
      ['POST', `/v1/workflows/${wf.id}/publish`, { revision: 1 }],
      ['GET', `/v1/workflows/${wf.id}/versions`],
      ['GET', `/v1/workflows/${wf.id}/versions/1`],
      ['POST', `/v1/workflows/${wf.id}/versions/1/restore`],
      ['POST', `/v1/workflows/${wf.id}/test-runs`, { payload: {} }],
    ];
    // the intruder's API client and a console session of the intruder's account alike
    const session = await consoleSession(t, intruder.accountId, 'marketer');
    for (const [method, path, body] of calls) {
      const viaToken = await t.http.request(method, path, { token: intruder.token, body });
      expect([method, path, viaToken.status, viaToken.body.message]).toEqual([method, path, 404, 'Workflow not found']);
      const viaSession = await t.http.request(method, path, { ...asUser(session), body });
      expect([method, path, viaSession.status]).toEqual([method, path, 404]);
    }
    const draft = await t.http.get(`/v1/workflows/${wf.id}/draft`, { token: owner.token });
    expect(draft.body.data.revision).toBe(1);
    expect((await t.http.get(`/v1/workflows/${wf.id}`, { token: owner.token })).body.data.version).toBe(1);
    expect(await t.db.query('SELECT 1 FROM workflow_runs WHERE workflow_id = $1', [wf.id])).toEqual([]);
  });

  it('the console uses the same endpoints with its session; an agent is refused', async () => {
    const account = await t.createAccount();
    const marketer = await consoleSession(t, account.accountId, 'marketer');
    const created = await t.http.post(
      '/v1/workflows',
      { mode: 'create', name: 'From the console', ...simpleDefinition() },
      asUser(marketer),
    );
    expect(created.status).toBe(200);
    const agent = await consoleSession(t, account.accountId, 'agent');
    for (const [method, path, body] of [
      ['GET', '/v1/workflows'],
      ['GET', `/v1/workflows/${created.body.data.id}`],
      ['PUT', `/v1/workflows/${created.body.data.id}/draft`, { revision: 0, definition: simpleDefinition() }],
    ] as Array<[string, string, unknown?]>) {
      const res = await t.http.request(method, path, { ...asUser(agent), body });
      expect(res.status).toBe(403);
      expect(res.body.required_grant).toBe('/workflows');
    }
  });
});
