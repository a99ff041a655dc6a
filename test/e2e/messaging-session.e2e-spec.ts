import { AccountsService } from '@switchboard/accounts';
import { ChangeNotices } from '@switchboard/core/database';
import { SendQueueService } from '@switchboard/messaging';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** POST /v1/send-message/{messagingPhoneId}: session messages inside the 24-hour window (SPEC §4 Messages). */
describe('Session messages (POST /v1/send-message/{messagingPhoneId})', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let h: ReturnType<typeof messagingHelpers>;

  beforeAll(async () => {
    t = await startTestApp(
      { RATE_LIMIT_PER_MINUTE: '100000', ALLOW_PRIVATE_NETWORK_TARGETS: 'true', SEND_WAIT_TIMEOUT_MS: '15000' },
      { worker: true },
    );
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 60, read: 120 }, autoReview: false });
    h = messagingHelpers(t, () => sandbox);
  });
  afterAll(async () => {
    await sandbox.close();
    await t.close();
  });
  beforeEach(async () => {
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });

  const send = (
    body: unknown,
    phoneId = account.messagingPhoneId,
    token = account.token,
    headers: Record<string, string> = {},
  ) => t.http.post(`/v1/send-message/${phoneId}`, body, { token, headers });

  it('closed window: 500 with the platform reason; after the customer writes: 200 and the text reaches the platform', async () => {
    const to = h.customer();
    const closed = await send({ typOfmsg: 'normal_message', receipentPhone: `+${to}`, message: 'Hello?' });
    expect(closed.status).toBe(500);
    expect(closed.body).toMatchObject({ statusCode: 500, success: false, status: 'failed', code: 131047 }); // SPEC §7 500, in the one error shape
    expect(closed.body.message).toMatch(/Re-engagement message/);
    const [failedRow] = await t.db.query('SELECT status, error_code FROM messages WHERE id = $1', [
      closed.body.messageId,
    ]);
    expect(failedRow).toEqual({ status: 'failed', error_code: 131047 });

    await h.customerWrites(account, to);
    const open = await send({ typOfmsg: 'normal_message', receipentPhone: `+${to}`, message: 'Hello again' });
    expect(open.status).toBe(200);
    expect(open.body).toMatchObject({ success: true, message: 'Message sent to whatsapp successfully!' });
    expect(open.body.messageId).toMatch(/^[0-9a-f-]{36}$/);
    const got = await h.received(account, to);
    expect(got).toHaveLength(1);
    expect(got[0].payload).toMatchObject({
      type: 'text',
      to,
      text: { body: 'Hello again' },
      biz_opaque_callback_data: open.body.messageId,
    });
    const [row] = await t.db.query('SELECT status, wamid FROM messages WHERE id = $1', [open.body.messageId]);
    expect(row.wamid).toBe(got[0].wamid);
  });

  it('a customer known only by a business-scoped user id (username, no phone): stored, bound to a contact by that id, and answered with recipient', async () => {
    const userId = `DE.${Date.now()}${Math.floor(Math.random() * 1000)}`;
    const inbound = await h.userWrites(account, userId, 'Hallo');
    const stored = await eventually(
      async () =>
        (
          await t.db.query(
            `SELECT m.recipient, m.body, m.contact_id, c.contact_number, c.whatsapp_user_id, c.name FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id WHERE m.wamid = $1`,
            [inbound.wamid],
          )
        ).find((r: any) => r.contact_id !== null),
      10_000,
      'inbound stored and bound to a contact',
    );
    expect(stored).toMatchObject({
      recipient: userId,
      body: 'Hallo',
      contact_number: null,
      whatsapp_user_id: userId,
      name: 'Ann',
    });
    expect(stored.contact_id).not.toBeNull();

    // the conversation list shows the window this message opened
    const listed = await t.http.get('/v2/conversations?pageSize=100', { token: account.token });
    const conversation = listed.body.data.conversations.find(
      (c: any) => c.contact.contact_id === Number(stored.contact_id),
    );
    expect(conversation).toMatchObject({ contact: { contact_number: null }, window: { open: true } });

    const res = await send({ typOfmsg: 'normal_message', receipentPhone: userId, message: 'Hallo Ann' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: 'Message sent to whatsapp successfully!' });
    const [sent] = await h.received(account, userId);
    expect(sent.payload).toMatchObject({
      messaging_product: 'whatsapp',
      recipient: userId,
      type: 'text',
      text: { body: 'Hallo Ann' },
    });
    expect(sent.payload.to).toBeUndefined();
    const [row] = await t.db.query('SELECT recipient, contact_id FROM messages WHERE id = $1', [res.body.messageId]);
    expect(row).toEqual({ recipient: userId, contact_id: stored.contact_id });
    // its statuses name the user id (recipient_user_id) and move the message forward
    await eventually(
      async () =>
        ['delivered', 'read'].includes(
          (await t.db.query('SELECT status FROM messages WHERE id = $1', [res.body.messageId]))[0].status,
        ),
      10_000,
      'delivered',
    );

    // a second message from the same user binds the same contact; another account does not see it
    const again = await sandbox.control.post('/_sandbox/inbound', {
      user_id: userId,
      phone_number_id: account.messagingPhoneId,
      text: 'Danke',
    });
    await eventually(
      async () =>
        (await t.db.query('SELECT contact_id FROM messages WHERE wamid = $1', [again.body.wamid]))[0]?.contact_id ===
        stored.contact_id,
      10_000,
      'same contact',
    );
    const other = await t.createAccount({ apiBaseUrl: sandbox.url });
    const contacts = await t.http.get('/v2/contacts', { token: other.token });
    expect(contacts.body.data.contacts).toEqual([]);
  });

  it('a receipentPhone that is neither a phone number nor a user id is a 400 naming the field', async () => {
    const res = await send({ typOfmsg: 'normal_message', receipentPhone: 'us.123', message: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'receipentPhone', message: expect.stringContaining('business-scoped user id') },
    ]);
  });

  it('quick_reply (text header, up to 3 buttons), cta (image header, first button only), media with caption and file name', async () => {
    const to = h.customer();
    await h.customerWrites(account, to);
    const qr = await send({
      typOfmsg: 'quick_reply',
      receipentPhone: to,
      message: 'Pick one',
      header: { type: 'text', text: 'Your order' },
      buttons: [{ text: 'Yes' }, { text: 'No' }, { text: 'Later' }],
    });
    expect(qr.status).toBe(200);
    const cta = await send({
      typOfmsg: 'cta',
      receipentPhone: to,
      message: 'Track it',
      header: { type: 'image', url: 'https://example.com/box.png' },
      buttons: [
        { text: 'Track', url: 'https://example.com/t/1' },
        { text: 'Ignored', url: 'https://example.com/x' },
      ],
    });
    expect(cta.status).toBe(200);
    const doc = await send({
      typOfmsg: 'normal_message',
      receipentPhone: to,
      message: 'Your invoice',
      mediaUrl: 'https://example.com/i.pdf',
      fileType: 'document',
      fileName: 'invoice.pdf',
    });
    expect(doc.status).toBe(200);
    const img = await send({
      typOfmsg: 'normal_message',
      receipentPhone: to,
      message: 'A photo',
      mediaUrl: 'https://example.com/p.jpg',
      fileType: 'image',
    });
    expect(img.status).toBe(200);

    const [a, b, c, d] = (await h.received(account, to)).map((m) => m.payload);
    expect(a.interactive).toEqual({
      type: 'button',
      header: { type: 'text', text: 'Your order' },
      body: { text: 'Pick one' },
      action: { buttons: ['Yes', 'No', 'Later'].map((x) => ({ type: 'reply', reply: { id: x, title: x } })) },
    });
    expect(b.interactive).toEqual({
      type: 'cta_url',
      header: { type: 'image', image: { link: 'https://example.com/box.png' } },
      body: { text: 'Track it' },
      action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://example.com/t/1' } },
    });
    expect(c).toMatchObject({
      type: 'document',
      document: { link: 'https://example.com/i.pdf', caption: 'Your invoice', filename: 'invoice.pdf' },
    });
    expect(d).toMatchObject({ type: 'image', image: { link: 'https://example.com/p.jpg', caption: 'A photo' } });
  });

  it.each([
    [{ receipentPhone: '4915112345678', message: 'x' }, 'typOfmsg'],
    [{ typOfmsg: 'sms', receipentPhone: '4915112345678', message: 'x' }, 'typOfmsg'],
    [{ typOfmsg: 'normal_message', message: 'x' }, 'receipentPhone'],
    [{ typOfmsg: 'normal_message', receipentPhone: 'call me', message: 'x' }, 'receipentPhone'],
    [{ typOfmsg: 'normal_message', receipentPhone: '4915112345678' }, 'message'],
    [
      { typOfmsg: 'normal_message', receipentPhone: '4915112345678', message: 'x', mediaUrl: 'https://e.com/a.png' },
      'fileType',
    ],
    [
      {
        typOfmsg: 'normal_message',
        receipentPhone: '4915112345678',
        message: 'x',
        mediaUrl: 'ftp://e.com/a.png',
        fileType: 'image',
      },
      'mediaUrl',
    ],
    [{ typOfmsg: 'quick_reply', receipentPhone: '4915112345678', message: 'x' }, 'buttons'],
    [
      {
        typOfmsg: 'quick_reply',
        receipentPhone: '4915112345678',
        message: 'x',
        buttons: [{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }],
      },
      'buttons',
    ],
    [
      { typOfmsg: 'quick_reply', receipentPhone: '4915112345678', message: 'x', buttons: [{ text: 'a'.repeat(21) }] },
      'buttons[0].text',
    ],
    [{ typOfmsg: 'cta', receipentPhone: '4915112345678', message: 'x', buttons: [{ text: 'Go' }] }, 'buttons[0].url'],
    [
      {
        typOfmsg: 'cta',
        receipentPhone: '4915112345678',
        message: 'x',
        buttons: [{ text: 'Go', url: 'https://e.com' }],
        header: { type: 'gif' },
      },
      'header.type',
    ],
    [
      {
        typOfmsg: 'normal_message',
        receipentPhone: '4915112345678',
        message: 'x',
        callback_url: 'ftp://example.com/cb',
      },
      'callback_url',
    ],
    [
      {
        typOfmsg: 'normal_message',
        receipentPhone: '4915112345678',
        message: 'x',
        callback_url: 'https://example.com/cb',
        event: ['opened'],
      },
      'event',
    ],
  ])('400 naming the field: %j → %s', async (body, field) => {
    const res = await send(body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(res.body.message).toContain(field);
    const [{ count }] = await t.db.query('SELECT count(*)::int AS count FROM messages WHERE account_id = $1', [
      account.accountId,
    ]);
    expect(count).toBe(0);
  });

  it('404 for an unknown messagingPhoneId and for another account’s number', async () => {
    const other = await t.createAccount({ apiBaseUrl: sandbox.url });
    const body = { typOfmsg: 'normal_message', receipentPhone: '4915112345678', message: 'x' };
    for (const phoneId of ['123456789012345', other.messagingPhoneId]) {
      const res = await send(body, phoneId);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        statusCode: 404,
        success: false,
        message: `Phone number not found: ${phoneId} is not a connected number of this account (see GET /account/get)`,
      });
    }
    expect((await h.received(other, '4915112345678')).length).toBe(0);
  });

  it('a number is kept in memory until PostgreSQL announces a change to it, whoever makes it', async () => {
    // nothing is kept until the process listens for the announcements (right after start it may not yet)
    const notices = t.app.get(ChangeNotices);
    await eventually(async () => notices.listening('phone_number_changed') || undefined, 5_000);
    const to = h.customer();
    await h.customerWrites(account, to);
    const body = { typOfmsg: 'normal_message', receipentPhone: `+${to}`, message: 'Still there?' };
    expect((await send(body)).status).toBe(200);
    const [{ id }] = await t.db.query(`SELECT id::text FROM phone_numbers WHERE messaging_phone_id = $1`, [
      account.messagingPhoneId,
    ]);
    const notFound = {
      statusCode: 404,
      success: false,
      message: `Phone number not found: ${account.messagingPhoneId} is not a connected number of this account (see GET /account/get)`,
    };

    // Disconnected without a notice (triggers off for this transaction): the API still answers from memory…
    await t.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`UPDATE phone_numbers SET status = 'DISCONNECTED' WHERE id = $1`, [id]);
    });
    expect((await send(body)).status).toBe(200);
    // …until the notice comes.
    await t.db.query(`SELECT pg_notify('phone_number_changed', $1)`, [id]);
    const refused = await eventually(async () => {
      const res = await send(body);
      return res.status === 404 ? res : undefined;
    }, 2_000);
    expect(refused.body).toEqual(notFound);

    // Connected again by plain SQL: the trigger tells every process at commit.
    await t.db.query(`UPDATE phone_numbers SET status = 'CONNECTED' WHERE id = $1`, [id]);
    const accepted = await eventually(async () => {
      const res = await send(body);
      return res.status === 200 ? res : undefined;
    }, 2_000);
    expect(accepted.body).toMatchObject({ success: true, message: 'Message sent to whatsapp successfully!' });
  });

  it('the default number (what an automation sends from when its run names none) is kept until a change is announced', async () => {
    const accounts = t.app.get(AccountsService);
    const notices = t.app.get(ChangeNotices);
    await eventually(async () => notices.listening('phone_number_changed') || undefined, 5_000);
    const [{ id }] = await t.db.query(`SELECT id::text FROM phone_numbers WHERE messaging_phone_id = $1`, [
      account.messagingPhoneId,
    ]);
    const defaultNumber = async () => (await accounts.defaultPhoneNumber(account.accountId))?.messagingPhoneId ?? null;
    expect(await defaultNumber()).toBe(account.messagingPhoneId);

    // Disconnected without a notice: still the number kept in memory…
    await t.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`UPDATE phone_numbers SET status = 'DISCONNECTED' WHERE id = $1`, [id]);
    });
    expect(await defaultNumber()).toBe(account.messagingPhoneId);
    // …until the notice comes: then none (an absent number is never kept, so connecting one shows at once).
    await t.db.query(`SELECT pg_notify('phone_number_changed', $1)`, [id]);
    await eventually(async () => ((await defaultNumber()) === null ? true : undefined), 2_000);
    await t.db.query(`UPDATE phone_numbers SET status = 'CONNECTED' WHERE id = $1`, [id]);
    expect(await defaultNumber()).toBe(account.messagingPhoneId);
  });

  // receipentName names a contact the send creates (messaging-templates.e2e-spec.ts); a customer who wrote first already
  // has one, named by their profile, and keeps it.
  it('the message goes to the contact of the customer who wrote; a blocked contact is refused with 403 and nothing is sent', async () => {
    const to = h.customer();
    await h.customerWritesStored(account, to);
    const ok = await send({
      typOfmsg: 'normal_message',
      receipentPhone: to,
      message: 'hi',
      receipentName: 'Ann Example',
    });
    expect(ok.status).toBe(200);
    const [contact] = await t.db.query('SELECT id, name FROM contacts WHERE account_id = $1 AND contact_number = $2', [
      account.accountId,
      to,
    ]);
    expect(contact.name).toBe('Customer');
    const [msg] = await t.db.query('SELECT contact_id FROM messages WHERE id = $1', [ok.body.messageId]);
    expect(msg.contact_id).toBe(contact.id);

    await t.db.query('UPDATE contacts SET is_blocked = true WHERE id = $1', [contact.id]);
    const blocked = await send({ typOfmsg: 'normal_message', receipentPhone: to, message: 'again' });
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual({ statusCode: 403, success: false, message: 'Contact has opted out (blocked)' });
    expect(await h.received(account, to)).toHaveLength(1);
  });

  it('Idempotency-Key: a repeated request returns the first message and sends nothing more', async () => {
    const to = h.customer();
    await h.customerWrites(account, to);
    const body = { typOfmsg: 'normal_message', receipentPhone: to, message: 'once' };
    const first = await send(body, undefined, undefined, { 'idempotency-key': 'order-42' });
    const second = await send(body, undefined, undefined, { 'idempotency-key': 'order-42' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.messageId).toBe(first.body.messageId);
    expect(await h.received(account, to)).toHaveLength(1);
  });

  it('Idempotency-Key reused for another message: 422 naming the key, nothing stored or sent', async () => {
    const to = h.customer();
    const other = h.customer();
    await h.customerWrites(account, to);
    await h.customerWrites(account, other);
    const key = { 'idempotency-key': `order-${to}` };
    const first = await send(
      { typOfmsg: 'normal_message', receipentPhone: to, message: 'once' },
      undefined,
      undefined,
      key,
    );
    expect(first.status).toBe(200);
    const refused = {
      status: 422,
      body: {
        statusCode: 422,
        message: `Idempotency-Key order-${to} was already used for another message to ${to}: use a new key for a new message`,
        field: 'Idempotency-Key',
      },
    };
    // another customer, then another text, then another callback, under the same key
    for (const [receipentPhone, message, callback_url] of [
      [other, 'once'],
      [to, 'twice'],
      [to, 'once', 'https://example.com/another-callback'],
    ]) {
      const reused = await send(
        { typOfmsg: 'normal_message', receipentPhone, message, ...(callback_url ? { callback_url } : {}) },
        undefined,
        undefined,
        key,
      );
      expect({ status: reused.status, body: reused.body }).toEqual(refused);
    }
    const [{ n }] = await t.db.query(
      'SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND idempotency_key = $2',
      [account.accountId, `order-${to}`],
    );
    expect(n).toBe(1);
    expect(await h.received(account, other)).toHaveLength(0);
    expect(await h.received(account, to)).toHaveLength(1);

    // the same text with other buttons is another message too (the whole Cloud API body is compared)
    const ask = (buttons: string[]) => ({
      typOfmsg: 'quick_reply',
      receipentPhone: to,
      message: 'Still interested?',
      buttons: buttons.map((text) => ({ text })),
    });
    const buttonsKey = { 'idempotency-key': `ask-${to}` };
    expect((await send(ask(['Yes', 'No']), undefined, undefined, buttonsKey)).status).toBe(200);
    expect((await send(ask(['Yes', 'No']), undefined, undefined, buttonsKey)).status).toBe(200);
    expect((await send(ask(['Yes', 'Maybe']), undefined, undefined, buttonsKey)).status).toBe(422);
    expect(await h.received(account, to)).toHaveLength(2);
    // a key longer than 200 characters is a 400 naming it (it overflowed the index: 500)
    const long = await send(ask(['Yes']), undefined, undefined, { 'idempotency-key': 'k'.repeat(3000) });
    expect({ status: long.status, field: long.body.field }).toEqual({ status: 400, field: 'Idempotency-Key' });
  });

  it('Idempotency-Key: two requests at once get the same message, each woken by its send (not by the 1-s poll)', async () => {
    const to = h.customer();
    await h.customerWrites(account, to);
    const body = { typOfmsg: 'normal_message', receipentPhone: to, message: 'at once' };
    const queue = t.app.get(SendQueueService);
    const reads = jest.spyOn(queue, 'outcomes');
    try {
      const [first, second] = await Promise.all(
        [1, 2].map(() => send(body, undefined, undefined, { 'idempotency-key': 'order-43' })),
      );
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.body.messageId).toBe(first.body.messageId);
      // each wait reads the outcome when it starts and when it ends; a third read is the poll of a waiter never woken
      expect(reads.mock.calls.length).toBeLessThanOrEqual(4);
    } finally {
      reads.mockRestore();
    }
    expect(await h.received(account, to)).toHaveLength(1);
  });

  it('statuses move forward only, through the pipeline: accepted → sent → delivered → read, each time recorded', async () => {
    const to = h.customer();
    await h.customerWrites(account, to);
    const res = await send({ typOfmsg: 'normal_message', receipentPhone: to, message: 'track me' });
    const row = await eventually(async () => {
      const [r] = await t.db.query('SELECT * FROM messages WHERE id = $1', [res.body.messageId]);
      return r.status === 'read' ? r : null;
    });
    const times = ['accepted_at', 'sent_at', 'delivered_at', 'read_at'].map((c) => new Date(row[c]).getTime());
    expect(times.every((x) => x > 0)).toBe(true);
    expect(times[1]).toBeLessThanOrEqual(times[2]);
    expect(times[2]).toBeLessThanOrEqual(times[3]);
    expect(row.attempts).toBe(1);
  });
});
