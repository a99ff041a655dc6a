import { messagingHelpers } from '../helpers/messaging';
import { startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** POST /send-message/{messagingPhoneId}: template messages, one or a bulk array (SPEC §4 Messages). */
describe('Template messages (POST /send-message/{messagingPhoneId})', () => {
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

  const send = (body: unknown, phoneId = account.messagingPhoneId) =>
    t.http.post(`/send-message/${phoneId}`, body, { token: account.token });
  const orderTemplate = () =>
    h.approvedTemplate(account, [
      h.body('Hi {{first}}, order {{order}} ships to {{city}} today.', { first: 'Ann', order: 'A-1', city: 'Berlin' }),
    ]);
  const bodyParams = (m: any) => m.payload.template.components.find((c: any) => c.type === 'body').parameters;

  it('200: exact response, the contact created with receipentName', async () => {
    const name = await orderTemplate();
    const to = h.customer();
    const res = await send({
      templateName: name,
      to: `+${to}`,
      receipentName: 'Bob',
      variables: { name: 'Bob', custom_order: 'B-7', custom_city: 'Paris' },
    });
    expect(res.status).toBe(200);
    const [contact] = await t.db.query('SELECT id, name FROM contacts WHERE account_id = $1 AND contact_number = $2', [
      account.accountId,
      to,
    ]);
    expect(contact.name).toBe('Bob');
    expect(res.body).toEqual({
      message: 'All messages sent successfully',
      results: [
        {
          success: true,
          message: 'Message sent successfully',
          contact: { contact_id: Number(contact.id), contact_number: to },
          messageId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          status: 'accepted',
        },
      ],
    });
    const [m] = await h.received(account, to);
    expect(m.payload.template).toMatchObject({ name, language: { code: 'en_US' } });
  });

  it('Idempotency-Key on a bulk: a retry answers the same messages; an item changed under the same key is a 422', async () => {
    const name = await orderTemplate();
    const [to1, to2, to3] = [h.customer(), h.customer(), h.customer()];
    const key = `batch-${to1}`;
    const post = (items: unknown) =>
      t.http.post(`/send-message/${account.messagingPhoneId}`, items, {
        token: account.token,
        headers: { 'idempotency-key': key },
      });
    const item = (to: string, city = 'Berlin') => ({
      templateName: name,
      to,
      variables: { name: 'Ann', custom_order: 'A-1', custom_city: city },
    });
    const first = await post([item(to1), item(to2)]);
    expect(first.status).toBe(200);
    const retry = await post([item(to1), item(to2)]);
    expect(retry.status).toBe(200);
    expect(retry.body.results.map((r: any) => r.messageId)).toEqual(first.body.results.map((r: any) => r.messageId));
    const changed = await post([item(to1), item(to3)]);
    expect({ status: changed.status, body: changed.body }).toEqual({
      status: 422,
      body: {
        statusCode: 422,
        message: `Idempotency-Key ${key} was already used for another message (item [1], key ${key}:1) to ${to2}: use a new key for a new message`,
        field: 'Idempotency-Key',
      },
    });
    const otherVariables = await post([item(to1, 'Rome')]);
    expect(otherVariables.status).toBe(422);
    expect(otherVariables.body.message).toContain(`(item [0], key ${key}:0) to ${to1}`);
    const rows = await t.db.query(
      'SELECT idempotency_key, recipient FROM messages WHERE account_id = $1 AND idempotency_key LIKE $2 ORDER BY 1',
      [account.accountId, `${key}:%`],
    );
    expect(rows).toEqual([
      { idempotency_key: `${key}:0`, recipient: to1 },
      { idempotency_key: `${key}:1`, recipient: to2 },
    ]);
    expect(await h.received(account, to3)).toHaveLength(0);
  });

  it('a template of another WhatsApp Business Account of the account is refused from this number, nothing sent', async () => {
    const name = await orderTemplate();
    const other = await h.numberInOtherWaba(account, '8');
    const to = h.customer();
    const res = await send(
      { templateName: name, to, variables: { name: 'Ann', custom_order: 'A-1', custom_city: 'Rome' } },
      other,
    );
    expect(res.status).toBe(207);
    expect(res.body.results).toEqual([
      {
        success: false,
        message: `Template belongs to the WhatsApp Business Account of number ${account.messagingPhoneId}: send it from a number of that account`,
        contact: to,
      },
    ]);
    expect(await h.received(account, to)).toHaveLength(0);
  });

  it('body variables are filled in the order of the keys: name, email, custom*; other keys are ignored', async () => {
    const name = await orderTemplate();
    const to1 = h.customer();
    const to2 = h.customer();
    const res = await send([
      {
        templateName: name,
        to: to1,
        variables: { name: 'Ann', note: 'ignored', custom_order: 'A-1', custom_city: 'Berlin' },
      },
      { templateName: name, to: to2, variables: { custom_city: 'Rome', email: 'eve@example.com', name: 'Eve' } },
    ]);
    expect(res.status).toBe(200);
    expect(bodyParams((await h.received(account, to1))[0])).toEqual([
      { type: 'text', text: 'Ann', parameter_name: 'first' },
      { type: 'text', text: 'A-1', parameter_name: 'order' },
      { type: 'text', text: 'Berlin', parameter_name: 'city' },
    ]);
    expect(bodyParams((await h.received(account, to2))[0])).toEqual([
      { type: 'text', text: 'Rome', parameter_name: 'first' },
      { type: 'text', text: 'eve@example.com', parameter_name: 'order' },
      { type: 'text', text: 'Eve', parameter_name: 'city' },
    ]);
  });

  it('a variable count mismatch fails that message with a clear reason and sends nothing (207)', async () => {
    const name = await orderTemplate();
    const to = h.customer();
    const res = await send({ templateName: name, to, variables: { name: 'Ann' } });
    expect(res.status).toBe(207);
    expect(res.body).toEqual({
      message: 'Some messages failed to send',
      results: [
        {
          success: false,
          message: `Template ${name} expects 3 body variable(s) (first, order, city), got 1: pass them as name, email or custom* keys in variables, in order`,
          contact: to,
        },
      ],
    });
    expect(await h.received(account, to)).toHaveLength(0);
  });

  it('cta_link, cta_link_0 and cta_link1 fill the dynamic URL buttons in order', async () => {
    const name = await h.approvedTemplate(account, [
      h.body('Your order is on its way, see the links below.'),
      {
        type: 'button',
        parameters: [
          { type: 'cta', cta: { text: 'URL', value: 'Track', url: 'https://example.com/track/{{1}}' } },
          { type: 'cta', cta: { text: 'URL', value: 'Invoice', url: 'https://example.com/invoice/{{1}}' } },
        ],
      },
    ]);
    const [a, b, c] = [h.customer(), h.customer(), h.customer()];
    const res = await send([
      { templateName: name, to: a, variables: { cta_link: 'T-1', cta_link1: 'I-1' } },
      { templateName: name, to: b, variables: { cta_link1: 'I-2', cta_link_0: 'T-2' } },
      { templateName: name, to: c, variables: { cta_link1: 'I-3' } },
    ]);
    expect(res.status).toBe(207);
    expect(res.body.results.map((r: any) => r.success)).toEqual([true, true, false]);
    expect(res.body.results[2].message).toBe(
      `variables.cta_link is required: URL button "Track" of template ${name} has a dynamic part`,
    );
    const buttons = (m: any) => m.payload.template.components.filter((x: any) => x.type === 'button');
    expect(buttons((await h.received(account, a))[0])).toEqual([
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'T-1' }] },
      { type: 'button', sub_type: 'url', index: '1', parameters: [{ type: 'text', text: 'I-1' }] },
    ]);
    expect(buttons((await h.received(account, b))[0])).toEqual([
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'T-2' }] },
      { type: 'button', sub_type: 'url', index: '1', parameters: [{ type: 'text', text: 'I-2' }] },
    ]);
  });

  it('code fills an AUTHENTICATION template: its body variable and its code button', async () => {
    const name = await h.approvedTemplate(
      account,
      [
        h.body('Your verification code is {{code}} - do not share it.', { code: '123456' }),
        {
          type: 'button',
          parameters: [{ type: 'cta', cta: { text: 'URL', value: 'Copy code', url: 'https://example.com/otp/{{1}}' } }],
        },
      ],
      { category: 'AUTHENTICATION' },
    );
    const to = h.customer();
    expect((await send({ templateName: name, to, variables: { code: '884422' } })).status).toBe(200);
    const [m] = await h.received(account, to);
    expect(m.payload.template.components).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: '884422', parameter_name: 'code' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '884422' }] },
    ]);
    const missing = await send({ templateName: name, to, variables: { name: 'x' } });
    expect(missing.status).toBe(207);
    expect(missing.body.results[0].message).toBe(
      `variables.code is required: template ${name} is an AUTHENTICATION template`,
    );
  });

  it('media headers need mediaUrl; a document is named documentName (default "doc")', async () => {
    const image = await h.approvedTemplate(account, [
      { type: 'image', image: { link: 'https://example.com/sample.png' } },
      h.body('Your new catalogue is here.'),
    ]);
    const doc = await h.approvedTemplate(account, [
      { type: 'document', document: { link: 'https://example.com/sample.pdf' } },
      h.body('Your invoice is attached.'),
    ]);
    const [a, b, c, d] = [h.customer(), h.customer(), h.customer(), h.customer()];
    const res = await send([
      { templateName: image, to: a },
      { templateName: image, to: b, mediaUrl: 'https://example.com/spring.png' },
      { templateName: doc, to: c, mediaUrl: 'https://example.com/inv.pdf' },
      { templateName: doc, to: d, mediaUrl: 'https://example.com/inv.pdf', documentName: 'Invoice 7.pdf' },
    ]);
    expect(res.status).toBe(207);
    expect(res.body.results[0]).toEqual({
      success: false,
      message: `mediaUrl is required: template ${image} has a image header`,
      contact: a,
    });
    expect(res.body.results.slice(1).every((r: any) => r.success)).toBe(true);
    const header = async (to: string) =>
      (await h.received(account, to))[0].payload.template.components.find((x: any) => x.type === 'header');
    expect(await header(b)).toEqual({
      type: 'header',
      parameters: [{ type: 'image', image: { link: 'https://example.com/spring.png' } }],
    });
    expect(await header(c)).toEqual({
      type: 'header',
      parameters: [{ type: 'document', document: { link: 'https://example.com/inv.pdf', filename: 'doc' } }],
    });
    expect(await header(d)).toEqual({
      type: 'header',
      parameters: [{ type: 'document', document: { link: 'https://example.com/inv.pdf', filename: 'Invoice 7.pdf' } }],
    });
    expect(await h.received(account, a)).toHaveLength(0);
  });

  it('bulk with mixed outcomes: 207, results in request order, each failure with its reason and the contact as given', async () => {
    const ok = await orderTemplate();
    const pending = await h.approvedTemplate(account, [h.body('Not reviewed yet.')], { approve: false });
    const [a, b, c, d, e] = [h.customer(), h.customer(), h.customer(), h.customer(), h.customer()];
    await t.db.query(`INSERT INTO contacts (account_id, contact_number, is_blocked) VALUES ($1, $2, true)`, [
      account.accountId,
      e,
    ]);
    const vars = { name: 'Ann', custom_o: 'A-1', custom_c: 'Berlin' };
    const res = await send([
      { templateName: ok, to: a, variables: vars },
      { templateName: 'no_such_template', to: b, variables: vars },
      { templateName: pending, to: c },
      { templateName: ok, to: `+${d}`, variables: { name: 'Ann' } },
      { templateName: ok, to: e, variables: vars },
    ]);
    expect(res.status).toBe(207);
    expect(res.body.message).toBe('Some messages failed to send');
    const r = res.body.results;
    expect(r[0]).toMatchObject({ success: true, message: 'Message sent successfully', contact: { contact_number: a } });
    expect(r[1]).toEqual({ success: false, message: 'No Template found', contact: b });
    expect(r[2]).toEqual({ success: false, message: 'Template is not approved (status PENDING)', contact: c });
    expect(r[3]).toMatchObject({ success: false, contact: `+${d}` });
    expect(r[4]).toEqual({ success: false, message: 'Contact has opted out (blocked)', contact: e });
    for (const to of [b, c, d, e]) expect(await h.received(account, to)).toHaveLength(0);
    expect(await h.received(account, a)).toHaveLength(1);
  });

  it('a platform rejection of a template send is a failed result with the platform reason (207)', async () => {
    const name = await orderTemplate();
    // The platform now refuses it and we have not heard yet: its status webhook is held back until after the send
    // (otherwise, whichever comes first decides whether we refuse locally or the platform does).
    const webhookUrl = (await sandbox.control.get('/_sandbox/config')).body.webhookUrl;
    await sandbox.control.post('/_sandbox/config', { webhookUrl: null });
    await sandbox.control.post('/_sandbox/templates/review', { name, status: 'PAUSED' });
    const to = h.customer();
    const res = await send({ templateName: name, to, variables: { name: 'A', custom_b: 'B', custom_c: 'C' } }).finally(
      () => sandbox.control.post('/_sandbox/config', { webhookUrl }),
    );
    expect(res.status).toBe(207);
    // Meta's code for a paused template (132001 is for one that does not exist)
    expect(res.body.results[0]).toMatchObject({ success: false, contact: to, status: 'failed', code: 132015 });
    expect(res.body.results[0].message).toMatch(/paused/);
  });

  it('400 for a structurally bad body (field named with its index), a bulk above the maximum, and an empty array', async () => {
    const noTo = await send([{ templateName: 'x', to: '4915112345678' }, { templateName: 'x' }]);
    expect(noTo.status).toBe(400);
    expect(noTo.body.errors[0]).toEqual({ field: '[1].to', message: '[1].to is required' });
    const big = await send(Array.from({ length: 1001 }, () => ({ templateName: 'x', to: '4915112345678' })));
    expect(big.status).toBe(400);
    expect(big.body.message).toBe('at most 1000 messages per request (got 1001); split the array');
    expect((await send([])).status).toBe(400);
    const badPhone = await send({ templateName: 'x', to: 'abc' });
    expect(badPhone.status).toBe(400);
    expect(badPhone.body.errors[0].field).toBe('to');
  });

  it('404 for another account’s messagingPhoneId', async () => {
    const other = await t.createAccount({ apiBaseUrl: sandbox.url });
    const res = await send({ templateName: 'x', to: '4915112345678' }, other.messagingPhoneId);
    expect(res.status).toBe(404);
    expect(res.body.success).toBe(false);
  });
});
