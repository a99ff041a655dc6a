import { ContactsService } from '@switchboard/contacts';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** Contact groups: our API (SPEC only shows group ids in create-contact); decisions in docs/contacts.md. */
describe('Contact groups', () => {
  let t: TestApp;
  let a: TestAccount;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    a = await t.createAccount();
  });

  const createGroup = (account: TestAccount, body: unknown) =>
    t.http.post('/v2/contact-groups', body, { token: account.token });
  const groupId = async (account: TestAccount, name: string) =>
    (await createGroup(account, { name })).body.data.group.group_id as number;
  const contactId = async (account: TestAccount, number: string, extra: object = {}) =>
    (await t.http.post('/contacts/create-contact', { contact_number: number, ...extra }, { token: account.token })).body
      .data.contact.contact_id as number;
  const addMembers = (account: TestAccount, id: number, body: unknown) =>
    t.http.post(`/v2/contact-groups/${id}/members`, body, { token: account.token });
  const removeMembers = (account: TestAccount, id: number, body: unknown) =>
    t.http.request('DELETE', `/v2/contact-groups/${id}/members`, { token: account.token, body });
  const members = (id: number) =>
    t.db
      .query('SELECT contact_id::int AS id FROM contact_group_members WHERE group_id = $1 ORDER BY contact_id', [id])
      .then((r: any[]) => r.map((m) => m.id));

  describe('POST /v2/contact-groups', () => {
    it('creates a group: 201 with its id, name, member count and creation time', async () => {
      const res = await createGroup(a, { name: '  VIP customers ' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        data: {
          group: {
            group_id: expect.any(Number),
            name: 'VIP customers',
            member_count: 0,
            created_at: expect.stringMatching(/Z$/),
          },
        },
      });
      const [row] = await t.db.query('SELECT account_id, name FROM contact_groups WHERE id = $1', [
        res.body.data.group.group_id,
      ]);
      expect(row).toEqual({ account_id: a.accountId, name: 'VIP customers' });
    });

    it('answers 409 for a name the account already uses, whatever its case', async () => {
      const first = await createGroup(a, { name: 'VIP' });
      for (const name of ['VIP', 'vip', ' Vip ']) {
        const res = await createGroup(a, { name });
        expect(res.status).toBe(409);
        expect(res.body).toEqual({
          statusCode: 409,
          message: `A contact group named "${name.trim()}" already exists`,
          group_id: first.body.data.group.group_id,
        });
      }
      expect(
        await t.db.query('SELECT count(*)::int AS n FROM contact_groups WHERE account_id = $1', [a.accountId]),
      ).toEqual([{ n: 1 }]);
    });

    it('creates one group when five requests for one name race', async () => {
      const results = await Promise.all(
        ['Launch', 'launch', 'LAUNCH', 'Launch', ' launch '].map((name) => createGroup(a, { name })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      const winner = results.find((r) => r.status === 201)!.body.data.group.group_id;
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.group_id).toBe(winner);
      expect(
        await t.db.query('SELECT count(*)::int AS n FROM contact_groups WHERE account_id = $1', [a.accountId]),
      ).toEqual([{ n: 1 }]);
    });

    it('lets two accounts use the same group name', async () => {
      const b = await t.createAccount();
      expect((await createGroup(a, { name: 'VIP' })).status).toBe(201);
      expect((await createGroup(b, { name: 'VIP' })).status).toBe(201);
    });

    it('answers 400 naming name when it is missing, blank, too long or not a string', async () => {
      for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 7 }]) {
        const res = await createGroup(a, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          statusCode: 400,
          message: 'name must be a string of 1 to 200 characters',
          field: 'name',
          errors: [{ field: 'name', message: 'name must be a string of 1 to 200 characters' }],
        });
      }
    });
  });

  describe('GET /v2/contact-groups and /v2/contact-groups/{group_id}', () => {
    it('lists groups newest first with member counts, paginated', async () => {
      const vip = await groupId(a, 'VIP');
      const news = await groupId(a, 'Newsletter');
      const c1 = await contactId(a, '15550102030', { group_ids: [vip, news] });
      await contactId(a, '15550102031', { group_ids: [vip] });
      expect(c1).toEqual(expect.any(Number));

      const res = await t.http.get('/v2/contact-groups', { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          groups: [
            { group_id: news, name: 'Newsletter', member_count: 1, created_at: expect.any(String) },
            { group_id: vip, name: 'VIP', member_count: 2, created_at: expect.any(String) },
          ],
          page: 1,
          pageSize: 20,
          total: 2,
        },
      });

      const page2 = await t.http.get('/v2/contact-groups?page=2&pageSize=1', { token: a.token });
      expect(page2.body.data).toEqual({
        groups: [expect.objectContaining({ group_id: vip })],
        page: 2,
        pageSize: 1,
        total: 2,
      });
      const bad = await t.http.get('/v2/contact-groups?pageSize=101', { token: a.token });
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([{ field: 'pageSize', message: 'pageSize must be an integer from 1 to 100' }]);
    });

    it('returns one group; 404 Contact group not found for an unknown id', async () => {
      const vip = await groupId(a, 'VIP');
      await contactId(a, '15550102030', { group_ids: [vip] });
      const res = await t.http.get(`/v2/contact-groups/${vip}`, { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { group: { group_id: vip, name: 'VIP', member_count: 1, created_at: expect.any(String) } },
      });

      const missing = await t.http.get('/v2/contact-groups/999999', { token: a.token });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, message: 'Contact group not found' });

      const malformed = await t.http.get('/v2/contact-groups/abc', { token: a.token });
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors).toEqual([{ field: 'group_id', message: 'group_id must be a positive integer' }]);
    });
  });

  describe('members', () => {
    it('adds contacts to a group, idempotently', async () => {
      const vip = await groupId(a, 'VIP');
      const c1 = await contactId(a, '15550102030');
      const c2 = await contactId(a, '15550102031');

      const first = await addMembers(a, vip, { contact_ids: [c1, c2, c1] });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ success: true, data: { group_id: vip, added: 2, member_count: 2 } });

      const again = await addMembers(a, vip, { contact_ids: [c2, c1] });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ success: true, data: { group_id: vip, added: 0, member_count: 2 } });
      expect(await members(vip)).toEqual([c1, c2].sort((x, y) => x - y));
    });

    it('two requests adding the same contacts in opposite orders both succeed (no deadlock, no 500)', async () => {
      const ids: number[] = (
        await t.db.query(
          `INSERT INTO contacts (account_id, contact_number) SELECT $1, '1555077' || lpad(i::text, 4, '0')
             FROM generate_series(1, 300) i RETURNING id`,
          [a.accountId],
        )
      ).map((r: any) => Number(r.id));
      for (let round = 0; round < 3; round++) {
        const group = await groupId(a, `Race ${round}`);
        const answers = await Promise.all([
          addMembers(a, group, { contact_ids: ids }),
          addMembers(a, group, { contact_ids: [...ids].reverse() }),
        ]);
        expect(answers.map((r) => r.status)).toEqual([200, 200]);
        expect(answers.reduce((n, r) => n + r.body.data.added, 0)).toBe(300);
        expect(await members(group)).toHaveLength(300);
      }
    });

    it('answers 400 listing unknown contact ids and adds nothing', async () => {
      const vip = await groupId(a, 'VIP');
      const c1 = await contactId(a, '15550102030');
      const res = await addMembers(a, vip, { contact_ids: [c1, 999998, 999999] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: 'Not all contacts exist in the database for this account.',
        missingContacts: [999998, 999999],
      });
      expect(await members(vip)).toEqual([]);
    });

    it('answers 400 naming contact_ids when the list is empty or malformed', async () => {
      const vip = await groupId(a, 'VIP');
      for (const body of [
        {},
        { contact_ids: [] },
        { contact_ids: 'x' },
        { contact_ids: [-1] },
        { contact_ids: ['1'] },
        { contact_ids: Array(1001).fill(1) },
      ]) {
        const res = await addMembers(a, vip, body);
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([
          {
            field: 'contact_ids',
            message: 'contact_ids must be an array of 1 to 1000 contact ids (positive integers)',
          },
        ]);
      }
    });

    it('removes contacts from a group, ignoring ids that are not members', async () => {
      const vip = await groupId(a, 'VIP');
      const c1 = await contactId(a, '15550102030', { group_ids: [vip] });
      const c2 = await contactId(a, '15550102031', { group_ids: [vip] });

      const res = await removeMembers(a, vip, { contact_ids: [c1, 999999] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: { group_id: vip, removed: 1, member_count: 1 } });
      expect(await members(vip)).toEqual([c2]);

      const again = await removeMembers(a, vip, { contact_ids: [c1] });
      expect(again.body).toEqual({ success: true, data: { group_id: vip, removed: 0, member_count: 1 } });
      // the contact itself stays
      expect(await t.db.query('SELECT count(*)::int AS n FROM contacts WHERE id = $1', [c1])).toEqual([{ n: 1 }]);
    });
  });

  describe('DELETE /v2/contact-groups/{group_id}', () => {
    it('deletes the group and its memberships; the contacts stay; a second delete is 404', async () => {
      const vip = await groupId(a, 'VIP');
      const c1 = await contactId(a, '15550102030', { group_ids: [vip] });

      const res = await t.http.delete(`/v2/contact-groups/${vip}`, { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'Contact group deleted' });
      expect(await t.db.query('SELECT count(*)::int AS n FROM contact_groups WHERE id = $1', [vip])).toEqual([
        { n: 0 },
      ]);
      expect(await members(vip)).toEqual([]);
      expect(await t.db.query('SELECT count(*)::int AS n FROM contacts WHERE id = $1', [c1])).toEqual([{ n: 1 }]);

      const again = await t.http.delete(`/v2/contact-groups/${vip}`, { token: a.token });
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ statusCode: 404, message: 'Contact group not found' });

      // its id is now "missing" for create-contact
      const create = await t.http.post(
        '/contacts/create-contact',
        { contact_number: '15550102099', group_ids: [vip] },
        { token: a.token },
      );
      expect(create.status).toBe(400);
      expect(create.body).toEqual({
        statusCode: 400,
        message: 'Not all groups exist in the database for this account.',
        missingGroups: [vip],
      });
    });
  });

  describe('account isolation', () => {
    it("account B cannot list, read, change or delete account A's groups (404), nor add A's contacts to its own", async () => {
      const b = await t.createAccount();
      const vip = await groupId(a, 'VIP');
      const aContact = await contactId(a, '15550102030', { group_ids: [vip] });
      const bContact = await contactId(b, '15550102031');
      const bGroup = await groupId(b, 'B group');

      const listed = await t.http.get('/v2/contact-groups', { token: b.token });
      expect(listed.body.data.groups.map((g: any) => g.group_id)).toEqual([bGroup]);
      expect(listed.body.data.total).toBe(1);

      const notFound = { statusCode: 404, message: 'Contact group not found' };
      const attempts = [
        await t.http.get(`/v2/contact-groups/${vip}`, { token: b.token }),
        await addMembers(b, vip, { contact_ids: [bContact] }),
        await removeMembers(b, vip, { contact_ids: [aContact] }),
        await t.http.delete(`/v2/contact-groups/${vip}`, { token: b.token }),
      ];
      for (const res of attempts) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(notFound);
      }
      expect(await members(vip)).toEqual([aContact]);
      expect(await t.db.query('SELECT count(*)::int AS n FROM contact_groups WHERE id = $1', [vip])).toEqual([
        { n: 1 },
      ]);

      // A's contact id is "missing" for B
      const cross = await addMembers(b, bGroup, { contact_ids: [aContact, bContact] });
      expect(cross.status).toBe(400);
      expect(cross.body).toEqual({
        statusCode: 400,
        message: 'Not all contacts exist in the database for this account.',
        missingContacts: [aContact],
      });
      expect(await members(bGroup)).toEqual([]);
    });
  });

  describe('ContactsService (what messaging and campaigns call)', () => {
    let service: ContactsService;
    beforeAll(() => {
      service = t.app.get(ContactsService);
    });

    it('findOrCreateByNumber creates once and then finds, under concurrency', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          service.findOrCreateByNumber(a.accountId, i % 2 ? '+1 555 010 2030' : '15550102030', `Caller ${i}`),
        ),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.contact.id)).size).toBe(1);
      const { contact } = results[0];
      expect(contact).toMatchObject({
        accountId: a.accountId,
        contactNumber: '15550102030',
        isBlocked: false,
        platform: 'whatsapp',
      });
      expect(contact.createdAt).toBeInstanceOf(Date);

      const again = await service.findOrCreateByNumber(a.accountId, '0015550102030');
      expect(again).toMatchObject({ created: false, contact: { id: contact.id } });
      await expect(service.findOrCreateByNumber(a.accountId, '12')).rejects.toMatchObject({ status: 400 });

      const other = await t.createAccount();
      const theirs = await service.findOrCreateByNumber(other.accountId, '15550102030');
      expect(theirs.created).toBe(true);
      expect(theirs.contact.id).not.toBe(contact.id);
    });

    it('walks a group by keyset, skipping blocked contacts unless asked, and only within the account', async () => {
      const vip = await groupId(a, 'VIP');
      const ids: number[] = [];
      for (let i = 0; i < 7; i++) ids.push(await contactId(a, `1555010200${i}`, { group_ids: [vip] }));
      await t.http.request('PATCH', `/v2/contacts/${ids[3]}`, { token: a.token, body: { isBlocked: true } });

      const first = await service.groupMembersAfter(a.accountId, String(vip), '0', 3);
      expect(first.map((c) => Number(c.id))).toEqual([ids[0], ids[1], ids[2]]);
      const second = await service.groupMembersAfter(a.accountId, String(vip), first[2].id, 3);
      expect(second.map((c) => Number(c.id))).toEqual([ids[4], ids[5], ids[6]]);
      expect(await service.groupMembersAfter(a.accountId, String(vip), second[2].id, 3)).toEqual([]);

      const withBlocked = await service.groupMembersAfter(a.accountId, String(vip), '0', 100, { includeBlocked: true });
      expect(withBlocked.map((c) => Number(c.id))).toEqual(ids);
      expect(withBlocked[3].isBlocked).toBe(true);

      const batches: number[][] = [];
      for await (const batch of service.iterateGroupMembers(a.accountId, String(vip), 2))
        batches.push(batch.map((c) => Number(c.id)));
      expect(batches).toEqual([
        [ids[0], ids[1]],
        [ids[2], ids[4]],
        [ids[5], ids[6]],
      ]);

      const b = await t.createAccount();
      expect(await service.groupMembersAfter(b.accountId, String(vip), '0', 100)).toEqual([]);
    });
  });
});
