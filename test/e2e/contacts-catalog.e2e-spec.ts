import { createWorkflow, simpleDefinition } from '../helpers/automations';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * What the console's contacts page needs from the API (issue 20): a group's members, renaming a group, the group_id
 * filter of /v2/contacts, unknown query parameters refused with a 400 naming them, and the workflow runs a contact is
 * in. Every record is reachable only by its own account (another account's id is a 404, as if it did not exist).
 */
describe('Contacts for the console: members, rename, group filter, strict queries, runs of a contact', () => {
  let t: TestApp;
  let a: TestAccount;
  let b: TestAccount;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    a = await t.createAccount();
    b = await t.createAccount();
  });
  afterAll(() => t.close());

  const get = (account: TestAccount, path: string) => t.http.get(path, { token: account.token });
  const patch = (account: TestAccount, path: string, body: unknown) =>
    t.http.request('PATCH', path, { token: account.token, body });
  const group = async (account: TestAccount, name: string) =>
    (await t.http.post('/v2/contact-groups', { name }, { token: account.token })).body.data.group.group_id as number;
  const contact = async (account: TestAccount, number: string, name: string, group_ids: number[] = []) =>
    (
      await t.http.post(
        '/contacts/create-contact',
        { contact_number: number, name, group_ids },
        { token: account.token },
      )
    ).body.data.contact.contact_id as number;

  describe('GET /v2/contact-groups/{id}/members and /v2/contacts?group_id=', () => {
    let vip: number;
    let ids: number[];
    beforeAll(async () => {
      vip = await group(a, 'VIP members');
      ids = [];
      for (let i = 0; i < 5; i++) ids.push(await contact(a, `+1555010${2000 + i}`, `Member ${i}`, [vip]));
      await contact(a, '+15550109999', 'Outsider');
      await patch(a, `/v2/contacts/${ids[1]}`, { isBlocked: true });
    });

    it('pages over the members, newest first, with their opt-out state and the group', async () => {
      const first = await get(a, `/v2/contact-groups/${vip}/members?page=1&pageSize=2`);
      expect(first.status).toBe(200);
      expect(first.body.data.group).toEqual({
        group_id: vip,
        name: 'VIP members',
        member_count: 5,
        created_at: expect.stringMatching(/Z$/),
      });
      expect(first.body.data).toMatchObject({ page: 1, pageSize: 2, total: 5 });
      expect(first.body.data.contacts.map((c: any) => c.contact_id)).toEqual([ids[4], ids[3]]);
      const last = await get(a, `/v2/contact-groups/${vip}/members?page=3&pageSize=2`);
      expect(last.body.data.contacts).toEqual([
        {
          contact_id: ids[0],
          name: 'Member 0',
          contact_number: '15550102000',
          email: null,
          isBlocked: false,
          platform: 'whatsapp',
          created_at: expect.stringMatching(/Z$/),
        },
      ]);
      const searched = await get(a, `/v2/contact-groups/${vip}/members?search=member%201`);
      expect(searched.body.data.contacts).toEqual([expect.objectContaining({ contact_id: ids[1], isBlocked: true })]);
      expect(searched.body.data.total).toBe(1);
    });

    it('filters /v2/contacts by group, with search and phone too', async () => {
      const all = await get(a, '/v2/contacts?pageSize=100');
      expect(all.body.data.total).toBe(6);
      const members = await get(a, `/v2/contacts?group_id=${vip}&pageSize=100`);
      expect(members.status).toBe(200);
      expect(members.body.data.contacts.map((c: any) => c.contact_id)).toEqual([...ids].reverse());
      expect(members.body.data.total).toBe(5);
      const bySearch = await get(a, `/v2/contacts?group_id=${vip}&search=member%203`);
      expect(bySearch.body.data.contacts.map((c: any) => c.contact_id)).toEqual([ids[3]]);
      const outsiderInGroup = await get(a, `/v2/contacts?group_id=${vip}&phone=%2B15550109999`);
      expect(outsiderInGroup.body.data).toMatchObject({ contacts: [], total: 0 });
      const empty = await group(a, 'Nobody yet');
      expect((await get(a, `/v2/contacts?group_id=${empty}`)).body.data).toMatchObject({ contacts: [], total: 0 });
    });

    it("answers 404 for another account's group (members and filter), as for a group that does not exist", async () => {
      for (const path of [`/v2/contact-groups/${vip}/members`, `/v2/contacts?group_id=${vip}`]) {
        const res = await get(b, path);
        expect(res.status).toBe(404);
        expect(res.body.message).toBe('Contact group not found');
      }
      expect((await get(a, '/v2/contact-groups/999999999/members')).status).toBe(404);
    });

    it('answers 400 naming the parameter for a bad group_id, page or pageSize', async () => {
      for (const [query, field] of [
        ['group_id=abc', 'group_id'],
        ['group_id=0', 'group_id'],
        ['group_id=1.5', 'group_id'],
      ]) {
        const res = await get(a, `/v2/contacts?${query}`);
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field, message: 'group_id must be a positive integer' }]);
      }
      const big = await get(a, `/v2/contact-groups/${vip}/members?pageSize=101`);
      expect(big.status).toBe(400);
      expect(big.body.errors[0].field).toBe('pageSize');
      const path = await get(a, '/v2/contact-groups/abc/members');
      expect(path.status).toBe(400);
      expect(path.body.errors).toEqual([{ field: 'group_id', message: 'group_id must be a positive integer' }]);
    });
  });

  describe('unknown query parameters', () => {
    it('are refused with a 400 naming each of them (a mistyped filter never lists everything)', async () => {
      const res = await get(a, '/v2/contacts?groupId=3&search=x&sort=name');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        field: 'groupId',
        message: 'unknown query parameter groupId; allowed: group_id, page, pageSize, phone, search',
        errors: [
          {
            field: 'groupId',
            message: 'unknown query parameter groupId; allowed: group_id, page, pageSize, phone, search',
          },
          { field: 'sort', message: 'unknown query parameter sort; allowed: group_id, page, pageSize, phone, search' },
        ],
      });
      const groups = await get(a, '/v2/contact-groups?name=VIP');
      expect(groups.status).toBe(400);
      expect(groups.body.errors).toEqual([
        { field: 'name', message: 'unknown query parameter name; allowed: page, pageSize' },
      ]);
      const runs = await get(a, '/v1/workflow-runs?contact=1');
      expect(runs.status).toBe(400);
      expect(runs.body.errors[0].field).toBe('contact');
    });

    it('come after authentication: no token is still a 401', async () => {
      expect((await t.http.get('/v2/contacts?groupId=3')).status).toBe(401);
    });
  });

  describe('PATCH /v2/contact-groups/{id}', () => {
    it('renames the group (stored, trimmed) and answers it with its member count', async () => {
      const id = await group(a, 'Launch list');
      await contact(a, '+15550103001', 'Launch member', [id]);
      const res = await patch(a, `/v2/contact-groups/${id}`, { name: '  Launch 2027 ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          group: { group_id: id, name: 'Launch 2027', member_count: 1, created_at: expect.stringMatching(/Z$/) },
        },
      });
      expect(await t.db.query('SELECT name FROM contact_groups WHERE id = $1', [id])).toEqual([
        { name: 'Launch 2027' },
      ]);
      // its own name in another case is fine
      expect((await patch(a, `/v2/contact-groups/${id}`, { name: 'LAUNCH 2027' })).status).toBe(200);
    });

    it('answers 409 with the other group id when the name is taken (any case), and changes nothing', async () => {
      const taken = await group(a, 'Gold');
      const id = await group(a, 'Silver');
      const res = await patch(a, `/v2/contact-groups/${id}`, { name: 'gold' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        statusCode: 409,
        message: 'A contact group named "gold" already exists',
        group_id: taken,
      });
      expect(await t.db.query('SELECT name FROM contact_groups WHERE id = $1', [id])).toEqual([{ name: 'Silver' }]);
    });

    it('answers 400 naming name for a missing, empty or too long name', async () => {
      const id = await group(a, 'Bronze');
      for (const body of [{}, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 7 }]) {
        const res = await patch(a, `/v2/contact-groups/${id}`, body);
        expect(res.status).toBe(400);
        expect(res.body.errors[0].field).toBe('name');
      }
    });

    it("answers 404 for another account's group and leaves it alone", async () => {
      const id = await group(a, 'Private');
      const res = await patch(b, `/v2/contact-groups/${id}`, { name: 'Mine now' });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Contact group not found');
      expect(await t.db.query('SELECT name FROM contact_groups WHERE id = $1', [id])).toEqual([{ name: 'Private' }]);
    });
  });

  describe('GET /v1/workflow-runs?contact_id=', () => {
    it("lists the runs a contact is in (bound by number), newest first, with the workflow's name", async () => {
      const ada = await contact(a, '+1 555 010 4001', 'Ada');
      const other = await contact(a, '+15550104002', 'Grace');
      const wf = await createWorkflow(t, a.token, simpleDefinition(), 'Welcome flow');
      const start = async (phone: string) =>
        (await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone })).body.runId as string;
      const first = await start('+15550104001');
      const second = await start('0015550104001');
      await start('+15550104002');
      expect(first && second).toBeTruthy();

      const res = await get(a, `/v1/workflow-runs?contact_id=${ada}`);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ page: 1, pageSize: 20, total: 2, totalPages: 1 });
      expect(res.body.data.map((r: any) => r.runId)).toEqual([second, first]);
      expect(res.body.data[0]).toEqual({
        runId: second,
        workflowId: wf.id,
        workflowName: 'Welcome flow',
        workflowVersion: 1,
        status: expect.any(String),
        currentNodeId: null,
        contactPhone: '15550104001',
        error: null,
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
        finishedAt: null,
      });
      expect((await get(a, `/v1/workflow-runs?contact_id=${other}`)).body.pagination.total).toBe(1);
      // the other account's view: the contact does not exist
      const foreign = await get(b, `/v1/workflow-runs?contact_id=${ada}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.message).toBe('Contact not found');
    });

    it('answers 400 naming contact_id when it is missing or not a positive integer', async () => {
      for (const query of ['', '?contact_id=', '?contact_id=x', '?contact_id=-3']) {
        const res = await get(a, `/v1/workflow-runs${query}`);
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([
          { field: 'contact_id', message: 'contact_id is required: a positive integer' },
        ]);
      }
    });
  });
});
