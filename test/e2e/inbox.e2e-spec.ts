import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { openSse } from '../helpers/sse';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { asUser, consoleSession } from '../helpers/console';

/**
 * The embeddable inbox's API (docs/inbox.md): mint → exchange → list → send, scope, permissions, the exchange's
 * per-IP limit, live events with resume, cross-account isolation, and the console inbox for agents.
 */
describe('Inbox API (embed tokens, sessions, conversations, live events)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let h: ReturnType<typeof messagingHelpers>;
  const ORIGIN = 'https://crm.example.com';

  beforeAll(async () => {
    t = await startTestApp(
      {
        RATE_LIMIT_PER_MINUTE: '100000',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        SEND_WAIT_TIMEOUT_MS: '15000',
        TRUST_PROXY: '127.0.0.1',
        EMBED_INBOX_RATE_LIMIT_PER_MINUTE: '200', // 1,200 by default: the limit's test makes 200 requests, not 1,200
      },
      { worker: true },
    );
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 60, read: 120 }, autoReview: false });
    h = messagingHelpers(t, () => sandbox);
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });
  afterAll(async () => {
    await sandbox.close();
    await t.close();
  });

  let ipSeq = 0;
  /** Each call from its own client address (X-Forwarded-For behind the trusted proxy), away from the per-IP limit. */
  const freshIp = () => ({ 'x-forwarded-for': `198.51.100.${++ipSeq}` });

  async function mint(body: Record<string, unknown> = {}, token = account.token) {
    return t.http.post(
      '/v1/embed/tokens',
      { scope: {}, permissions: ['read', 'send', 'send_template'], allowedOrigins: [ORIGIN], ...body },
      { token },
    );
  }

  async function session(body: Record<string, unknown> = {}, token = account.token) {
    const minted = await mint(body, token);
    expect(minted.status).toBe(201);
    const exchanged = await t.http.post(
      '/v1/embed/session',
      { embedToken: minted.body.embedToken },
      { headers: freshIp() },
    );
    expect(exchanged.status).toBe(200);
    return `Bearer ${exchanged.body.sessionToken}`;
  }

  const contactIdOf = (number: string) => h.contactIdOf(account, number);

  it('paging the list: conversations whose messages one statement wrote (the same moment) are all listed once', async () => {
    const own = await t.createAccount({ apiBaseUrl: sandbox.url });
    const [phone] = await t.db.query('SELECT id FROM phone_numbers WHERE messaging_phone_id = $1', [
      own.messagingPhoneId,
    ]);
    const contacts: Array<{ id: string; contact_number: string }> = await t.db.query(
      `INSERT INTO contacts (account_id, contact_number, name)
       SELECT $1, '4917' || lpad(i::text, 8, '0') || $2, 'Member ' || i FROM generate_series(1, 40) i
       RETURNING id::text, contact_number`,
      [own.accountId, String(own.accountId).slice(-1)],
    );
    // one statement, as a campaign chunk writes its messages: the 40 conversations share their last activity time
    await t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, contact_id, direction, recipient, kind, status, payload)
       SELECT $1, $2, c.id, 'outbound', c.number, 'text', 'sent', '{}' FROM unnest($3::bigint[], $4::text[]) AS c(id, number)`,
      [own.accountId, phone.id, contacts.map((c) => c.id), contacts.map((c) => c.contact_number)],
    );
    const auth = await session({}, own.token);
    const seen: string[] = [];
    let before: string | null = '';
    for (let page = 0; before !== null && page < 5; page++) {
      const res: { status: number; body: any } = await t.http.get(
        `/v1/embed/inbox/conversations?limit=30${before ? `&before=${encodeURIComponent(before)}` : ''}`,
        { headers: { authorization: auth, origin: ORIGIN } },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.conversations.map((c: any) => c.contactId));
      before = res.body.data.nextBefore;
    }
    expect(seen).toHaveLength(40);
    expect(new Set(seen)).toEqual(new Set(contacts.map((c) => c.id)));
    // an old client's page cursor (a time alone) is still taken
    const old = await t.http.get('/v1/embed/inbox/conversations?limit=5&before=2100-01-01T00:00:00.000Z', {
      headers: { authorization: auth, origin: ORIGIN },
    });
    expect(old.body.data.conversations).toHaveLength(5);
    // cursors that look right but are no time or no message id: 400 naming before (they reached PostgreSQL's casts)
    for (const path of [
      '/v1/embed/inbox/conversations?before=2026-02-30T00:00:00Z',
      '/v1/embed/inbox/conversations?before=2026-01-01T::Z',
      `/v1/embed/inbox/conversations/${contacts[0].id}/messages?before=${'0'.repeat(36)}`,
    ]) {
      const bad = await t.http.get(path, { headers: { authorization: auth, origin: ORIGIN } });
      expect({ path, status: bad.status, fields: bad.body.errors?.map((e: any) => e.field) }).toEqual({
        path,
        status: 400,
        fields: ['before'],
      });
    }
  });

  it('mint → exchange → list → thread → send: the reply goes through the send pipeline and reaches the platform', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'Where is my order?');
    const contactId = await contactIdOf(customer);

    const minted = await mint({ agentName: 'Dana' });
    expect(minted.status).toBe(201);
    expect(minted.body.embedUrl).toMatch(/\/embed-chat\?e=[0-9a-f-]{36}#token=/);
    expect(new Date(minted.body.expiresAt).getTime()).toBeGreaterThan(Date.now());

    const exchanged = await t.http.post(
      '/v1/embed/session',
      { embedToken: minted.body.embedToken },
      { headers: freshIp() },
    );
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({
      expiresIn: 3600,
      permissions: ['read', 'send', 'send_template'],
      scope: {},
      agentName: 'Dana',
    });
    const auth = { authorization: `Bearer ${exchanged.body.sessionToken}` };

    const list = await t.http.get('/v1/embed/inbox/conversations', { headers: auth });
    expect(list.status).toBe(200);
    const conversation = list.body.data.conversations.find((c: any) => c.contactId === contactId);
    expect(conversation).toMatchObject({
      contactNumber: customer,
      messagingPhoneId: account.messagingPhoneId,
      unreadCount: 1,
      lastMessage: { direction: 'inbound', text: 'Where is my order?' },
      window: { open: true },
    });
    expect(new Date(conversation.window.expiresAt).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(list.body.data.unreadTotal).toBeGreaterThanOrEqual(1);

    // the send pipeline's checks, in this API's field names (they said message and buttons[1].text)
    for (const [body, field, message] of [
      [{ text: 'x'.repeat(1500), quickReplies: ['Yes'] }, 'text', 'text must be at most 1024 characters'],
      [{ text: 'Sure?', quickReplies: ['Yes', 'Yes'] }, 'quickReplies[1]', 'quickReplies[1] repeats "Yes"'],
    ] as const) {
      const refused = await t.http.post(`/v1/embed/inbox/conversations/${contactId}/messages`, body, {
        headers: auth,
      });
      expect({ status: refused.status, errors: refused.body.errors }).toEqual({
        status: 400,
        errors: [{ field, message: expect.stringContaining(message) }],
      });
    }
    const sent = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/messages`,
      { text: 'It ships today', quickReplies: ['Thanks', 'Call me'] },
      { headers: auth },
    );
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ success: true });
    const got = await eventually(async () => {
      const r = await h.received(account, customer);
      return r.length ? r : null;
    });
    expect(got[0].payload).toMatchObject({ type: 'interactive', to: customer });
    expect(JSON.stringify(got[0].payload)).toContain('It ships today');
    // one outbound row, stored by the send pipeline
    const rows = await t.db.query(
      `SELECT direction, kind, status FROM messages WHERE account_id = $1 AND contact_id = $2 ORDER BY created_at`,
      [account.accountId, contactId],
    );
    expect(rows.map((r: any) => r.direction)).toEqual(['inbound', 'outbound']);

    const thread = await t.http.get(`/v1/embed/inbox/conversations/${contactId}/messages?limit=1`, { headers: auth });
    expect(thread.status).toBe(200);
    expect(thread.body.data.messages).toHaveLength(1);
    expect(thread.body.data.messages[0]).toMatchObject({ direction: 'outbound', text: 'It ships today' });
    expect(thread.body.data.hasMore).toBe(true);
    const older = await t.http.get(
      `/v1/embed/inbox/conversations/${contactId}/messages?before=${thread.body.data.messages[0].id}`,
      { headers: auth },
    );
    expect(older.body.data.messages.map((m: any) => m.text)).toEqual(['Where is my order?']);
    expect(older.body.data.hasMore).toBe(false);

    const read = await t.http.post(`/v1/embed/inbox/conversations/${contactId}/read`, {}, { headers: auth });
    expect(read.status).toBe(200);
    const after = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: auth });
    expect(after.body.data.unreadCount).toBe(0);
    const [{ last_read_at }] = await t.db.query(
      `SELECT last_read_at FROM conversations WHERE account_id = $1 AND contact_id = $2`,
      [account.accountId, contactId],
    );
    expect(last_read_at).not.toBeNull();
  });

  it('the token is single use, and invalid / expired / used tokens get distinct 401s', async () => {
    const minted = await mint();
    const first = await t.http.post(
      '/v1/embed/session',
      { embedToken: minted.body.embedToken },
      { headers: freshIp() },
    );
    expect(first.status).toBe(200);
    const again = await t.http.post(
      '/v1/embed/session',
      { embedToken: minted.body.embedToken },
      { headers: freshIp() },
    );
    expect(again.status).toBe(401);
    expect(again.body.message).toBe('Embed token has already been used: mint a new one');

    const forged = await t.http.post(
      '/v1/embed/session',
      { embedToken: `${minted.body.embedToken}x` },
      { headers: freshIp() },
    );
    expect(forged.status).toBe(401);
    expect(forged.body.message).toBe('Embed token is invalid');

    const short = await mint({ ttlSeconds: 30 });
    const { EmbedTokens } = await import('@switchboard/inbox');
    const tokens = t.app.get(EmbedTokens);
    const expired = await tokens.mint(
      { accountId: account.accountId, scope: {}, permissions: ['read'], allowedOrigins: [ORIGIN], agentName: null },
      -1,
    );
    expect(short.status).toBe(201);
    const late = await t.http.post('/v1/embed/session', { embedToken: expired.token }, { headers: freshIp() });
    expect(late.status).toBe(401);
    expect(late.body.message).toBe('Embed token has expired: mint a new one');

    // an access token is not a session, a session is not an access token
    const asSession = await t.http.get('/v1/embed/inbox/conversations', { token: account.token });
    expect(asSession.status).toBe(401);
    const sessionAuth = await session();
    const asAccess = await t.http.get('/v2/conversations', { headers: { authorization: sessionAuth } });
    expect(asAccess.status).toBe(401);
  });

  it('a token cannot carry send permissions its minter lacks: /conversations alone mints read-only tokens', async () => {
    const own = await t.createAccount({ apiBaseUrl: sandbox.url });
    await t.db.query(`UPDATE api_clients SET grants = $2 WHERE client_id = $1`, [own.clientId, ['/conversations']]);
    const { token } = (
      await t.http.post('/v1/authenticate', undefined, {
        headers: { clientid: own.clientId, clientsecret: own.clientSecret },
      })
    ).body;
    for (const permissions of [['read', 'send'], ['send_template']]) {
      const refused = await mint({ permissions }, token);
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 403,
        body: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/send-message' },
      });
    }
    expect((await mint({ permissions: ['read'] }, token)).status).toBe(201);
    // the same client on /v1/inbox: its sends are refused for the grant, as every endpoint refuses one
    const customer = h.customer();
    await h.customerWrites(own, customer, 'hello');
    const contactId = await h.contactIdOf(own, customer);
    for (const [path, body] of [
      ['messages', { text: 'hi' }],
      ['templates', { templateName: 'any' }],
    ] as const) {
      const refused = await t.http.post(`/v1/inbox/conversations/${contactId}/${path}`, body, { token });
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 403,
        body: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/send-message' },
      });
    }
  });

  it('tokens and sessions live only as long as their minting client: rotated or without /conversations, 401', async () => {
    const own = await t.createAccount();
    const list = (auth: string) =>
      t.http.get('/v1/embed/inbox/conversations', { headers: { authorization: auth, origin: ORIGIN } });
    const open = await session({}, own.token);
    expect((await list(open)).status).toBe(200);
    const unused = (await mint({}, own.token)).body.embedToken;

    // the grant to send taken away: the session still reads, but no longer sends
    await t.db.query(`UPDATE api_clients SET grants = array_remove(grants, '/send-message') WHERE client_id = $1`, [
      own.clientId,
    ]);
    expect((await list(open)).status).toBe(200);
    const refusedSend = await t.http.post(
      '/v1/embed/inbox/conversations/1/messages',
      { text: 'hi' },
      { headers: { authorization: open, origin: ORIGIN } },
    );
    expect(refusedSend.status).toBe(403);

    const live = await openSse(`${t.url}/v1/embed/inbox/events`, { authorization: open, origin: ORIGIN });
    expect(live.status).toBe(200);

    const rotated = await t.http.post(`/v1/clients/${own.clientId}/rotate-secret`, undefined, { token: own.token });
    expect(rotated.status).toBe(200);
    // the open live stream is checked again while it stays open: it ends within LIVE_EVENTS_RECHECK_MS (5 s)
    const ended = await live.waitFor((e) => e.event === 'end', 8_000);
    expect(ended.data).toEqual({ reason: 'access_ended' });
    await live.ended;
    const message =
      'The client that opened this inbox was deleted, its secret rotated or its /conversations grant removed: ask the host page for a new embed token';
    expect(await list(open)).toMatchObject({ status: 401, body: { message } });
    const exchanged = await t.http.post('/v1/embed/session', { embedToken: unused }, { headers: freshIp() });
    expect(exchanged).toMatchObject({ status: 401, body: { message } });
  });

  it('minting checks its body: 400 naming the field', async () => {
    const star = await mint({ allowedOrigins: ['*'] });
    expect(star.status).toBe(400);
    expect(JSON.stringify(star.body)).toContain('allowedOrigins');
    const long = await mint({ ttlSeconds: 3600 });
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toContain('ttlSeconds must be at most 600');
    const perm = await mint({ permissions: ['admin'] });
    expect(perm.status).toBe(400);
    expect(JSON.stringify(perm.body)).toContain('permissions');
    const other = await mint({ scope: { messagingPhoneIds: ['999999999'] } });
    expect(other.status).toBe(400);
    expect(other.body.message).toContain('scope.messagingPhoneIds[0]');
  });

  it('a customer message that came before the agent read the conversation but was stored after stays unread', async () => {
    const { PlatformWebhooksService } = await import('@switchboard/messaging');
    const customer = h.customer();
    await h.customerWrites(account, customer, 'first');
    const contactId = await contactIdOf(customer);
    const auth = { authorization: await session() };
    await eventually(async () => {
      const res = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: auth });
      return res.body.data?.unreadCount === 1;
    });
    await new Promise((r) => setTimeout(r, 300));
    // the second message's webhook has come (and been answered) a moment ago; the worker has not stored it yet
    const body = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'whatsapp', 'message-text.json'), 'utf8'));
    const value = body.entry[0].changes[0].value;
    value.metadata.phone_number_id = account.messagingPhoneId;
    value.contacts[0].wa_id = value.messages[0].from = customer;
    value.messages[0].id = `wamid.late-${customer}`;
    value.messages[0].text.body = 'second';
    const [event] = await t.db.query(
      `INSERT INTO platform_webhook_events (payload, received_at) VALUES ($1, now() - interval '100 milliseconds') RETURNING id`,
      [body],
    );
    expect((await t.http.post(`/v1/embed/inbox/conversations/${contactId}/read`, {}, { headers: auth })).status).toBe(
      200,
    );
    await t.worker!.get(PlatformWebhooksService, { strict: false }).requeueUnprocessed(0); // now it is processed
    await eventually(async () => {
      const [row] = await t.db.query('SELECT processed_at FROM platform_webhook_events WHERE id = $1', [event.id]);
      return row.processed_at !== null;
    });
    const after = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: auth });
    expect(after.body.data).toMatchObject({ unreadCount: 1, lastMessage: { text: 'second' } });
  });

  /** Another number of the account (another brand): its row id and its messaging phone id. */
  async function anotherNumber(suffix: string): Promise<{ id: string; messagingPhoneId: string }> {
    const [other] = await t.db.query(
      `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                  api_base_url, api_version, access_token_encrypted, messages_per_second)
       SELECT account_id, messaging_phone_id || $2, display_phone_number, 'Other brand', business_account_id,
              api_base_url, api_version, access_token_encrypted, messages_per_second
         FROM phone_numbers WHERE messaging_phone_id = $1 RETURNING id::text, messaging_phone_id`,
      [account.messagingPhoneId, suffix],
    );
    return { id: other.id, messagingPhoneId: other.messaging_phone_id };
  }

  /** Sends `text` as the conversation's reply; answers the messaging phone id it went out from. */
  async function replyNumber(contactId: string, headers: Record<string, string>, text: string): Promise<string> {
    const sent = await t.http.post(`/v1/embed/inbox/conversations/${contactId}/messages`, { text }, { headers });
    expect(sent.status).toBe(200);
    const [reply] = await t.db.query(
      `SELECT p.messaging_phone_id FROM messages m JOIN phone_numbers p ON p.id = m.phone_number_id
        WHERE m.account_id = $1 AND m.contact_id = $2 AND m.body = $3`,
      [account.accountId, contactId, text],
    );
    return reply.messaging_phone_id;
  }

  /** A customer message to `phoneNumberId`, stamped `seconds` from now. */
  const writesTo = (phoneNumberId: string, contactId: string, customer: string, text: string, seconds: number) =>
    t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, contact_id, direction, recipient, kind, body, status, payload, created_at)
       VALUES ($1, $2, $3, 'inbound', $4, 'text', $5, 'received', '{}', now() + make_interval(secs => $6))`,
      [account.accountId, phoneNumberId, contactId, customer, text, seconds],
    );

  it('scope: a session of one number reads only its messages of a customer who also wrote to another number', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'to the scoped number');
    const contactId = await contactIdOf(customer);
    // another number of the account (another brand), and an earlier message of the same customer to it
    const other = await anotherNumber('7');
    await writesTo(other.id, contactId, customer, 'to the other brand', -60);
    const scoped = { authorization: await session({ scope: { messagingPhoneIds: [account.messagingPhoneId] } }) };
    const thread = await eventually(async () => {
      const res = await t.http.get(`/v1/embed/inbox/conversations/${contactId}/messages`, { headers: scoped });
      return res.status === 200 && res.body.data.messages.length ? res : null;
    });
    expect(thread.body.data.messages.map((m: any) => m.text)).toEqual(['to the scoped number']);
    const unscoped = { authorization: await session() };
    const all = await t.http.get(`/v1/embed/inbox/conversations/${contactId}/messages`, { headers: unscoped });
    expect(all.body.data.messages.map((m: any) => m.text)).toEqual(['to the other brand', 'to the scoped number']);
  });

  it('scope: a customer whose latest message is on another number stays in a session of one number, summed up by it', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'to the scoped number');
    const contactId = await contactIdOf(customer);
    await eventually(async () => {
      const [row] = await t.db.query('SELECT 1 FROM conversations WHERE account_id = $1 AND contact_id = $2', [
        account.accountId,
        contactId,
      ]);
      return row ?? null;
    });
    const other = await anotherNumber('8');
    await writesTo(other.id, contactId, customer, 'later, to the other brand', 1);

    const scoped = { authorization: await session({ scope: { messagingPhoneIds: [account.messagingPhoneId] } }) };
    const own = {
      contactId,
      messagingPhoneId: account.messagingPhoneId,
      unreadCount: 1,
      lastMessage: { text: 'to the scoped number' },
      window: { open: true },
    };
    const one = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: scoped });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject(own);
    const listed = await t.http.get('/v1/embed/inbox/conversations?limit=100', { headers: scoped });
    expect(listed.body.data.conversations.find((c: any) => c.contactId === contactId)).toMatchObject(own);
    const unread = await t.http.get('/v1/embed/inbox/conversations?unread=true&limit=100', { headers: scoped });
    expect(unread.body.data.conversations.find((c: any) => c.contactId === contactId)).toMatchObject(own);

    // a reply from the scoped session goes out from its own number, not from the one the customer wrote to last
    expect(await replyNumber(contactId, scoped, 'Answered by the scoped brand')).toBe(account.messagingPhoneId);

    // the whole account sees the latest message on any number; the other number's session only its own
    const all = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, {
      headers: { authorization: await session() },
    });
    expect(all.body.data).toMatchObject({
      messagingPhoneId: other.messagingPhoneId,
      unreadCount: 2,
      lastMessage: { text: 'later, to the other brand' },
    });
    const theirs = { authorization: await session({ scope: { messagingPhoneIds: [other.messagingPhoneId] } }) };
    const their = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: theirs });
    expect(their.body.data).toMatchObject({ unreadCount: 1, lastMessage: { text: 'later, to the other brand' } });

    // one brand reading marks its own number's messages read, not the other brand's
    const unreadOf = async (headers: Record<string, string>) =>
      (await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers })).body.data.unreadCount;
    expect((await t.http.post(`/v1/embed/inbox/conversations/${contactId}/read`, {}, { headers: scoped })).status).toBe(
      200,
    );
    expect(await unreadOf(scoped)).toBe(0);
    expect(await unreadOf(theirs)).toBe(1);
    const whole = { authorization: await session() };
    expect(await unreadOf(whole)).toBe(1);
    const unreadList = await t.http.get('/v1/embed/inbox/conversations?unread=true&limit=100', { headers: scoped });
    expect(unreadList.body.data.conversations.map((c: any) => c.contactId)).not.toContain(contactId);
    // the whole account's agent reading marks every number's, and the first brand's open inbox is told too (the
    // conversation's latest message is on the other number)
    const theirLive = await openSse(`${t.url}/v1/embed/inbox/events`, scoped);
    await theirLive.subscribed();
    expect((await t.http.post(`/v1/embed/inbox/conversations/${contactId}/read`, {}, { headers: whole })).status).toBe(
      200,
    );
    const told = await theirLive.waitFor((e) => e.event === 'conversation.updated' && e.data.contactId === contactId);
    // a customer who wrote only to the other brand: its read is not told to this brand's inbox (it leaked the number)
    const elsewhere = h.customer();
    const [{ id: elsewhereId }] = await t.db.query(
      `INSERT INTO contacts (account_id, contact_number) VALUES ($1, $2) RETURNING id::text`,
      [account.accountId, elsewhere],
    );
    await writesTo(other.id, elsewhereId, elsewhere, 'only to the other brand', 0);
    expect(
      (await t.http.post(`/v1/embed/inbox/conversations/${elsewhereId}/read`, {}, { headers: whole })).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(theirLive.events.filter((e) => e.data?.contactId === elsewhereId)).toEqual([]);
    theirLive.close();
    expect(told.data).toMatchObject({ unreadCount: 0, messagingPhoneId: account.messagingPhoneId });
    expect(await unreadOf(theirs)).toBe(0);
    expect(await unreadOf(whole)).toBe(0);
  });

  it('the whole account replies from the number the customer last wrote to, not from the one a campaign came from later', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'hello brand A');
    const contactId = await contactIdOf(customer);
    const other = await anotherNumber('9');
    // later, a campaign message from the other number (the customer never wrote to it: its window is closed)
    await t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, contact_id, direction, recipient, kind, template_name, body, status, payload, created_at)
       VALUES ($1, $2, $3, 'outbound', $4, 'template', 'sale', 'The sale starts today', 'sent', '{}', now() + interval '1 second')`,
      [account.accountId, other.id, contactId, customer],
    );
    const whole = { authorization: await session() };
    const expected = {
      contactId,
      messagingPhoneId: account.messagingPhoneId,
      window: { open: true },
      lastMessage: { text: 'The sale starts today' },
    };
    const one = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: whole });
    expect(one.body.data).toMatchObject(expected);
    const listed = await t.http.get('/v1/embed/inbox/conversations?limit=100', { headers: whole });
    expect(listed.body.data.conversations.find((c: any) => c.contactId === contactId)).toMatchObject(expected);
    expect(await replyNumber(contactId, whole, 'Answered from brand A')).toBe(account.messagingPhoneId);

    // the number the customer wrote to disconnected since: the reply goes from the latest message's number
    const campaignFromB = `INSERT INTO messages (account_id, phone_number_id, contact_id, direction, recipient, kind, body, status, payload, created_at)
       VALUES ($1, $2, $3, 'outbound', $4, 'text', 'Anything else?', 'sent', '{}', now() + interval '2 seconds')`;
    await t.db.query(campaignFromB, [account.accountId, other.id, contactId, customer]);
    await t.db.query(`UPDATE phone_numbers SET status = 'DISCONNECTED' WHERE messaging_phone_id = $1`, [
      account.messagingPhoneId,
    ]);
    try {
      const moved = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: whole });
      expect(moved.body.data).toMatchObject({ messagingPhoneId: other.messagingPhoneId, window: { open: false } });
    } finally {
      await t.db.query(`UPDATE phone_numbers SET status = 'CONNECTED' WHERE messaging_phone_id = $1`, [
        account.messagingPhoneId,
      ]);
    }
  });

  it('scope: conversations outside it are 404 and not listed; read-only sessions cannot send', async () => {
    const mine = h.customer();
    const theirs = h.customer();
    await h.customerWrites(account, mine, 'in scope');
    await h.customerWrites(account, theirs, 'out of scope');
    const mineId = await contactIdOf(mine);
    const theirsId = await contactIdOf(theirs);

    const byNumber = {
      authorization: await session({ scope: { contactNumbers: [`+${mine}`] }, permissions: ['read'] }),
    };
    const list = await t.http.get('/v1/embed/inbox/conversations', { headers: byNumber });
    expect(list.body.data.conversations.map((c: any) => c.contactId)).toEqual([mineId]);
    expect((await t.http.get(`/v1/embed/inbox/conversations/${theirsId}`, { headers: byNumber })).status).toBe(404);
    expect((await t.http.get(`/v1/embed/inbox/conversations/${theirsId}/messages`, { headers: byNumber })).status).toBe(
      404,
    );
    expect(
      (await t.http.post(`/v1/embed/inbox/conversations/${theirsId}/read`, {}, { headers: byNumber })).status,
    ).toBe(404);
    const readOnly = await t.http.post(
      `/v1/embed/inbox/conversations/${mineId}/messages`,
      { text: 'hello' },
      { headers: byNumber },
    );
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.message).toBe('This inbox session may not send messages');

    // by group: only the group's members
    const group = await t.http.post('/v2/contact-groups', { name: `vip ${Date.now()}` }, { token: account.token });
    expect(group.status).toBe(201);
    const groupId = String(group.body.data.group.group_id ?? group.body.data.group.id);
    const added = await t.http.post(
      `/v2/contact-groups/${groupId}/members`,
      { contact_ids: [Number(theirsId)] },
      { token: account.token },
    );
    expect(added.status).toBe(200);
    const byGroup = { authorization: await session({ scope: { groupIds: [groupId] } }) };
    const grouped = await t.http.get('/v1/embed/inbox/conversations', { headers: byGroup });
    expect(grouped.body.data.conversations.map((c: any) => c.contactId)).toEqual([theirsId]);
    expect((await t.http.get(`/v1/embed/inbox/conversations/${mineId}`, { headers: byGroup })).status).toBe(404);

    // by number of the account: everything of that number
    const byPhone = { authorization: await session({ scope: { messagingPhoneIds: [account.messagingPhoneId] } }) };
    const all = await t.http.get('/v1/embed/inbox/conversations?search=' + mine.slice(-6), { headers: byPhone });
    expect(all.body.data.conversations.map((c: any) => c.contactId)).toEqual([mineId]);
    // the number as the inbox shows it (+ and spaces) finds it too
    const shown = `+${mine.slice(0, 2)} ${mine.slice(2, 6)} ${mine.slice(6)}`;
    const pasted = await t.http.get(`/v1/embed/inbox/conversations?search=${encodeURIComponent(shown)}`, {
      headers: byPhone,
    });
    expect(pasted.body.data.conversations.map((c: any) => c.contactId)).toEqual([mineId]);
  });

  it('search finds an older customer however many newer contacts share the name (1,200 imported, never written to)', async () => {
    const customer = h.customer();
    await h.customerWritesStored(account, customer, 'hello, it is Maria');
    const contactId = await contactIdOf(customer);
    await t.db.query(`UPDATE contacts SET name = 'Maria Silva' WHERE id = $1`, [contactId]);
    await t.db.query(
      `INSERT INTO contacts (account_id, contact_number, name)
       SELECT $1, '4917' || lpad(n::text, 9, '0'), 'Maria ' || n FROM generate_series(1, 1200) n`,
      [account.accountId],
    );
    const auth = { authorization: await session() };
    const found = await t.http.get('/v1/embed/inbox/conversations?search=maria', { headers: auth });
    expect(found.status).toBe(200);
    expect(found.body.data.conversations.map((c: any) => c.contactId)).toContain(contactId);
    const exact = await t.http.get('/v1/embed/inbox/conversations?search=MARIA%20SILVA', { headers: auth });
    expect(exact.body.data.conversations.map((c: any) => c.contactId)).toEqual([contactId]);
  });

  it('outside the window the text send is refused (409) and an approved template goes out', async () => {
    const customer = h.customer();
    // a template to them first makes the conversation without an inbound message (no window)
    const name = await h.approvedTemplate(account, [h.body('Hello {{name}}, your order is ready', { name: 'Ana' })]);
    const direct = await t.http.post(
      `/send-message/${account.messagingPhoneId}`,
      { templateName: name, to: `+${customer}`, variables: { name: 'Bo' } },
      { token: account.token },
    );
    expect(direct.status).toBe(200);
    const contactId = await contactIdOf(customer);
    const auth = { authorization: await session() };
    const conversation = await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: auth });
    expect(conversation.body.data.window).toEqual({ open: false, expiresAt: null });
    const refused = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/messages`,
      { text: 'hi' },
      { headers: auth },
    );
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/24-hour customer-care window is closed/);

    // a media-header template is not offered: the inbox takes no media, so its send could only fail
    const withImage = await h.approvedTemplate(account, [
      { type: 'image', image: { link: 'https://cdn.example.com/h.jpg' } },
      h.body('Look, {{name}}, it is here.', { name: 'Ana' }),
    ]);
    const templates = await t.http.get('/v1/embed/inbox/templates', { headers: auth });
    expect(templates.body.data.templates.find((x: any) => x.name === name)).toMatchObject({
      variables: ['name'],
      preview: expect.stringContaining('your order is ready'),
    });
    expect(templates.body.data.templates.map((x: any) => x.name)).not.toContain(withImage);
    const scoped = { authorization: await session({ scope: { messagingPhoneIds: [account.messagingPhoneId] } }) };
    const ofItsNumber = await t.http.get('/v1/embed/inbox/templates', { headers: scoped });
    expect(ofItsNumber.body.data.templates.map((x: any) => x.name)).toContain(name);
    const sent = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/templates`,
      { templateName: name, variables: { name: 'Cy' } },
      { headers: auth },
    );
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ success: true });
    const got = await eventually(async () => {
      const r = await h.received(account, customer);
      return r.length >= 2 ? r : null;
    });
    expect(JSON.stringify(got[1].payload)).toContain('Cy');

    const unknown = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/templates`,
      { templateName: 'no_such_template' },
      { headers: auth },
    );
    expect(unknown.status).toBe(422);
  });

  it('the 31st exchange within a minute from one IP is 429 with Retry-After; another IP is unaffected', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.77' };
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++)
      statuses.push((await t.http.post('/v1/embed/session', { embedToken: 'not-a-token' }, { headers: ip })).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    const limited = await t.http.post('/v1/embed/session', { embedToken: 'not-a-token' }, { headers: ip });
    expect(statuses[30]).toBe(429);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body.message).toMatch(/Rate limit exceeded: 30 session exchanges per 60 seconds/);
    const minted = await mint();
    const elsewhere = await t.http.post(
      '/v1/embed/session',
      { embedToken: minted.body.embedToken },
      { headers: { 'x-forwarded-for': '203.0.113.78' } },
    );
    expect(elsewhere.status).toBe(200);
  });

  it('live events: inbound and status ticks arrive in scope only; Last-Event-ID resume loses nothing', async () => {
    const customer = h.customer();
    const other = h.customer();
    await h.customerWrites(account, customer, 'first');
    const contactId = await contactIdOf(customer);
    const auth = await session({ scope: { contactNumbers: [customer] } });
    const url = `${t.url}/v1/embed/inbox/events`;
    const live = await openSse(url, { authorization: auth });
    expect(live.status).toBe(200);
    await live.subscribed();

    await h.customerWrites(account, other, 'not for this session');
    await h.customerWrites(account, customer, 'second');
    const created = await live.waitFor((e) => e.event === 'message.created', 10_000);
    expect(created.data).toMatchObject({ contactId, contactNumber: customer, message: { text: 'second' } });
    await live.waitFor((e) => e.event === 'conversation.updated');
    live.close();
    const lastSeen = live.events[live.events.length - 1].id!;

    // while disconnected: a reply is sent and ticks advance; a third inbound arrives
    const sent = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/messages`,
      { text: 'ok!' },
      {
        headers: { authorization: auth },
      },
    );
    expect(sent.status).toBe(200);
    await h.customerWrites(account, customer, 'third');
    await eventually(async () => {
      const [row] = await t.db.query(`SELECT status FROM messages WHERE id = $1`, [sent.body.messageId]);
      return row.status === 'read';
    });

    const resumed = await openSse(url, { authorization: auth, 'last-event-id': lastSeen });
    const statuses = await eventually(async () => {
      const s = resumed.events.filter((e) => e.event === 'message.status' && e.data.messageId === sent.body.messageId);
      return s.length >= 3 ? s : null;
    });
    expect(statuses.map((e) => e.data.status)).toEqual(['sent', 'delivered', 'read']);
    // the third inbound is stored by the worker in its own time (nothing above waited for it)
    const texts = await eventually(async () => {
      const seen = resumed.events.filter((e) => e.event === 'message.created').map((e) => e.data.message.text);
      return seen.includes('third') ? seen : null;
    });
    expect(texts).toEqual(expect.arrayContaining(['ok!', 'third']));
    expect(resumed.events.every((e) => e.data.contactNumber === customer)).toBe(true);
    expect(resumed.events.some((e) => e.id === lastSeen)).toBe(false);
    resumed.close();
  });

  it('a reply the platform refuses shows its failed tick live', async () => {
    await sandbox.control.post('/_sandbox/config', { invalidTokens: ['revoked-inbox-token'] });
    const own = await t.createAccount({ apiBaseUrl: sandbox.url, accessToken: 'revoked-inbox-token' });
    const customer = h.customer();
    await h.customerWrites(own, customer, 'hello?');
    const contactId = await h.contactIdOf(own, customer);
    const auth = await session({}, own.token);
    const live = await openSse(`${t.url}/v1/embed/inbox/events`, { authorization: auth });
    await live.subscribed();
    const sent = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/messages`,
      { text: 'answer' },
      { headers: { authorization: auth } },
    );
    const tick = await live.waitFor((e) => e.event === 'message.status', 10_000);
    expect(tick.data).toMatchObject({ contactId, contactNumber: customer, status: 'failed' });
    const [row] = await t.db.query(`SELECT id, status FROM messages WHERE account_id = $1 AND direction = 'outbound'`, [
      own.accountId,
    ]);
    expect(row.status).toBe('failed');
    expect(tick.data.messageId).toBe(row.id);
    if (sent.body.messageId) expect(sent.body.messageId).toBe(row.id);
    live.close();
  });

  it('cross-account: another account cannot see, send to or stream this account’s conversations', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'private');
    const contactId = await contactIdOf(customer);
    const stranger = await t.createAccount({ apiBaseUrl: sandbox.url });
    const auth = { authorization: await session({}, stranger.token) };
    const list = await t.http.get('/v1/embed/inbox/conversations', { headers: auth });
    expect(list.body.data.conversations).toEqual([]);
    expect((await t.http.get(`/v1/embed/inbox/conversations/${contactId}`, { headers: auth })).status).toBe(404);
    expect(
      (await t.http.post(`/v1/embed/inbox/conversations/${contactId}/messages`, { text: 'x' }, { headers: auth }))
        .status,
    ).toBe(404);
    expect((await t.http.get(`/v1/inbox/conversations/${contactId}`, { token: stranger.token })).status).toBe(404);
    const scoped = await mint({ scope: { messagingPhoneIds: [account.messagingPhoneId] } }, stranger.token);
    expect(scoped.status).toBe(400);
  });

  it('a session without `read` reads no conversation (403), and still sends and lists templates', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'hello');
    const contactId = await contactIdOf(customer);
    const auth = { authorization: await session({ permissions: ['send'] }) };
    const forbidden = { statusCode: 403, message: 'This inbox session may not read conversations' };
    for (const path of ['conversations', `conversations/${contactId}`, `conversations/${contactId}/messages`]) {
      const res = await t.http.get(`/v1/embed/inbox/${path}`, { headers: auth });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 403, body: forbidden });
    }
    const read = await t.http.post(`/v1/embed/inbox/conversations/${contactId}/read`, undefined, { headers: auth });
    expect(read.status).toBe(403);
    const events = await fetch(`${t.url}/v1/embed/inbox/events`, { headers: auth });
    expect(events.status).toBe(403);
    await events.body?.cancel();
    expect((await t.http.get('/v1/embed/inbox/templates', { headers: auth })).status).toBe(200);
    const sent = await t.http.post(
      `/v1/embed/inbox/conversations/${contactId}/messages`,
      { text: 'we are on it' },
      { headers: auth },
    );
    expect(sent.status).toBe(200);
  });

  it('a session is rate limited (EMBED_INBOX_RATE_LIMIT_PER_MINUTE, here 200): 429 with Retry-After, another session served', async () => {
    const auth = { authorization: await session() };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        ...(await Promise.all(
          Array.from(
            { length: 50 },
            async () => (await t.http.get('/v1/embed/inbox/templates', { headers: auth })).status,
          ),
        )),
      );
    expect(statuses.filter((s) => s === 200)).toHaveLength(200);
    const limited = await t.http.get('/v1/embed/inbox/templates', { headers: auth });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body.message).toMatch(
      /^Rate limit exceeded: 200 requests of this inbox session per 60 seconds\. Retry after \d+ seconds\.$/,
    );
    const other = { authorization: await session() };
    expect((await t.http.get('/v1/embed/inbox/templates', { headers: other })).status).toBe(200);
  });

  it('an empty scope list is a 400 naming it, not a token for the whole account', async () => {
    for (const list of ['messagingPhoneIds', 'groupIds', 'contactNumbers']) {
      const res = await mint({ scope: { [list]: [] } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { field: `scope.${list}`, message: `scope.${list} must name at least one (leave it out for no restriction)` },
      ]);
    }
  });

  it('console agents use the same inbox at /v1/inbox with their session cookie', async () => {
    const customer = h.customer();
    await h.customerWrites(account, customer, 'agent please');
    const contactId = await contactIdOf(customer);
    const agent = await consoleSession(t, account.accountId, 'agent');
    const list = await t.http.get('/v1/inbox/conversations', asUser(agent));
    expect(list.status).toBe(200);
    expect(list.body.data.conversations.some((c: any) => c.contactId === contactId)).toBe(true);
    const sent = await t.http.post(`/v1/inbox/conversations/${contactId}/messages`, { text: 'on it' }, asUser(agent));
    expect(sent.status).toBe(200);

    // a console session mints no embed tokens: nothing would check the person again while the session lasts
    const minted = await t.http.post(
      '/v1/embed/tokens',
      { scope: {}, permissions: ['read'], allowedOrigins: [ORIGIN] },
      asUser(agent),
    );
    expect(minted.status).toBe(403);
    expect(minted.body.message).toBe(
      "Embed tokens are minted by your server with an API client's access token, not from a console session",
    );
  });
});
