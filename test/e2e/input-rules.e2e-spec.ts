import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * Issue 14, defects 1 and 2, and the empty JSON body of issue 13: inputs that used to answer 500 (NUL bytes reaching
 * PostgreSQL, 2,000 levels of nesting overflowing the validator's stack) or Fastify's own 400. Every endpoint the issue
 * lists is here; each answer is a 400 in the one error shape (docs/errors.md) naming the field, and nothing is written.
 */
describe('Input rules shared by every route', () => {
  let t: TestApp;
  let a: TestAccount;
  let contactId: number;
  let groupId: number;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    a = await t.createAccount();
    contactId = (
      await t.http.post(
        '/contacts/create-contact',
        { contact_number: '4915112345678', name: 'Ada' },
        { token: a.token },
      )
    ).body.data.contact.contact_id;
    groupId = (await t.http.post('/v2/contact-groups', { name: 'VIP' }, { token: a.token })).body.data.group.group_id;
  });
  afterAll(() => t.close());

  const rowCounts = async () =>
    (
      await t.db
        .query(`SELECT (SELECT count(*) FROM contacts)::int AS contacts, (SELECT count(*) FROM contact_groups)::int AS groups,
      (SELECT count(*) FROM contact_group_members)::int AS members, (SELECT count(*) FROM templates)::int AS templates`)
    )[0];

  const send = (method: string, path: string, body?: string, token: string | undefined = a.token) =>
    t.http.request(method, path, {
      token,
      body,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });

  const expectFieldError = (res: { status: number; body: any }, field: string, message: RegExp) => {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      message: expect.stringMatching(message),
      field,
      errors: [{ field, message: expect.stringMatching(message) }],
    });
  };

  describe('NUL in a string answers 400 naming the field (it used to reach PostgreSQL: 500)', () => {
    const nul = /must not contain NUL characters \(U\+0000\)$/;

    it.each([
      ['POST', '/v2/contact-groups', () => '{"name":"a\\u0000b"}', 'name'],
      ['POST', '/contacts/create-contact', () => '{"contact_number":"4915100000001","name":"a\\u0000b"}', 'name'],
      ['PATCH', '/v2/contacts/:id', () => '{"name":"a\\u0000b"}', 'name'],
      ['POST', '/v2/contact-groups/:group/members', () => '{"contact_ids":[1],"note":["x","\\u0000"]}', 'note[1]'],
    ])('%s %s (body)', async (method, path, body, field) => {
      const before = await rowCounts();
      const res = await send(method, path.replace(':id', String(contactId)).replace(':group', String(groupId)), body());
      expectFieldError(res, field, nul);
      expect(await rowCounts()).toEqual(before);
    });

    it.each([
      ['/v2/contacts?search=%00', 'search'],
      ['/v2/templates?search=%00', 'search'],
      ['/templates/status?template_name=%00', 'template_name'],
      ['/v2/templates/%00', 'name'],
      ['/v2/flows/%00', 'flow_id'],
      ['/v2/contacts/%00', 'contact_id'],
    ])('GET %s (query or path)', async (path, field) => {
      expectFieldError(await send('GET', path), field, nul);
    });

    it('an object key with NUL is refused too', async () => {
      expectFieldError(
        await send('PATCH', `/v2/contacts/${contactId}`, '{"name":"Ada","x\\u0000":1}'),
        'body',
        /^A key of the body must not contain NUL/,
      );
    });

    it('a NUL inside the Flow JSON string of PUT /flow/update names flow_json', async () => {
      const flowJson = JSON.stringify({ version: '7.0', screens: [{ id: 'A\u0000' }] });
      const res = await send(
        'PUT',
        '/flow/update',
        JSON.stringify({ flow_id: '1', action: 'update_json', flow_json: flowJson }),
      );
      expectFieldError(res, 'flow_json.screens[0].id', nul);
    });
  });

  describe('unpaired UTF-16 surrogates answer 400 naming the field (jsonb refuses them)', () => {
    it.each([
      ['POST', '/v2/contact-groups', '{"name":"a\\ud800b"}', 'name'],
      ['PATCH', '/v2/contacts/:id', '{"name":"\\udc00"}', 'name'],
      [
        'POST',
        '/v1/workflows',
        '{"mode":"create","name":"W","definition":{"trigger":{"type":"webhook"},"label":"\\ud83d"}}',
        'definition.label',
      ],
    ])('%s %s', async (method, path, body, field) => {
      const before = await rowCounts();
      expectFieldError(
        await send(method, path.replace(':id', String(contactId)), body),
        field,
        /must not contain unpaired UTF-16 surrogates$/,
      );
      expect(await rowCounts()).toEqual(before);
    });

    it('a surrogate pair (an emoji) is fine', async () => {
      const res = await send('PATCH', `/v2/contacts/${contactId}`, '{"name":"Ada \\ud83d\\ude00"}');
      expect(res.status).toBe(200);
      expect((await t.db.query('SELECT name FROM contacts WHERE id = $1', [contactId]))[0].name).toBe('Ada 😀');
    });
  });

  describe('JSON nested deeper than 64 levels answers 400 before validation walks it (2,000 levels used to answer 500)', () => {
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    const deepObject = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
    const tooDeep = /is nested too deeply \(more than 64 levels of objects and arrays\)$/;

    it.each([
      ['PATCH', '/v2/contacts/:id', `{"name":${deep(2000)}}`, true],
      ['POST', '/v2/contact-groups/:group/members', `{"contact_ids":${deep(2000)}}`, true],
      ['DELETE', '/v2/contact-groups/:group/members', `{"contact_ids":${deep(2000)}}`, true],
      ['DELETE', '/flow/delete', `{"flow_id":${deep(2000)}}`, true],
      ['POST', '/v2/flows/1/send', `{"to":${deep(2000)}}`, true],
      ['PUT', '/templates/update?template_name=x', `{"components":${deep(2000)}}`, true],
      ['POST', '/v1/workflows', `{"mode":"create","definition":${deepObject(2000)}}`, true],
      ['POST', '/send-message/1', deep(2000), true],
      ['POST', '/v1/refreshToken', `{"refreshToken":${deep(2000)}}`, false],
    ])('%s %s', async (method, path, body, authenticated) => {
      const before = await rowCounts();
      const res = await send(
        method,
        path.replace(':id', String(contactId)).replace(':group', String(groupId)),
        body,
        authenticated ? a.token : undefined,
      );
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        statusCode: 400,
        message: expect.stringMatching(tooDeep),
        field: expect.any(String),
      });
      expect(res.body.errors).toHaveLength(1);
      expect(await rowCounts()).toEqual(before);
    });

    it('names the path where the body goes too deep', async () => {
      const res = await send('PATCH', `/v2/contacts/${contactId}`, `{"name":${deep(100)}}`);
      expect(res.body.field).toBe(`name${'[0]'.repeat(63)}`); // the body is level 1, name level 2: its 63rd nested array is level 65
    });

    it('64 levels are accepted (the limit is not off by one)', async () => {
      // 64 levels: the body object plus 63 nested arrays, stripped by the whitelist: the refresh answers as usual.
      const res = await send('POST', '/v1/refreshToken', `{"refreshToken":"x","extra":${deep(63)}}`, undefined);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ statusCode: 403, message: 'Invalid refresh token' });
      const over = await send('POST', '/v1/refreshToken', `{"refreshToken":"x","extra":${deep(64)}}`, undefined);
      expect(over.status).toBe(400);
    });

    it('a Flow JSON string nested too deeply names flow_json', async () => {
      const flowJson = JSON.stringify({ version: '7.0', screens: JSON.parse(deep(100)) });
      const res = await send(
        'PUT',
        '/flow/update',
        JSON.stringify({ flow_id: '1', action: 'update_json', flow_json: flowJson }),
      );
      expect(res.status).toBe(400);
      expect(res.body.field).toMatch(/^flow_json\.screens\[0\]/);
      expect(res.body.message).toMatch(tooDeep);
    });
  });

  it('an integer id beyond what PostgreSQL stores is a 400 naming it (found by probing: POST /v1/workflows answered 500)', async () => {
    for (const id of [1e20, 1e300]) {
      const res = await send('POST', '/v1/workflows', JSON.stringify({ mode: 'edit', id }));
      expectFieldError(res, 'id', /^id must not be greater than 9007199254740991$/);
    }
  });

  describe('prototype-pollution keys', () => {
    it.each([
      ['{"name":"x","__proto__":{"admin":true}}', '__proto__', /"__proto__" keys are refused$/],
      [
        '{"name":"x","nested":{"constructor":{"prototype":{"admin":true}}}}',
        'nested.constructor',
        /"constructor.prototype" keys are refused$/,
      ],
    ])('%s is refused naming the key', async (body, field, message) => {
      expectFieldError(await send('POST', '/v2/contact-groups', body), field, message);
    });
  });

  describe('empty and non-JSON bodies', () => {
    it("POST /v1/authenticate with Content-Type: application/json and no body reads the headers as usual (was Fastify's 400)", async () => {
      const res = await t.http.request('POST', '/v1/authenticate', {
        body: '',
        headers: { 'content-type': 'application/json', clientid: a.clientId, clientsecret: a.clientSecret },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ token: expect.any(String), refreshToken: expect.any(String) });
      const missing = await t.http.request('POST', '/v1/authenticate', {
        body: '',
        headers: { 'content-type': 'application/json' },
      });
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ statusCode: 401, message: 'Missing credentials', error: 'Missing credentials' });
    });

    it('an empty JSON body where fields are required is {}: a 400 naming the first missing field', async () => {
      const res = await send('POST', '/contacts/create-contact', '');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, field: 'contact_number' });
    });

    it('a body that is not JSON is 400, another media type 415, an oversized body 413: all in the one shape', async () => {
      const broken = await send('POST', '/v2/contact-groups', '{"name":');
      expect(broken.status).toBe(400);
      expect(broken.body).toEqual({ statusCode: 400, message: 'The request body is not valid JSON' });
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await t.http.request('POST', '/v2/contact-groups', {
          token: a.token,
          body: 'name=x',
          headers: { 'content-type': type },
        });
        expect(res.status).toBe(415);
        expect(res.body).toEqual({
          statusCode: 415,
          message: 'Unsupported media type: send the request body as application/json',
        });
      }
      const big = await send('POST', '/v2/contact-groups', JSON.stringify({ name: 'x'.repeat(1024 * 1024) }));
      expect(big.status).toBe(413);
      expect(big.body).toEqual({ statusCode: 413, message: 'Request body is too large' });
    });

    it('an unknown route is a 404 in the same shape', async () => {
      const res = await send('GET', '/v2/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, message: 'Cannot GET /v2/nothing-here' });
    });
  });
});
