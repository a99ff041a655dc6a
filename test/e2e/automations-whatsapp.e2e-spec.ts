import { computeSignature } from '@switchboard/whatsapp';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkflow, describeEachDriver, driverEnv, waitForRun } from '../helpers/automations';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * The whole product path of an automation, through the real platform boundary: a shop's webhook starts a run,
 * the run sends a template through messaging to the sandbox, the customer answers via the sandbox, the signed
 * webhook resumes the run, the condition reads the reply and a second template goes out. The same scenarios run on
 * both drivers (embedded: BullMQ; Temporal: the dev server the global setup started).
 */
jest.setTimeout(60_000);

describeEachDriver('Automations through WhatsApp (sandbox)', (driver) => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const h = () => messagingHelpers(t, () => sandbox);

  beforeAll(async () => {
    t = await startTestApp({ ...driverEnv(driver), RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 40, read: null }, autoReview: false });
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });
  afterAll(async () => {
    await sandbox.close();
    await t.close();
  });

  function definition(ask: string, thanks: string, sorry: string, timeout = '1h') {
    return {
      trigger: { type: 'webhook' },
      startNodeId: 'ask',
      nodes: [
        {
          id: 'ask',
          type: 'send_template',
          templateName: ask,
          to: '{{payload.phone}}',
          variables: { name: '{{payload.name}}' },
          next: 'wait',
        },
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout,
          branches: [{ match: { type: 'any' }, next: 'check' }],
          onTimeout: 'sorry',
        },
        {
          id: 'check',
          type: 'condition',
          rules: [{ left: '{{reply.text}}', operator: 'equals', right: 'yes', next: 'thanks' }],
          else: 'sorry',
        },
        { id: 'thanks', type: 'send_template', templateName: thanks, to: '{{payload.phone}}', next: 'done' },
        { id: 'sorry', type: 'send_template', templateName: sorry, to: '{{payload.phone}}', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    };
  }

  async function templates() {
    const { approvedTemplate, body } = h();
    return {
      ask: await approvedTemplate(account, [body('Hi {{name}}, shall we ship your order today?', { name: 'Ann' })]),
      thanks: await approvedTemplate(account, [body('Great, it ships today.')]),
      sorry: await approvedTemplate(account, [body('No problem, we will ask again tomorrow.')]),
    };
  }

  it('webhook → template → customer replies "yes" → condition → second template', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, definition(ask, thanks, sorry));
    const phone = h().customer();

    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: `+${phone}`, name: 'Ann' });
    expect(started.status).toBe(200);
    const first = await eventually(
      async () => (await h().received(account, phone)).find((m) => m.payload.template?.name === ask),
      15_000,
      'the first template',
    );
    expect(first.payload.template.components[0].parameters[0]).toMatchObject({ type: 'text', text: 'Ann' });
    await waitForRun(t, account.token, started.body.runId, ['waiting']);

    await h().customerWrites(account, phone, 'yes');
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run).toMatchObject({ status: 'completed', reply: { text: 'yes' } });
    const names = (
      await eventually(async () => {
        const got = await h().received(account, phone);
        return got.length >= 2 ? got : null;
      })
    ).map((m: any) => m.payload.template?.name);
    expect(names).toEqual([ask, thanks]);

    // the run's history, as the console's run view shows it: the same on both drivers
    const { history, createdAt, finishedAt } = (
      await t.http.get(`/v1/workflow-runs/${started.body.runId}`, { token: account.token })
    ).body.data;
    expect(history.map((e: any) => `${e.nodeId}:${e.outcome}`)).toEqual([
      'ask:completed',
      'wait:branch:0',
      'check:rule:0',
      'thanks:completed',
      'done:end',
    ]);
    const times = history.map((e: any) => Date.parse(e.at));
    for (const at of times) {
      expect(at).toBeGreaterThanOrEqual(Date.parse(createdAt) - 1000);
      expect(at).toBeLessThanOrEqual(Date.parse(finishedAt) + 1000);
    }
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const [sent, replied, , secondSent] = history;
    expect(sent.detail).toMatchObject({
      input: { templateName: ask, to: `+${phone}` },
      output: { messageId: expect.any(String) },
    });
    expect(replied.detail).toMatchObject({ reply: { text: 'yes' } });
    expect(secondSent.detail).toMatchObject({
      input: { templateName: thanks },
      output: { messageId: expect.any(String) },
    });
  });

  it('a Brazilian customer whose WhatsApp id lacks the 9th digit: the reply resumes the run on the number given, marks the message replied, makes no second contact', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, definition(ask, thanks, sorry));
    const subscriber = `8${h().customer().slice(-7)}`; // an old 8-digit mobile number, 9 in front since 2012
    const dialled = `55119${subscriber}`;
    const waId = `5511${subscriber}`; // the id WhatsApp gave it before
    await sandbox.control.post('/_sandbox/config', { whatsappIds: { [dialled]: waId } });

    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, {
      phone: `+55 11 9${subscriber.slice(0, 4)}-${subscriber.slice(4)}`,
      name: 'Ana',
    });
    expect(started.status).toBe(200);
    await eventually(async () => (await h().received(account, waId)).length === 1, 15_000, 'the first template');
    await waitForRun(t, account.token, started.body.runId, ['waiting']);

    await h().customerWrites(account, dialled, 'yes'); // from the old id, as WhatsApp sends it
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run).toMatchObject({ status: 'completed', reply: { text: 'yes' } });
    const inbound = await t.db.query(
      `SELECT recipient, contact_id IS NOT NULL AS linked FROM messages WHERE account_id = $1 AND direction = 'inbound'
          AND recipient = ANY($2::text[])`,
      [account.accountId, [dialled, waId]],
    );
    expect(inbound).toEqual([{ recipient: dialled, linked: expect.any(Boolean) }]);
    const [asked] = await t.db.query(
      `SELECT recipient, replied_at IS NOT NULL AS replied FROM messages
        WHERE account_id = $1 AND direction = 'outbound' AND template_name = $2`,
      [account.accountId, ask],
    );
    expect(asked).toEqual({ recipient: dialled, replied: true });
    await eventually(
      async () =>
        (
          await t.db.query(
            `SELECT 1 FROM messages WHERE account_id = $1 AND direction = 'inbound' AND contact_id IS NOT NULL
            AND recipient = $2`,
            [account.accountId, dialled],
          )
        ).length === 1,
      10_000,
      'the reply linked to its contact',
    );
    const contacts = await t.db.query(
      `SELECT contact_number FROM contacts WHERE account_id = $1 AND contact_number = ANY($2::text[])`,
      [account.accountId, [dialled, waId]],
    );
    expect(contacts).toEqual([{ contact_number: dialled }]);
  });

  it('a Mexican customer who wrote before from the id with the 1 after 52: a run on the number without it is resumed by their reply, which stays in their conversation', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, definition(ask, thanks, sorry));
    const local = `55${h().customer().slice(-8)}`;
    const waId = `521${local}`;
    await h().customerWritesStored(account, waId, 'hola'); // their contact is the id's
    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: `+52 ${local}`, name: 'Luz' });
    expect(started.status).toBe(200);
    await eventually(async () => (await h().received(account, `52${local}`)).length === 1, 15_000, 'the template');
    await waitForRun(t, account.token, started.body.runId, ['waiting']);

    await h().customerWrites(account, waId, 'yes');
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run).toMatchObject({ status: 'completed', reply: { text: 'yes' } });
    const inbound = await t.db.query(
      `SELECT recipient, body FROM messages WHERE account_id = $1 AND direction = 'inbound' AND recipient LIKE $2
        ORDER BY created_at`,
      [account.accountId, `52%${local}`],
    );
    expect(inbound).toEqual([
      { recipient: waId, body: 'hola' },
      { recipient: waId, body: 'yes' },
    ]);
  });

  it("a quick-reply button goes out with its payload as the id a tap returns, and the tap takes the wait's button branch", async () => {
    const phone = h().customer();
    await h().customerWritesStored(account, phone, 'hi'); // the 24-hour window is open
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'ask',
      nodes: [
        {
          id: 'ask',
          type: 'send_session_message',
          to: '{{payload.phone}}',
          text: 'Shall we book it?',
          buttons: [{ text: 'Yes, book it', payload: 'BOOK' }, { text: 'Not now' }],
          next: 'wait',
        },
        {
          id: 'wait',
          type: 'wait_for_reply',
          timeout: '1h',
          branches: [{ match: { type: 'button', payload: 'BOOK' }, next: 'booked' }],
          onTimeout: 'done',
        },
        { id: 'booked', type: 'end' },
        { id: 'done', type: 'end' },
      ],
    });
    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: `+${phone}` });
    expect(started.status).toBe(200);
    const asked = await eventually(
      async () => (await h().received(account, phone)).find((m) => m.payload.type === 'interactive'),
      15_000,
      'the question',
    );
    expect(asked.payload.interactive.action.buttons).toEqual([
      { type: 'reply', reply: { id: 'BOOK', title: 'Yes, book it' } },
      { type: 'reply', reply: { id: 'Not now', title: 'Not now' } },
    ]);
    await waitForRun(t, account.token, started.body.runId, ['waiting']);
    // the customer taps "Yes, book it": WhatsApp returns the button's id
    const tap = await sandbox.control.post('/_sandbox/inbound', {
      from: phone,
      phone_number_id: account.messagingPhoneId,
      interactive: { button_reply: { id: 'BOOK', title: 'Yes, book it' } },
    });
    expect(tap.status).toBe(200);
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run.history.map((e: any) => `${e.nodeId}:${e.outcome}`)).toEqual([
      'ask:completed',
      'wait:branch:0',
      'booked:end',
    ]);
  });

  it('a keyword run of a customer known only by a WhatsApp username (a business-scoped user id) answers them by that id, updates their contact and is listed with it', async () => {
    const keyword = `JOIN${Date.now() % 100000}`;
    await createWorkflow(t, account.token, {
      trigger: { type: 'keyword', keywords: [keyword] },
      startNodeId: 'welcome',
      nodes: [
        { id: 'welcome', type: 'send_session_message', text: 'Welcome, {{contact.name}}', next: 'note' },
        { id: 'note', type: 'update_contact', fields: { custom_joined: 'yes' }, next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    const userId = `US.${Date.now()}${Math.floor(Math.random() * 1000)}`;
    await h().userWrites(account, userId, keyword);
    const [run] = await eventually(async () => {
      const rows = await t.db.query(
        `SELECT id, contact_phone FROM workflow_runs WHERE account_id = $1 AND contact_phone = $2`,
        [account.accountId, userId],
      );
      return rows.length ? rows : null;
    }, 15_000);
    const done = await waitForRun(t, account.token, run.id, ['completed', 'failed'], 15_000);
    expect(done.status).toBe('completed');
    const sent = await eventually(async () => (await h().received(account, userId)).at(0), 15_000, 'the welcome');
    expect(sent.payload).toMatchObject({ recipient: userId, type: 'text', text: { body: 'Welcome, Ann' } });
    // the contact known by that id got the field (the step failed: "no contact with phone number US…")
    const [contact] = await t.db.query(
      `SELECT id, custom_fields FROM contacts WHERE account_id = $1 AND whatsapp_user_id = $2`,
      [account.accountId, userId],
    );
    expect(contact.custom_fields).toMatchObject({ custom_joined: 'yes' });
    const listed = await t.http.get(`/v1/workflow-runs?contact_id=${contact.id}`, { token: account.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r: any) => r.runId)).toEqual([run.id]);
  });

  it('a session message step the platform would refuse (a button title over 20 characters) fails the run naming the field', async () => {
    const phone = h().customer();
    await h().customerWritesStored(account, phone, 'hi');
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'ask',
      nodes: [
        {
          id: 'ask',
          type: 'send_session_message',
          to: '{{payload.phone}}',
          text: 'Shall we book it?',
          buttons: [{ text: '{{payload.label}}' }], // known only when the run sends it
          next: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, {
      phone: `+${phone}`,
      label: 'Yes, please book it for me now',
    });
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.error ?? run.history)).toContain('buttons[0].text is required, at most 20 characters');
    expect(await h().received(account, phone)).toEqual([]);
  });

  it('a payload phone written with 00 and spaces binds the customer as the platform names them; system, revoke, edit and reaction removals do not resume the run', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, definition(ask, thanks, sorry));
    const phone = h().customer(); // e.g. 4917…: the payload writes it as 0049 17…
    const written = `00${phone.slice(0, 2)} ${phone.slice(2, 5)} ${phone.slice(5)}`;
    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: written, name: 'Ann' });
    expect(started.status).toBe(200);
    await eventually(
      async () => (await h().received(account, phone)).find((m) => m.payload.template?.name === ask),
      15_000,
      'the first template',
    );
    await waitForRun(t, account.token, started.body.runId, ['waiting']);

    // what the platform reports but the customer did not write to us
    for (const name of [
      'message-system-number-changed',
      'message-revoke',
      'message-edit',
      'message-reaction-removed',
    ]) {
      const body = readFileSync(join(__dirname, '..', 'fixtures', 'meta', `${name}.json`), 'utf8');
      const payload = JSON.stringify(JSON.parse(body).payload)
        .split('106540352242922')
        .join(account.messagingPhoneId)
        .split('16505551234')
        .join(phone)
        .split('wamid.HBgL')
        .join(`wamid.${name}-`);
      const res = await t.http.request('POST', '/webhooks/whatsapp', {
        body: payload,
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': computeSignature(Buffer.from(payload), t.config.WHATSAPP_APP_SECRET),
        },
      });
      expect(res.status).toBe(200);
      await eventually(
        async () =>
          (await t.db.query('SELECT processed_at FROM platform_webhook_events WHERE id = $1', [res.body.eventId]))[0]
            ?.processed_at,
        10_000,
        `${name} processed`,
      );
    }
    expect((await waitForRun(t, account.token, started.body.runId, ['waiting'])).status).toBe('waiting');

    await h().customerWrites(account, phone, 'yes');
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run).toMatchObject({ status: 'completed', reply: { text: 'yes' }, contact: { phone } });
  });

  it("a trigger_campaign step sends the campaign to the run's contact with its own variables", async () => {
    const { approvedTemplate, body } = h();
    const offer = await approvedTemplate(account, [body('Hi {{name}}, here is your offer.', { name: 'Ann' })]);
    const campaign = await t.http.post(
      '/v2/campaigns',
      {
        name: 'Follow-up offer',
        messagingPhoneId: account.messagingPhoneId,
        templateName: offer,
        variables: { name: 'there' },
      },
      { token: account.token },
    );
    expect(campaign.status).toBe(201);
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'offer',
      nodes: [
        {
          id: 'offer',
          type: 'trigger_campaign',
          campaignId: String(campaign.body.data.campaign_id),
          contact: {
            phoneNumber: '{{payload.phone}}',
            name: '{{payload.name}}',
            variables: { name: '{{payload.name}}' },
          },
          next: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const phone = h().customer();
    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone, name: 'Cleo' });
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 15_000);
    expect(run.status).toBe('completed');
    const sent = await eventually(
      async () => (await h().received(account, phone)).find((m) => m.payload.template?.name === offer),
      15_000,
      'the campaign message',
    );
    expect(sent.payload.template.components[0].parameters[0]).toMatchObject({ type: 'text', text: 'Cleo' });
    const [{ n }] = await t.db.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [
      campaign.body.data.campaign_id,
    ]);
    expect(n).toBe(1);
  });

  it('no reply before the timeout takes the timeout branch', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, definition(ask, thanks, sorry, '2s'));
    const phone = h().customer();
    const started = await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone, name: 'Bo' });
    const run = await waitForRun(t, account.token, started.body.runId, ['completed', 'failed'], 20_000);
    expect(run.status).toBe('completed');
    const names = (
      await eventually(async () => {
        const got = await h().received(account, phone);
        return got.length >= 2 ? got : null;
      })
    ).map((m: any) => m.payload.template?.name);
    expect(names).toEqual([ask, sorry]);
  });

  it('selects the driver under test; /health/ready reports it up (Temporal: with its polling workers)', async () => {
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(200);
    // Temporal: also the worker's side, how many workers poll the task queue (this test's in-process worker).
    expect(ready.body.info.workflowEngine).toEqual(
      driver === 'temporal' ? { status: 'up', driver, workers: 1 } : { status: 'up', driver },
    );
  });

  it('a delay, then a template: sent after the delay, once', async () => {
    const { approvedTemplate, body } = h();
    const later = await approvedTemplate(account, [body('Your parcel is on its way.')]);
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'pause',
      nodes: [
        { id: 'pause', type: 'delay', duration: '1s', next: 'send' },
        { id: 'send', type: 'send_template', templateName: later, to: '{{payload.phone}}', next: 'done' },
        { id: 'done', type: 'end' },
      ],
    });
    const phone = h().customer();
    const startedAt = Date.now();
    const { runId } = (await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone })).body;
    // (its wait may end before a poll sees it on a slow machine: the history below shows the timer fired)
    const run = await waitForRun(t, account.token, runId, ['completed', 'failed'], 15_000);
    expect(run.status).toBe('completed');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(run.history.map((s: any) => `${s.nodeId}:${s.outcome}`)).toEqual([
      'pause:timer_fired',
      'send:completed',
      'done:end',
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await h().received(account, phone)).map((m: any) => m.payload.template?.name)).toEqual([later]);
  });

  it('a reply that arrives before the run reaches its wait (during a delay) is not kept; the next reply resumes the run', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'pause',
      nodes: [{ id: 'pause', type: 'delay', duration: '5s', next: 'ask' }, ...definition(ask, thanks, sorry).nodes],
    });
    const phone = h().customer();
    const { runId } = (await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone, name: 'Di' })).body;
    expect((await waitForRun(t, account.token, runId, ['waiting'], 15_000)).waitingFor).toMatchObject({
      kind: 'timer',
      nodeId: 'pause',
    });
    // too early: the run waits on its delay, not for a reply (5 s: the reply is stored well before it ends)
    await h().customerWritesStored(account, phone, 'yes');
    await eventually(
      async () => (await h().received(account, phone)).find((m) => m.payload.template?.name === ask),
      15_000,
      'the question',
    );
    const asking = await waitForRun(t, account.token, runId, ['waiting'], 15_000);
    await new Promise((r) => setTimeout(r, 500));
    expect((await waitForRun(t, account.token, runId, ['waiting'])).waitingFor).toMatchObject({
      kind: 'reply',
      nodeId: 'wait',
    });
    expect(asking.reply ?? null).toBeNull();
    await h().customerWrites(account, phone, 'no');
    const run = await waitForRun(t, account.token, runId, ['completed', 'failed'], 15_000);
    expect(run).toMatchObject({ status: 'completed', reply: { text: 'no' } });
    const names = (
      await eventually(async () => {
        const got = await h().received(account, phone);
        return got.length >= 2 ? got : null;
      })
    ).map((m: any) => m.payload.template?.name);
    expect(names).toEqual([ask, sorry]);
  });

  it('webhook retries with the same Idempotency-Key start one run that sends once', async () => {
    const { ask, thanks, sorry } = await templates();
    const wf = await createWorkflow(t, account.token, definition(ask, thanks, sorry));
    const phone = h().customer();
    const key = `order-${phone}`;
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        t.http.post(
          `/webhook/workflow/${wf.identifier}`,
          { phone, name: 'Ed' },
          { headers: { 'Idempotency-Key': key } },
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const runId = answers[0].body.runId;
    expect(answers.map((a) => a.body.runId)).toEqual([runId, runId, runId]);
    await waitForRun(t, account.token, runId, ['waiting'], 15_000);
    const late = await t.http.post(
      `/webhook/workflow/${wf.identifier}`,
      { phone, name: 'Ed' },
      { headers: { 'Idempotency-Key': key } },
    );
    expect(late.body.runId).toBe(runId);
    await new Promise((r) => setTimeout(r, 500));
    expect((await h().received(account, phone)).map((m: any) => m.payload.template?.name)).toEqual([ask]);
    expect(
      (await t.db.query('SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1', [wf.id]))[0].n,
    ).toBe(1);
  });
});
