import { ContactsService } from '@switchboard/contacts';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** SPEC §2 Contact, §4 Contacts, §7 (missing groups), §8 (pageSize); our decisions in docs/contacts.md. */
describe('Contacts', () => {
  let t: TestApp;
  let a: TestAccount;

  // Many requests per account here; the REST limit has its own suite.
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    a = await t.createAccount();
  });

  const create = (account: TestAccount, body: unknown) =>
    t.http.post('/contacts/create-contact', body, { token: account.token });
  const list = (account: TestAccount, query = '') => t.http.get(`/v2/contacts${query}`, { token: account.token });
  const patch = (account: TestAccount, id: number | string, body: unknown) =>
    t.http.request('PATCH', `/v2/contacts/${id}`, { token: account.token, body });
  const createGroup = async (account: TestAccount, name: string) => {
    const res = await t.http.post('/v2/contact-groups', { name }, { token: account.token });
    expect(res.status).toBe(201);
    return res.body.data.group.group_id as number;
  };
  const rows = (accountId: string) =>
    t.db.query('SELECT * FROM contacts WHERE account_id = $1 ORDER BY id', [accountId]);
  const members = (groupId: number) =>
    t.db
      .query(
        'SELECT contact_id::int AS contact_id FROM contact_group_members WHERE group_id = $1 ORDER BY contact_id',
        [groupId],
      )
      .then((r: any[]) => r.map((m) => m.contact_id));

  const PHONE_MESSAGE =
    'contact_number must be a phone number with country code (8 to 15 digits, e.g. +1 555 010 2030)';

  describe('POST /contacts/create-contact', () => {
    it('creates a contact with every SPEC field and answers 200 Created a new contact', async () => {
      const res = await create(a, {
        contact_number: '+1 (555) 010-2030',
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        dateOfBirth: '1990-12-10',
        gender: 'female',
        instagramUrl: 'https://instagram.com/ada',
        facebookUrl: 'https://facebook.com/ada',
        linkedinUrl: 'https://www.linkedin.com/in/ada',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          contact: { contact_id: expect.any(Number), name: 'Ada Lovelace', contact_number: '15550102030' },
          message: 'Created a new contact',
        },
      });

      const [row] = await rows(a.accountId);
      expect(row).toMatchObject({
        id: String(res.body.data.contact.contact_id),
        account_id: a.accountId,
        name: 'Ada Lovelace',
        contact_number: '15550102030',
        email: 'ada@example.com',
        gender: 'female',
        instagram_url: 'https://instagram.com/ada',
        facebook_url: 'https://facebook.com/ada',
        linkedin_url: 'https://www.linkedin.com/in/ada',
        is_blocked: false,
        platform: 'whatsapp',
      });
      const [{ dob }] = await t.db.query('SELECT date_of_birth::text AS dob FROM contacts WHERE id = $1', [row.id]);
      expect(dob).toBe('1990-12-10');
    });

    it('needs only contact_number; name is null when not given', async () => {
      const res = await create(a, { contact_number: '447700900123' });
      expect(res.status).toBe(200);
      expect(res.body.data.contact).toEqual({
        contact_id: expect.any(Number),
        name: null,
        contact_number: '447700900123',
      });
    });

    it.each([
      ['+1 (555) 010-2030'],
      ['0015550102030'],
      ['1 555 010 2030'],
      ['  +1 555 010 2030  '],
      ['+1.555.010.2030'],
      ['15550102030'],
    ])('normalises %j to digits with country code', async (input) => {
      const res = await create(a, { contact_number: input });
      expect(res.status).toBe(200);
      expect(res.body.data.contact.contact_number).toBe('15550102030');
      expect((await rows(a.accountId)).map((r: any) => r.contact_number)).toEqual(['15550102030']);
    });

    it('treats every format of one number as the same contact', async () => {
      const first = await create(a, { contact_number: '+1 (555) 010-2030', name: 'Ada' });
      for (const format of ['0015550102030', '1 555 010 2030', '15550102030']) {
        const again = await create(a, { contact_number: format, name: 'Someone else' });
        expect(again.status).toBe(200);
        expect(again.body).toEqual({
          success: true,
          data: {
            contact: { contact_id: first.body.data.contact.contact_id, name: 'Ada', contact_number: '15550102030' },
            message: 'The contact is already existing',
          },
        });
      }
      const stored = await rows(a.accountId);
      expect(stored).toHaveLength(1);
      expect(stored[0].name).toBe('Ada'); // an existing contact is returned unchanged
    });

    it.each([
      ['too short', '12345'],
      ['too long', '+1234567890123456'],
      ['letters', '+1 555 CALL NOW'],
      ['national number (trunk 0)', '05550102030'],
      ['plus in the middle', '1555+0102030'],
      ['not a number at all', 'hello'],
    ])('answers 400 naming contact_number for an implausible number (%s) and stores nothing', async (_, input) => {
      const res = await create(a, { contact_number: input, name: 'X' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: PHONE_MESSAGE,
        field: 'contact_number',
        errors: [{ field: 'contact_number', message: PHONE_MESSAGE }],
      });
      expect(await rows(a.accountId)).toEqual([]);
    });

    it('answers 400 naming contact_number when it is missing, empty or not a string', async () => {
      for (const body of [
        {},
        { name: 'No number' },
        { contact_number: '' },
        { contact_number: null },
        { contact_number: ['15550102030'] },
        { contact_number: true },
      ]) {
        const res = await create(a, body);
        expect(res.status).toBe(400);
        expect(res.body.errors.map((e: any) => e.field)).toEqual(['contact_number']);
      }
      const missing = await create(a, {});
      expect(missing.body.message).toBe(
        'contact_number is required: a phone number with country code (8 to 15 digits, e.g. +1 555 010 2030)',
      );
      expect(await rows(a.accountId)).toEqual([]);
    });

    it('accepts the number as a JSON number of digits', async () => {
      const res = await create(a, { contact_number: 15550102030 });
      expect(res.status).toBe(200);
      expect(res.body.data.contact.contact_number).toBe('15550102030');
    });

    it.each([
      ['email', { email: 'not-an-email' }, 'email must be an email address'],
      [
        'dateOfBirth',
        { dateOfBirth: '10/12/1990' },
        'dateOfBirth must be a date YYYY-MM-DD between 1900-01-01 and today',
      ],
      [
        'dateOfBirth',
        { dateOfBirth: '2023-02-30' },
        'dateOfBirth must be a date YYYY-MM-DD between 1900-01-01 and today',
      ],
      ['instagramUrl', { instagramUrl: 'javascript:alert(1)' }, 'instagramUrl must be an http(s) URL'],
      ['name', { name: 42 }, 'name must be a string of at most 200 characters'],
      ['name', { name: 'x'.repeat(201) }, 'name must be a string of at most 200 characters'],
      ['gender', { gender: ['f'] }, 'gender must be a string of at most 50 characters'],
      ['group_ids', { group_ids: 'abc' }, 'group_ids must be an array of 0 to 100 group ids (positive integers)'],
      ['group_ids', { group_ids: ['1'] }, 'group_ids must be an array of 0 to 100 group ids (positive integers)'],
      ['group_ids', { group_ids: [0] }, 'group_ids must be an array of 0 to 100 group ids (positive integers)'],
      ['group_ids', { group_ids: [1.5] }, 'group_ids must be an array of 0 to 100 group ids (positive integers)'],
      ['group_ids', { group_ids: [1e20] }, 'group_ids must be an array of 0 to 100 group ids (positive integers)'],
    ])('answers 400 naming %s when it is malformed, and stores nothing', async (field, extra, message) => {
      const res = await create(a, { contact_number: '15550102030', ...extra });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, message, field, errors: [{ field, message }] });
      expect(await rows(a.accountId)).toEqual([]);
    });

    it('takes group_ids: null as no groups (it was a 500)', async () => {
      const res = await create(a, { contact_number: '15550102031', group_ids: null });
      expect(res.status).toBe(200);
      expect(res.body.data.message).toBe('Created a new contact');
    });

    it('answers 400 for a body that is not JSON', async () => {
      const res = await t.http.post('/contacts/create-contact', '{"contact_number": ', { token: a.token });
      expect(res.status).toBe(400);
      expect(await rows(a.accountId)).toEqual([]);
    });

    it('adds the contact to the given groups', async () => {
      const vip = await createGroup(a, 'VIP');
      const news = await createGroup(a, 'Newsletter');
      const res = await create(a, { contact_number: '15550102030', group_ids: [vip, news, vip] });
      expect(res.status).toBe(200);
      const id = res.body.data.contact.contact_id;
      expect(await members(vip)).toEqual([id]);
      expect(await members(news)).toEqual([id]);
    });

    it('adds an existing contact to the given groups too (membership is idempotent)', async () => {
      const vip = await createGroup(a, 'VIP');
      const first = await create(a, { contact_number: '15550102030' });
      const again = await create(a, { contact_number: '+15550102030', group_ids: [vip] });
      expect(again.body.data.message).toBe('The contact is already existing');
      const third = await create(a, { contact_number: '+15550102030', group_ids: [vip] });
      expect(third.status).toBe(200);
      expect(await members(vip)).toEqual([first.body.data.contact.contact_id]);
    });

    it('answers 400 Not all groups exist, listing the unknown ids, and creates nothing', async () => {
      const vip = await createGroup(a, 'VIP');
      const res = await create(a, { contact_number: '15550102030', name: 'Ada', group_ids: [vip, 999999, 888888] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: 'Not all groups exist in the database for this account.',
        missingGroups: [999999, 888888],
      });
      expect(await rows(a.accountId)).toEqual([]);
      expect(await members(vip)).toEqual([]);
    });

    it("counts another account's group as missing", async () => {
      const b = await t.createAccount();
      const bGroup = await createGroup(b, 'B only');
      const res = await create(a, { contact_number: '15550102030', group_ids: [bGroup] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: 'Not all groups exist in the database for this account.',
        missingGroups: [bGroup],
      });
      expect(await rows(a.accountId)).toEqual([]);
      expect(await members(bGroup)).toEqual([]);
    });

    it('keeps an existing contact untouched when its groups are missing', async () => {
      await create(a, { contact_number: '15550102030', name: 'Ada' });
      const res = await create(a, { contact_number: '15550102030', group_ids: [123456] });
      expect(res.status).toBe(400);
      expect(res.body.missingGroups).toEqual([123456]);
      const [{ n }] = await t.db.query(
        'SELECT count(*)::int AS n FROM contact_group_members m JOIN contacts c ON c.id = m.contact_id WHERE c.account_id = $1',
        [a.accountId],
      );
      expect(n).toBe(0);
    });

    it('creates exactly one contact when ten requests for one number race', async () => {
      const vip = await createGroup(a, 'VIP');
      const formats = ['+1 555 010 2030', '15550102030', '0015550102030', '+1 (555) 010-2030', '1-555-010-2030'];
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          create(a, { contact_number: formats[i % formats.length], name: `Racer ${i}`, group_ids: [vip] }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      const messages = results.map((r) => r.body.data.message);
      expect(messages.filter((m) => m === 'Created a new contact')).toHaveLength(1);
      expect(messages.filter((m) => m === 'The contact is already existing')).toHaveLength(9);
      const ids = new Set(results.map((r) => r.body.data.contact.contact_id));
      expect(ids.size).toBe(1);
      const stored = await rows(a.accountId);
      expect(stored).toHaveLength(1);
      expect(stored[0].id).toBe(String([...ids][0]));
      expect(await members(vip)).toEqual([Number(stored[0].id)]);
    });

    it('keeps the list total exact through racing creates of new and existing numbers', async () => {
      const numbers = Array.from({ length: 30 }, (_, i) => `+49 151 0000 ${String(i % 20).padStart(4, '0')}`); // 20 distinct
      const results = await Promise.all(numbers.map((n) => create(a, { contact_number: n })));
      expect(results.every((r) => r.status === 200)).toBe(true);
      const list = await t.http.get('/v2/contacts', { token: a.token });
      expect(list.body.data.total).toBe(20);
      expect(list.body.data.total).toBe((await rows(a.accountId)).length);
    });

    it('lets two accounts have a contact with the same number', async () => {
      const b = await t.createAccount();
      const ra = await create(a, { contact_number: '15550102030', name: 'A’s Ada' });
      const rb = await create(b, { contact_number: '15550102030', name: 'B’s Ada' });
      expect(rb.body.data.message).toBe('Created a new contact');
      expect(rb.body.data.contact.contact_id).not.toBe(ra.body.data.contact.contact_id);
      expect(rb.body.data.contact.name).toBe('B’s Ada');
    });
  });

  describe('GET /v2/contacts', () => {
    async function seed(account: TestAccount, n: number) {
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await create(account, {
          contact_number: `1555010${String(i).padStart(4, '0')}`,
          name: `Contact ${i}`,
          email: `c${i}@example.com`,
        });
        ids.push(res.body.data.contact.contact_id);
      }
      return ids;
    }

    it('lists contacts newest first with the SPEC fields', async () => {
      const first = await create(a, { contact_number: '15550102030', name: 'Ada', email: 'ada@example.com' });
      const second = await create(a, { contact_number: '447700900123', name: 'Grace' });
      await t.db.query(`UPDATE contacts SET created_at = '2026-01-02T03:04:05.678Z' WHERE id = $1`, [
        first.body.data.contact.contact_id,
      ]);

      const res = await list(a);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          contacts: [
            {
              contact_id: second.body.data.contact.contact_id,
              name: 'Grace',
              contact_number: '447700900123',
              email: null,
              isBlocked: false,
              platform: 'whatsapp',
              created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
            },
            {
              contact_id: first.body.data.contact.contact_id,
              name: 'Ada',
              contact_number: '15550102030',
              email: 'ada@example.com',
              isBlocked: false,
              platform: 'whatsapp',
              created_at: '2026-01-02T03:04:05.678Z',
            },
          ],
          page: 1,
          pageSize: 20,
          total: 2,
        },
      });
    });

    it('orders contacts created in the same instant by id, newest first', async () => {
      const ids = await seed(a, 3);
      await t.db.query(`UPDATE contacts SET created_at = '2026-01-01T00:00:00Z' WHERE account_id = $1`, [a.accountId]);
      const res = await list(a);
      expect(res.body.data.contacts.map((c: any) => c.contact_id)).toEqual([...ids].reverse());
    });

    it('paginates: default 20, page beyond the end is empty with the right total, pageSize up to 100', async () => {
      const ids = (await seed(a, 25)).reverse(); // newest first

      const page1 = await list(a);
      expect(page1.body.data).toMatchObject({ page: 1, pageSize: 20, total: 25 });
      expect(page1.body.data.contacts.map((c: any) => c.contact_id)).toEqual(ids.slice(0, 20));

      const page2 = await list(a, '?page=2');
      expect(page2.body.data).toMatchObject({ page: 2, pageSize: 20, total: 25 });
      expect(page2.body.data.contacts.map((c: any) => c.contact_id)).toEqual(ids.slice(20));

      const small = await list(a, '?page=3&pageSize=10');
      expect(small.body.data).toMatchObject({ page: 3, pageSize: 10, total: 25 });
      expect(small.body.data.contacts.map((c: any) => c.contact_id)).toEqual(ids.slice(20, 25));

      const beyond = await list(a, '?page=99');
      expect(beyond.status).toBe(200);
      expect(beyond.body.data).toEqual({ contacts: [], page: 99, pageSize: 20, total: 25 });

      const max = await list(a, '?pageSize=100');
      expect(max.status).toBe(200);
      expect(max.body.data.contacts).toHaveLength(25);
      expect(max.body.data.pageSize).toBe(100);
    });

    it.each([
      ['pageSize', '101', 'pageSize must be an integer from 1 to 100'],
      ['pageSize', 'abc', 'pageSize must be an integer from 1 to 100'],
      ['pageSize', '0', 'pageSize must be an integer from 1 to 100'],
      ['pageSize', '2.5', 'pageSize must be an integer from 1 to 100'],
      ['page', '0', 'page must be an integer from 1 to 2147483647'],
      ['page', 'abc', 'page must be an integer from 1 to 2147483647'],
      ['page', '-1', 'page must be an integer from 1 to 2147483647'],
    ])('answers 400 naming %s for %s (never clamped)', async (field, value, message) => {
      const res = await list(a, `?${field}=${value}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, message, field, errors: [{ field, message }] });
    });

    it('searches name, number and email, case-insensitively, as substrings', async () => {
      const ada = await create(a, {
        contact_number: '15550102030',
        name: 'Ada Lovelace',
        email: 'countess@analytical.org',
      });
      const grace = await create(a, { contact_number: '447700900123', name: 'Grace Hopper', email: 'grace@navy.mil' });
      const idsFor = async (search: string) =>
        (await list(a, `?search=${encodeURIComponent(search)}`)).body.data.contacts.map((c: any) => c.contact_id);
      const adaId = ada.body.data.contact.contact_id;
      const graceId = grace.body.data.contact.contact_id;

      expect(await idsFor('lovelace')).toEqual([adaId]);
      expect(await idsFor('ADA LOVE')).toEqual([adaId]);
      expect(await idsFor('hopp')).toEqual([graceId]);
      expect(await idsFor('ANALYTICAL.ORG')).toEqual([adaId]);
      expect(await idsFor('navy')).toEqual([graceId]);
      expect(await idsFor('0102')).toEqual([adaId]);
      expect(await idsFor('+44 7700')).toEqual([graceId]);
      // typed as the number was entered: the trunk (0) and the 00 prefix are read as when it was stored
      expect(await idsFor('+44 (0)7700 900')).toEqual([graceId]);
      expect(await idsFor('0044 7700 900')).toEqual([graceId]);
      expect(await idsFor('555-010')).toEqual([adaId]);
      expect(await idsFor('a')).toEqual([graceId, adaId]);
      expect(await idsFor('nobody')).toEqual([]);

      const res = await list(a, '?search=grace');
      expect(res.body.data).toMatchObject({ total: 1, page: 1, pageSize: 20 });

      // a search paginates like the full list, newest first, with the total of all matches
      const second = await list(a, '?search=a&pageSize=1&page=2');
      expect(second.body.data).toEqual({
        contacts: [expect.objectContaining({ contact_id: adaId, email: 'countess@analytical.org' })],
        page: 2,
        pageSize: 1,
        total: 2,
      });
      const beyond = await list(a, '?search=a&page=5');
      expect(beyond.body.data).toEqual({ contacts: [], page: 5, pageSize: 20, total: 2 });
      const none = await list(a, '?search=nobody');
      expect(none.body.data).toEqual({ contacts: [], page: 1, pageSize: 20, total: 0 });
    });

    it('matches %, _ and \\ in a search literally', async () => {
      await create(a, { contact_number: '15550102030', name: '100% real' });
      await create(a, { contact_number: '15550102031', name: 'snake_case' });
      await create(a, { contact_number: '15550102032', name: 'plain' });
      const names = async (search: string) =>
        (await list(a, `?search=${encodeURIComponent(search)}`)).body.data.contacts.map((c: any) => c.name);
      expect(await names('%')).toEqual(['100% real']);
      expect(await names('_')).toEqual(['snake_case']);
      expect(await names('\\')).toEqual([]);
    });

    it('finds one contact by exact phone, with or without + and formatting', async () => {
      const ada = await create(a, { contact_number: '15550102030', name: 'Ada' });
      await create(a, { contact_number: '155501020301', name: 'Longer number containing it' });
      for (const phone of ['15550102030', '+15550102030', '+1 555 010 2030', '0015550102030', '+1 (555) 010-2030']) {
        const res = await list(a, `?phone=${encodeURIComponent(phone)}`);
        expect(res.status).toBe(200);
        expect(res.body.data.contacts.map((c: any) => c.contact_id)).toEqual([ada.body.data.contact.contact_id]);
        expect(res.body.data.total).toBe(1);
      }
      // A raw `+` in a query string is a space: still the same number.
      const raw = await list(a, '?phone=+15550102030');
      expect(raw.body.data.contacts.map((c: any) => c.contact_id)).toEqual([ada.body.data.contact.contact_id]);

      const none = await list(a, '?phone=15550102039');
      expect(none.body.data).toEqual({ contacts: [], page: 1, pageSize: 20, total: 0 });
      // an empty phone (or search) is no filter
      expect((await list(a, '?phone=&search=')).body.data.total).toBe(2);
    });

    it('answers 400 naming phone for an implausible phone query', async () => {
      const res = await list(a, '?phone=12ab');
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        {
          field: 'phone',
          message: 'phone must be a phone number with country code (8 to 15 digits, e.g. +1 555 010 2030)',
        },
      ]);
    });

    it('answers 400 naming search when it is too long', async () => {
      const res = await list(a, `?search=${'x'.repeat(101)}`);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: any) => e.field)).toEqual(['search']);
    });
  });

  describe('GET and PATCH /v2/contacts/{contact_id}', () => {
    it('returns one contact with its profile fields and groups', async () => {
      const vip = await createGroup(a, 'VIP');
      const created = await create(a, {
        contact_number: '15550102030',
        name: 'Ada',
        dateOfBirth: '1990-12-10',
        gender: 'female',
        group_ids: [vip],
      });
      const id = created.body.data.contact.contact_id;
      const res = await t.http.get(`/v2/contacts/${id}`, { token: a.token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          contact: {
            contact_id: id,
            name: 'Ada',
            contact_number: '15550102030',
            email: null,
            isBlocked: false,
            platform: 'whatsapp',
            created_at: expect.any(String),
            updated_at: expect.any(String),
            dateOfBirth: '1990-12-10',
            gender: 'female',
            instagramUrl: null,
            facebookUrl: null,
            linkedinUrl: null,
            customFields: {},
            group_ids: [vip],
          },
        },
      });
    });

    it('blocks (opts out) and unblocks a contact', async () => {
      const id = (await create(a, { contact_number: '15550102030', name: 'Ada' })).body.data.contact.contact_id;
      const blocked = await patch(a, id, { isBlocked: true });
      expect(blocked.status).toBe(200);
      expect(blocked.body.data.contact).toMatchObject({ contact_id: id, isBlocked: true, name: 'Ada' });
      expect((await t.db.query('SELECT is_blocked FROM contacts WHERE id = $1', [id]))[0].is_blocked).toBe(true);
      expect((await list(a)).body.data.contacts[0].isBlocked).toBe(true);

      const unblocked = await patch(a, id, { isBlocked: false });
      expect(unblocked.body.data.contact.isBlocked).toBe(false);
    });

    it('updates the sent fields only; null clears a profile field; updated_at moves', async () => {
      const id = (
        await create(a, { contact_number: '15550102030', name: 'Ada', email: 'ada@example.com', gender: 'female' })
      ).body.data.contact.contact_id;
      const [before] = await t.db.query('SELECT updated_at FROM contacts WHERE id = $1', [id]);
      const res = await patch(a, id, {
        name: 'Ada Lovelace',
        email: null,
        linkedinUrl: 'https://www.linkedin.com/in/ada',
      });
      expect(res.status).toBe(200);
      expect(res.body.data.contact).toMatchObject({
        name: 'Ada Lovelace',
        email: null,
        gender: 'female',
        linkedinUrl: 'https://www.linkedin.com/in/ada',
        isBlocked: false,
      });
      const [row] = await t.db.query(
        'SELECT name, email, gender, contact_number, updated_at FROM contacts WHERE id = $1',
        [id],
      );
      expect(row).toMatchObject({ name: 'Ada Lovelace', email: null, gender: 'female', contact_number: '15550102030' });
      expect(row.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    });

    it('answers 400 for unknown fields, an empty body or a non-boolean isBlocked, and changes nothing', async () => {
      const id = (await create(a, { contact_number: '15550102030', name: 'Ada' })).body.data.contact.contact_id;

      const typo = await patch(a, id, { is_blocked: true });
      expect(typo.status).toBe(400);
      expect(typo.body.errors).toEqual([
        {
          field: 'is_blocked',
          message:
            'is_blocked cannot be updated; allowed fields: name, email, isBlocked, dateOfBirth, gender, instagramUrl, facebookUrl, linkedinUrl',
        },
      ]);

      const number = await patch(a, id, { contact_number: '447700900123' });
      expect(number.status).toBe(400);
      expect(number.body.errors.map((e: any) => e.field)).toEqual(['contact_number']);

      const empty = await patch(a, id, {});
      expect(empty.status).toBe(400);
      expect(empty.body.errors.map((e: any) => e.field)).toEqual(['body']);

      for (const isBlocked of ['yes', 'true', 1, null]) {
        const bad = await patch(a, id, { isBlocked });
        expect(bad.status).toBe(400);
        expect(bad.body).toMatchObject({
          message: 'isBlocked must be true or false',
          errors: [{ field: 'isBlocked', message: 'isBlocked must be true or false' }],
        });
      }
      const [row] = await t.db.query('SELECT name, is_blocked, contact_number FROM contacts WHERE id = $1', [id]);
      expect(row).toEqual({ name: 'Ada', is_blocked: false, contact_number: '15550102030' });
    });

    it('answers 404 Contact not found for an unknown id and 400 naming contact_id for a non-integer one', async () => {
      for (const res of [
        await t.http.get('/v2/contacts/999999', { token: a.token }),
        await patch(a, 999999, { isBlocked: true }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, message: 'Contact not found' });
      }
      for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
        const res = await t.http.get(`/v2/contacts/${id}`, { token: a.token });
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: 'contact_id', message: 'contact_id must be a positive integer' }]);
      }
    });
  });

  describe('findOrCreateByNumber (sends and inbound messages)', () => {
    it('numbers asked for at the same moment: one contact each, created once, existing ones returned, accounts apart', async () => {
      const contacts = t.app.get(ContactsService);
      const other = await t.createAccount();
      const existing = await contacts.findOrCreateByNumber(a.accountId, '+44 7700 900500', 'Known');
      expect(existing.created).toBe(true);
      const asks = [
        ...['447700900501', '447700900502', '447700900501', '+44 7700 900500'].map((n) => [a.accountId, n] as const),
        [other.accountId, '447700900501'] as const,
      ];
      const found = await Promise.all(asks.map(([account, n]) => contacts.findOrCreateByNumber(account, n, 'New')));
      expect(found.map((f) => [f.contact.contactNumber, f.created])).toEqual([
        ['447700900501', true],
        ['447700900502', true],
        ['447700900501', false],
        ['447700900500', false],
        ['447700900501', true],
      ]);
      expect(found[2].contact.id).toBe(found[0].contact.id);
      expect(found[3].contact).toMatchObject({ id: existing.contact.id, name: 'Known' });
      expect(found[4].contact.id).not.toBe(found[0].contact.id);
      expect((await rows(a.accountId)).map((r: any) => r.contact_number)).toEqual([
        '447700900500',
        '447700900501',
        '447700900502',
      ]);
    });
  });

  describe('account isolation', () => {
    it("account B cannot list, search, look up, read or patch account A's contacts", async () => {
      const b = await t.createAccount();
      const ada = await create(a, { contact_number: '15550102030', name: 'Ada', email: 'ada@example.com' });
      const id = ada.body.data.contact.contact_id;

      expect((await list(b)).body.data).toEqual({ contacts: [], page: 1, pageSize: 20, total: 0 });
      expect((await list(b, '?search=ada')).body.data.total).toBe(0);
      expect((await list(b, '?phone=15550102030')).body.data.total).toBe(0);

      const read = await t.http.get(`/v2/contacts/${id}`, { token: b.token });
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ statusCode: 404, message: 'Contact not found' });

      const write = await patch(b, id, { isBlocked: true, name: 'Hijacked' });
      expect(write.status).toBe(404);
      expect(write.body).toEqual({ statusCode: 404, message: 'Contact not found' });
      const [row] = await t.db.query('SELECT name, is_blocked FROM contacts WHERE id = $1', [id]);
      expect(row).toEqual({ name: 'Ada', is_blocked: false });

      // B creating the same number makes B's own contact; A's is untouched.
      const mine = await create(b, { contact_number: '15550102030', name: 'Bob' });
      expect(mine.body.data.message).toBe('Created a new contact');
      expect((await list(a)).body.data.contacts.map((c: any) => c.name)).toEqual(['Ada']);
    });
  });
});
