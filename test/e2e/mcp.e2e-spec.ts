import { JwtService } from '@nestjs/jwt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createWorkflow, simpleDefinition } from '../helpers/automations';
import { mcpPost } from '../helpers/mcp';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

const ALL_TOOLS = [
  'create_contact',
  'get_account',
  'get_campaign_progress',
  'get_conversation_messages',
  'get_template',
  'get_workflow_run',
  'list_campaigns',
  'list_conversations',
  'list_templates',
  'list_workflows',
  'search_contacts',
  'send_session_message',
  'send_template_message',
  'start_workflow',
  'trigger_campaign',
  'update_contact',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The MCP server at POST /mcp (docs/mcp.md), driven by the official SDK's Client over Streamable HTTP against the real
 * app, worker and Cloud API sandbox. The MCP rate limit is the default (60 per minute per Client ID).
 */
describe('MCP server (POST /mcp)', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let h: ReturnType<typeof messagingHelpers>;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startTestApp(
      {
        RATE_LIMIT_PER_MINUTE: '100000',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        SEND_WAIT_TIMEOUT_MS: '15000',
        MCP_ALLOWED_ORIGINS: 'http://localhost:6274',
      },
      { worker: true },
    );
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 20, delivered: 60, read: 120 }, autoReview: false });
    h = messagingHelpers(t, () => sandbox);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await sandbox.close();
    await t.close();
  });

  const newAccount = () => t.createAccount({ apiBaseUrl: sandbox.url });

  async function connect(token: string, headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'switchboard-e2e', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: token, ...headers } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const text = (result: CallToolResult) =>
    (result.content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');
  const data = (result: CallToolResult) => result.structuredContent as Record<string, any>;

  /** One JSON-RPC request over plain HTTP (what curl would send). */
  const rawPost = (headers: Record<string, string>, body?: unknown) => mcpPost(t.url, headers, body);

  async function withGrants(account: TestAccount, grants: string[]): Promise<string> {
    await t.db.query(`UPDATE api_clients SET grants = $2 WHERE client_id = $1`, [account.clientId, grants]);
    const auth = await t.http.post('/v1/authenticate', undefined, {
      headers: { clientid: account.clientId, clientsecret: account.clientSecret },
    });
    return auth.body.token;
  }

  const messageCount = async (account: TestAccount) =>
    (
      await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'outbound'`, [
        account.accountId,
      ])
    )[0].n as number;

  describe('tools by grant', () => {
    it('a client with every grant lists every tool, with annotations and input schemas', async () => {
      const account = await newAccount();
      const client = await connect(account.token);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
      expect(byName.list_templates.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
      });
      expect(byName.send_template_message.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
      });
      expect(byName.update_contact.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.send_template_message.inputSchema.required).toEqual(['to', 'template']);
      expect(byName.trigger_campaign.inputSchema.required).toEqual(['campaign_id', 'contacts', 'idempotency_key']);
      for (const tool of tools) expect(tool.description!.length).toBeGreaterThan(40);
    });

    it('a client with only /contacts sees only the contact tools and cannot call the others; one with no tool grant sees none', async () => {
      const account = await newAccount();
      const client = await connect(await withGrants(account, ['/contacts']));
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['create_contact', 'search_contacts', 'update_contact']);

      const denied = await call(client, 'send_template_message', { to: '+4915112345678', template: 'anything' });
      expect(denied.isError).toBe(true);
      expect(text(denied)).toBe('Unauthorized to make this request (required grant: /send-message)');
      expect(data(denied)).toEqual({ error: 'Unauthorized to make this request', required_grant: '/send-message' });
      expect(await messageCount(account)).toBe(0);

      // the same in a batch: the ungranted call says which grant it needs, the granted one runs
      const batch = await rawPost({ authorization: await withGrants(account, ['/contacts']) }, [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'send_template_message', arguments: { to: '+4915112345678', template: 'anything' } },
        },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_contacts', arguments: {} } },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
      ]);
      expect(batch.status).toBe(200);
      const [deniedInBatch, searched, unknown] = (await batch.json()) as Array<{ id: number; result: any }>;
      expect(deniedInBatch.result).toMatchObject({
        isError: true,
        structuredContent: { error: 'Unauthorized to make this request', required_grant: '/send-message' },
      });
      expect(searched.result.isError).toBeFalsy();
      expect(unknown.result).toMatchObject({
        isError: true,
        content: [{ text: expect.stringMatching(/no_such_tool/) }],
      });
      // a batch that lists tools beside such a call: the list holds the granted tools only
      const listed = await rawPost({ authorization: await withGrants(account, ['/contacts']) }, [
        { jsonrpc: '2.0', id: 'list', method: 'tools/list', params: {} },
        {
          jsonrpc: '2.0',
          id: 'call',
          method: 'tools/call',
          params: { name: 'send_template_message', arguments: { to: '+4915112345678', template: 'anything' } },
        },
      ]);
      const [list] = (await listed.json()) as Array<{ result: any }>;
      expect(list.result.tools.map((tool: any) => tool.name).sort()).toEqual([
        'create_contact',
        'search_contacts',
        'update_contact',
      ]);
      expect(await messageCount(account)).toBe(0);

      const flowsOnly = await connect(await withGrants(await newAccount(), ['/flow']));
      expect((await flowsOnly.listTools()).tools).toEqual([]);

      const created = await call(client, 'create_contact', { contact_number: '+1 (555) 010-2030', name: 'Ada' });
      expect(created.isError).toBeFalsy();
      expect(data(created)).toMatchObject({
        created: true,
        message: 'Created a new contact',
        contact: { name: 'Ada', contact_number: '15550102030' },
      });
    });
  });

  describe('sending', () => {
    let account: TestAccount;
    let client: Client;
    let template: string;

    beforeAll(async () => {
      account = await newAccount();
      template = await h.approvedTemplate(account, [h.body('Hi {{name}}, your order ships today.', { name: 'Ann' })]);
      client = await connect(account.token);
    });

    it('send_template_message returns the message id; the platform receives exactly one message, also when the agent retries with the same key', async () => {
      const to = h.customer();
      const args = { to: `+${to}`, template, variables: { name: 'Ann' }, idempotency_key: `order-${to}` };
      const first = await call(client, 'send_template_message', args);
      expect(first.isError).toBeFalsy();
      expect(data(first).messageId).toMatch(UUID);
      expect(data(first)).toMatchObject({
        status: expect.stringMatching(/^(accepted|sent|delivered|read)$/),
        template,
        contact: { contact_number: to },
      });
      expect(text(first)).toContain(data(first).messageId);
      const received = await h.received(account, to);
      expect(received).toHaveLength(1);
      expect(received[0].payload).toMatchObject({ type: 'template', to, template: { name: template } });

      const retry = await call(client, 'send_template_message', args);
      expect(retry.isError).toBeFalsy();
      expect(data(retry).messageId).toBe(data(first).messageId);
      // the same key for another customer is refused, not answered with the first message as if sent
      const other = h.customer();
      const reused = await call(client, 'send_template_message', { ...args, to: `+${other}` });
      expect(reused.isError).toBe(true);
      expect(text(reused)).toBe(
        `idempotency_key order-${to} was already used for another message to ${to}: use a new key for a new message`,
      );
      expect(await h.received(account, other)).toHaveLength(0);
      await new Promise((r) => setTimeout(r, 300));
      expect(await h.received(account, to)).toHaveLength(1);
      expect(
        (
          await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND recipient = $2`, [
            account.accountId,
            to,
          ])
        )[0].n,
      ).toBe(1);
    });

    it("send_template_message fills variables given under the template's own names in the template's order", async () => {
      const own = await newAccount();
      const named = await h.approvedTemplate(own, [
        h.body('Order {{order}} for {{first}} ships today.', { order: 'A-1', first: 'Ann' }),
      ]);
      const to = h.customer();
      const sent = await call(await connect(own.token), 'send_template_message', {
        to: `+${to}`,
        template: named,
        variables: { first: 'Ann', order: 'A-1' },
      });
      expect(sent.isError).toBeFalsy();
      const [received] = await h.received(own, to);
      expect(received.payload.template.components.find((c: any) => c.type === 'body').parameters).toEqual([
        { type: 'text', text: 'A-1', parameter_name: 'order' },
        { type: 'text', text: 'Ann', parameter_name: 'first' },
      ]);
    });

    it('without messagingPhoneId a send goes from the first connected number, not a disconnected first one', async () => {
      const own = await newAccount();
      const name = await h.approvedTemplate(own, [h.body('Hi {{name}}, your order ships today.', { name: 'Ann' })]);
      const [first] = await t.db.query(`SELECT id::text FROM phone_numbers WHERE messaging_phone_id = $1`, [
        own.messagingPhoneId,
      ]);
      const [second] = await t.db.query(
        `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                    api_base_url, api_version, access_token_encrypted, messages_per_second)
         SELECT account_id, messaging_phone_id || '9', display_phone_number, verified_name, business_account_id,
                api_base_url, api_version, access_token_encrypted, messages_per_second
           FROM phone_numbers WHERE id = $1 RETURNING id::text`,
        [first.id],
      );
      await t.db.query(`UPDATE phone_numbers SET status = 'DISCONNECTED' WHERE id = $1`, [first.id]);
      const ownClient = await connect(own.token);
      const to = h.customer();
      const sent = await eventually(async () => {
        const result = await call(ownClient, 'send_template_message', {
          to: `+${to}`,
          template: name,
          variables: { name: 'Ann' },
        });
        return result.isError ? null : result;
      }, 5_000);
      const [row] = await t.db.query(`SELECT phone_number_id::text FROM messages WHERE id = $1`, [
        data(sent).messageId,
      ]);
      expect(row.phone_number_id).toBe(second.id);
    });

    it('send_template_message sends a carousel: carousel_data gives each card its image and the dynamic part of its link', async () => {
      const card = (n: number) => ({
        header: { type: 'image', image: { link: `https://cdn.example.com/p${n}.jpg` } },
        body: { type: 'body', parameters: [{ type: 'text', text: `Product ${n}` }] },
        buttons: {
          type: 'button',
          parameters: [{ type: 'cta', cta: { text: 'URL', value: 'Buy', url: 'https://shop.example.com/p/{{1}}' } }],
        },
      });
      const own = await newAccount(); // its own templates: the suite's account lists exactly its own
      const ownClient = await connect(own.token);
      const name = await h.approvedTemplate(own, [
        h.body('Our picks for you'),
        { type: 'carousel', components: [card(1), card(2)] },
      ]);
      const to = h.customer();
      const missing = await call(ownClient, 'send_template_message', {
        to,
        template: name,
        carousel_data: [{ cta_link: 'a-1' }, {}],
      });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toBe(
        `carousel_data[1].cta_link is required: the URL button of card 2 of template ${name} has a dynamic part`,
      );
      const sent = await call(ownClient, 'send_template_message', {
        to,
        template: name,
        carousel_data: [{ media_url: 'https://cdn.example.com/today.jpg', cta_link: 'a-1' }, { cta_link: 'b-2' }],
      });
      expect(sent.isError).toBeFalsy();
      const [got] = await h.received(own, to);
      const carousel = got.payload.template.components.find((c: any) => c.type === 'carousel');
      expect(
        carousel.cards.map((c: any) => [c.components[0].parameters[0].image.link, c.components[1].parameters[0].text]),
      ).toEqual([
        ['https://cdn.example.com/today.jpg', 'a-1'],
        ['https://cdn.example.com/p2.jpg', 'b-2'],
      ]);
    });

    it('send_session_message answers a customer known only by a business-scoped user id inside its window', async () => {
      const userId = `DE.${Date.now()}${Math.floor(Math.random() * 1000)}`;
      await h.userWrites(account, userId, 'Hallo');
      // the window is open once the worker stored the inbound message (polled in the database: tool calls are rate limited)
      await eventually(async () => {
        const [row] = await t.db.query('SELECT 1 FROM customer_windows WHERE customer = $1', [userId]);
        return row ?? null;
      }, 10_000);
      // list_conversations shows how to reach that customer (it said "+null") and that its window is open
      const listed = await call(client, 'list_conversations', { pageSize: 100 });
      expect(text(listed)).toMatch(
        new RegExp(`Ann user id ${userId.replace('.', '\\.')} \\(contact_id \\d+, 1 unread, window open`),
      );
      expect(data(listed).conversations.find((c: any) => c.contact.whatsapp_user_id === userId).contact).toMatchObject({
        contact_number: null,
        whatsapp_user_id: userId,
      });
      const sent = await call(client, 'send_session_message', { to: userId, message: 'Hi Ann' });
      expect(sent.isError).toBeFalsy();
      const [row] = await t.db.query(`SELECT recipient, body FROM messages WHERE id = $1`, [data(sent).messageId]);
      expect(row).toEqual({ recipient: userId, body: 'Hi Ann' });
    });

    it('send_session_message outside the 24-hour window is an isError result that suggests a template, and stores nothing', async () => {
      const to = h.customer();
      const before = await messageCount(account);
      const result = await call(client, 'send_session_message', { to, message: 'Hello?' });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/Outside the 24-hour customer-care window/);
      expect(text(result)).toContain('send_template_message');
      expect(text(result)).toContain(template);
      expect(data(result)).toMatchObject({
        code: 'window_closed',
        window: { open: false },
        suggestion: { tool: 'send_template_message' },
      });
      expect(await messageCount(account)).toBe(before);
      expect(
        await t.db.query(`SELECT 1 FROM contacts WHERE account_id = $1 AND contact_number = $2`, [
          account.accountId,
          to,
        ]),
      ).toHaveLength(0);
      expect(await h.received(account, to)).toHaveLength(0);
    });

    it('inside the window: send_session_message with quick replies reaches the platform; list_conversations shows the open window', async () => {
      const to = h.customer();
      await h.customerWrites(account, to, 'Where is my order?');
      // Polled through REST: every MCP request counts against this client's 60 per minute.
      await eventually(
        async () => {
          const res = await t.http.get('/v2/conversations', { token: account.token });
          return res.body.data.conversations.some((c: any) => c.contact.contact_number === to && c.window.open);
        },
        10_000,
        'the inbound message to open the window',
      );
      const listed = data(await call(client, 'list_conversations', {}));
      const conversation = listed.conversations.find((c: any) => c.contact.contact_number === to);
      expect(conversation.window).toEqual({ open: true, expires_at: expect.any(String) });

      const reply = {
        to,
        message: 'Shipped today. Track it?',
        quick_replies: ['Yes', 'No'],
        idempotency_key: `reply-${to}`,
      };
      const sent = await call(client, 'send_session_message', reply);
      expect(sent.isError).toBeFalsy();
      expect(data(sent)).toMatchObject({
        message: 'Message sent to whatsapp successfully!',
        messageId: expect.stringMatching(UUID),
      });
      const [got] = await h.received(account, to);
      expect(got.payload.interactive).toMatchObject({ type: 'button', body: { text: 'Shipped today. Track it?' } });
      const retry = await call(client, 'send_session_message', reply);
      expect(data(retry).messageId).toBe(data(sent).messageId);
      // the window closes; a retry of the message sent while it was open still answers it (and sends nothing)
      await t.db.query(
        `UPDATE customer_windows SET last_inbound_at = now() - interval '25 hours' WHERE customer = $1`,
        [to],
      );
      const late = await call(client, 'send_session_message', reply);
      expect(late.isError).toBeFalsy();
      expect(data(late).messageId).toBe(data(sent).messageId);
      expect(text(late)).toMatch(/window closed at /);
      await new Promise((r) => setTimeout(r, 300));
      expect(await h.received(account, to)).toHaveLength(1);

      const messages = data(
        await call(client, 'get_conversation_messages', { contact_id: conversation.contact.contact_id }),
      );
      expect(messages.messages.map((m: any) => m.direction)).toEqual(['outbound', 'inbound']);
    });

    describe('bad arguments', () => {
      let badArgs: Client;
      let own: TestAccount;
      beforeAll(async () => {
        own = await newAccount(); // its own Client ID: these calls do not eat into the limit of the suite's account
        badArgs = await connect(own.token);
      });

      it.each([
        ['send_template_message', { to: 'call me', template: 'x' }, /^to must be a phone number with country code/],
        ['send_template_message', { to: '+4915112345678', template: ' ' }, /^template is required/],
        [
          'send_template_message',
          { to: '+4915112345678', template: 'x', media_url: 'ftp://x' },
          /^media_url must be a public http\(s\) URL/,
        ],
        [
          'send_template_message',
          { to: '+4915112345678', template: 'x', carousel_data: [{ media_url: 'ftp://x' }] },
          /^carousel_data\[0\]\.media_url must be an http\(s\) URL/,
        ],
        [
          'send_session_message',
          { to: '+4915112345678', message: 'x', quick_replies: ['a', 'b', 'c', 'd'] },
          /^quick_replies must have at most 3 items/,
        ],
        [
          'send_session_message',
          { to: '+4915112345678', message: 'x', quick_replies: ['x'.repeat(21)] },
          /^quick_replies\[0\] is required, at most 20 characters/,
        ],
        ['search_contacts', { pageSize: 500 }, /^pageSize must be an integer from 1 to 100$/],
        ['list_templates', { page: 0 }, /^page must be an integer from 1 to/],
        ['create_contact', { contact_number: 'abc' }, /^contact_number must be/],
        ['create_contact', { contact_number: '+15550102031', email: 'not-an-email' }, /^email /],
        ['update_contact', { contact_id: 1 }, /^send at least one of: name, email, isBlocked/],
        // a misspelt opt-out was dropped and the call answered "Updated"
        [
          'update_contact',
          { contact_id: 1, name: 'Bo', is_blocked: true },
          /^is_blocked cannot be updated; allowed fields: name, email, isBlocked/,
        ],
        ['trigger_campaign', { campaign_id: 1, contacts: [] }, /idempotency_key/],
        ['get_template', {}, /template_name/],
        ['get_campaign_progress', { campaign_id: 'one' }, /campaign_id/],
      ])('%s %j: isError naming the field', async (tool, args, message) => {
        const result = await call(badArgs, tool, args);
        expect(result.isError).toBe(true);
        expect(text(result)).toMatch(message);
        expect(await messageCount(own)).toBe(0);
      });
    });

    it('campaigns: trigger_campaign sends once per idempotency key; get_campaign_progress follows it', async () => {
      const created = await t.http.post(
        '/v2/campaigns',
        {
          name: 'Spring',
          messagingPhoneId: account.messagingPhoneId,
          templateName: template,
          variables: { name: 'there' },
        },
        { token: account.token },
      );
      expect(created.status).toBe(201);
      const campaignId = created.body.data.campaign_id;
      const to = h.customer();
      const args = {
        campaign_id: campaignId,
        contacts: [{ phoneNumber: `+${to}`, variables: { name: 'Bo' } }],
        idempotency_key: `evt-${to}`,
      };

      const bad = await call(client, 'trigger_campaign', { ...args, contacts: [{ phoneNumber: 'nope' }] });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/^contacts\[0\]\.phoneNumber/);

      const first = await call(client, 'trigger_campaign', args);
      expect(first.isError).toBeFalsy();
      expect(data(first)).toMatchObject({ campaign_id: campaignId, accepted: true, repeated: false });
      await eventually(async () => (await h.received(account, to)).length === 1, 10_000, 'the campaign message');
      const again = await call(client, 'trigger_campaign', args);
      expect(data(again)).toMatchObject({ repeated: true });
      await new Promise((r) => setTimeout(r, 500));
      expect(await h.received(account, to)).toHaveLength(1);

      const progress = data(await call(client, 'get_campaign_progress', { campaign_id: campaignId }));
      expect(progress.campaign.progress).toMatchObject({ recipients: 1 });
      const listed = data(await call(client, 'list_campaigns', {}));
      expect(listed.campaigns.map((c: any) => c.campaign_id)).toContain(campaignId);
    });

    it('workflows: list_workflows, start_workflow (idempotent with a key) and get_workflow_run', async () => {
      const workflow = await createWorkflow(t, account.token, simpleDefinition(), 'Ping');
      expect(data(await call(client, 'list_workflows')).workflows).toEqual([
        { id: workflow.id, name: 'Ping', isActive: true },
      ]);
      const started = await call(client, 'start_workflow', {
        workflow_id: workflow.id,
        payload: { order: { id: '1234' } },
        idempotency_key: 'order-1234',
      });
      expect(started.isError).toBeFalsy();
      const runId = data(started).runId;
      expect(runId).toMatch(UUID);
      const again = await call(client, 'start_workflow', {
        workflow_id: workflow.id,
        payload: { order: { id: '1234' } },
        idempotency_key: 'order-1234',
      });
      expect(data(again)).toMatchObject({ runId, created: false });
      await eventually(
        async () =>
          (await t.http.get(`/v1/workflow-runs/${runId}`, { token: account.token })).body.data?.status === 'completed',
        10_000,
        'the run to complete',
      );
      const run = data(await call(client, 'get_workflow_run', { run_id: runId })).run;
      expect(run).toMatchObject({ runId, status: 'completed', payload: { order: { id: '1234' } } });
      // created as a draft and never published: said so (it was "Workflow ID not found", right after finding it)
      const draft = await createWorkflow(
        t,
        account.token,
        { asDraft: true, trigger: { type: 'webhook' }, startNodeId: '', nodes: [] },
        'Unpublished',
      );
      const refused = await call(client, 'start_workflow', { workflow_id: draft.id });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toBe(`Workflow ${draft.id} is not published yet: publish its draft before starting it`);
    });

    it('templates, account, resources and the draft_template prompt', async () => {
      const listed = data(await call(client, 'list_templates', { status: 'APPROVED' }));
      expect(listed.templates).toEqual([
        expect.objectContaining({
          template_name: template,
          status: 'APPROVED',
          variables: ['name'],
          preview: 'Hi {{name}}, your order ships today.',
        }),
      ]);
      const one = data(await call(client, 'get_template', { template_name: template }));
      expect(one.template).toMatchObject({ template_name: template, messagingPhoneId: account.messagingPhoneId });

      // the list makes its previews in SQL, get_template from the components: the same text (header, body, footer)
      const full = await h.approvedTemplate(account, [
        { type: 'header', parameters: [{ type: 'text', text: 'Your order' }] },
        h.body('Hi {{name}}, it ships today.', { name: 'Ann' }),
        { type: 'footer', parameters: [{ type: 'text', text: 'Reply STOP to opt out' }] },
        { type: 'button', parameters: [{ type: 'quick_reply', quick_reply: { value: 'Track' } }] },
      ]);
      const preview = 'Your order\nHi {{name}}, it ships today.\nReply STOP to opt out';
      const fullListed = data(await call(client, 'list_templates', { search: full })).templates;
      expect(fullListed).toEqual([expect.objectContaining({ template_name: full, preview })]);
      expect(data(await call(client, 'get_template', { template_name: full })).template.preview).toBe(preview);
      const missing = await call(client, 'get_template', { template_name: 'nope' });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toBe('Template not found');

      const acct = data(await call(client, 'get_account'));
      expect(acct.account.phone_numbers).toEqual([
        expect.objectContaining({
          messagingPhoneId: account.messagingPhoneId,
          messages_per_second: expect.any(Number),
          quality_rating: 'GREEN',
          messaging_limit_tier: 'TIER_UNLIMITED',
        }),
      ]);
      expect(JSON.stringify(acct)).not.toContain('callback_signing_secret');

      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri).sort()).toEqual(['switchboard://account', 'switchboard://templates']);
      const templates = await client.readResource({ uri: 'switchboard://templates' });
      expect(JSON.parse((templates.contents[0] as { text: string }).text)).toEqual([
        expect.objectContaining({ template_name: template }),
        expect.objectContaining({ template_name: full, preview }),
      ]);

      const prompt = await client.getPrompt({ name: 'draft_template', arguments: { purpose: 'order shipped' } });
      const promptText = (prompt.messages[0].content as { text: string }).text;
      expect(promptText).toContain('POST /templates/create');
      expect(promptText).toContain(account.messagingPhoneId);
    });
  });

  describe('authentication, origin and methods', () => {
    it('no token: the client cannot connect; a raw POST gets 401 with WWW-Authenticate: Bearer', async () => {
      const client = new Client({ name: 'anonymous', version: '1.0.0' });
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)))).rejects.toThrow();
      const res = await rawPost({});
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await res.json()).toEqual({ message: 'jwt must be provided' });
    });

    it('a bad token: 401 invalid_token; an expired one: 401 jwt expired, as REST; with or without Bearer', async () => {
      const account = await newAccount();
      const bad = await rawPost({ authorization: 'not-a-jwt' });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);

      const expired = t.app.get(JwtService).sign({
        typ: 'access',
        sub: account.clientId,
        acc: String(account.accountId),
        grants: ['/account'],
        exp: Math.floor(Date.now() / 1000) - 10,
      });
      const res = await rawPost({ authorization: expired });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ message: 'jwt expired' });
      expect(res.headers.get('www-authenticate')).toContain('error_description="jwt expired"');
      const rest = await t.http.get('/account/get', { token: expired });
      expect(rest.status).toBe(401);
      expect(rest.body.message).toBe('jwt expired');

      for (const authorization of [account.token, `Bearer ${account.token}`]) {
        const ok = await rawPost({ authorization });
        expect(ok.status).toBe(200);
        expect(((await ok.json()) as any).result.tools).toHaveLength(ALL_TOOLS.length);
      }
    });

    it('Origin: a foreign browser origin is refused with 403; a configured one (MCP_ALLOWED_ORIGINS) is accepted', async () => {
      const account = await newAccount();
      const foreign = await rawPost({ authorization: account.token, origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect(await foreign.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
      const inspector = await rawPost({ authorization: account.token, origin: 'http://localhost:6274' });
      expect(inspector.status).toBe(200);
    });

    it('GET and DELETE /mcp answer 405 (stateless server)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${t.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
    });

    it("the transport's own answers: 406 without text/event-stream in Accept, 400 for an unsupported protocol version, 202 for a notification, a batch answered in order", async () => {
      const { token } = await newAccount();
      const notAcceptable = await rawPost({ authorization: token, accept: 'application/json' });
      expect(notAcceptable.status).toBe(406);
      expect(((await notAcceptable.json()) as any).error.message).toBe(
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );

      const badVersion = await rawPost({ authorization: token, 'mcp-protocol-version': '1999-01-01' });
      expect(badVersion.status).toBe(400);
      expect(((await badVersion.json()) as any).error.message).toMatch(/Unsupported protocol version/);

      const notification = await rawPost(
        { authorization: token },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      );
      expect(notification.status).toBe(202);
      expect(await notification.text()).toBe('');

      const batch = await rawPost({ authorization: token }, [
        { jsonrpc: '2.0', id: 'a', method: 'tools/list', params: {} },
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
      ]);
      expect(batch.status).toBe(200);
      expect(batch.headers.get('content-type')).toMatch(/^application\/json/);
      const answers = (await batch.json()) as Array<{ id: string; result: any }>;
      expect(answers.map((a) => a.id)).toEqual(['a', 'b']);
      expect(answers[0].result.tools.length).toBeGreaterThan(0);
      expect(answers[1].result).toEqual({});
    });
  });

  it('the 61st MCP request of a client in a minute is 429 with Retry-After; another client and REST calls of the same client are served', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await rawPost({ authorization: a.token })).status);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const limited = await rawPost({ authorization: a.token });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(((await limited.json()) as any).message).toMatch(
      /^Rate limit exceeded: 60 MCP requests per 60 seconds\. Retry after \d+ seconds\.$/,
    );

    expect((await rawPost({ authorization: b.token })).status).toBe(200);
    expect((await t.http.get('/account/get', { token: a.token })).status).toBe(200);
  });

  it('a batch counts each of its messages against the limit: 30 batches of two are the 60, the 31st is 429 whole', async () => {
    const { token } = await newAccount();
    const pair = (i: number) => [
      { jsonrpc: '2.0', id: `${i}a`, method: 'ping' },
      { jsonrpc: '2.0', id: `${i}b`, method: 'ping' },
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await rawPost({ authorization: token }, pair(i))).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const limited = await rawPost({ authorization: token }, pair(30));
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as any).message).toMatch(/^Rate limit exceeded: 60 MCP requests per 60 seconds\./);
    expect((await rawPost({ authorization: token })).status).toBe(429); // the window is spent, single requests too
  });

  it("account B's agent can never see or touch account A's data, whatever tool it calls", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const template = await h.approvedTemplate(a, [h.body('Hello {{name}}, welcome', { name: 'Ann' })]);
    const customer = h.customer();
    await h.customerWrites(a, customer, 'hi');
    const contactId = await h.contactIdOf(a, customer);
    await t.http.request('PATCH', `/v2/contacts/${contactId}`, { token: a.token, body: { name: 'Customer A' } });
    const campaign = (
      await t.http.post(
        '/v2/campaigns',
        { name: 'A only', messagingPhoneId: a.messagingPhoneId, templateName: template },
        { token: a.token },
      )
    ).body.data;
    const workflow = await createWorkflow(t, a.token, simpleDefinition(), 'A workflow');
    const agentA = await connect(a.token);
    const runId = data(await call(agentA, 'start_workflow', { workflow_id: workflow.id })).runId;
    const aMessages = await messageCount(a);
    const aReceived = (await h.received(a, customer)).length;

    const agentB = await connect(b.token);
    const denied = async (tool: string, args: Record<string, unknown>, message: RegExp) => {
      const result = await call(agentB, tool, args);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(message);
    };

    const account = data(await call(agentB, 'get_account')).account;
    expect(account.id).toBe(Number(b.accountId));
    expect(account.phone_numbers.map((p: any) => p.messagingPhoneId)).toEqual([b.messagingPhoneId]);
    expect(data(await call(agentB, 'list_templates')).total).toBe(0);
    await denied('get_template', { template_name: template }, /^Template not found$/);
    await denied(
      'send_template_message',
      { to: customer, template, messagingPhoneId: a.messagingPhoneId },
      /^Phone number not found/,
    );
    await denied('send_template_message', { to: customer, template, idempotency_key: 'b-1' }, /^No Template found$/);
    await denied(
      'send_session_message',
      { to: customer, message: 'hi', messagingPhoneId: a.messagingPhoneId },
      /^Phone number not found/,
    );
    await denied('send_session_message', { to: customer, message: 'hi' }, /Outside the 24-hour customer-care window/);
    expect(data(await call(agentB, 'search_contacts', { phone: customer })).total).toBe(0);
    expect(data(await call(agentB, 'search_contacts', { search: 'Customer A' })).total).toBe(0);
    await denied(
      'update_contact',
      { contact_id: Number(contactId), name: 'Hijacked', isBlocked: true },
      /^Contact not found$/,
    );
    expect(data(await call(agentB, 'list_conversations')).total).toBe(0);
    await denied('get_conversation_messages', { contact_id: Number(contactId) }, /^Conversation not found$/);
    expect(data(await call(agentB, 'list_campaigns')).total).toBe(0);
    await denied('get_campaign_progress', { campaign_id: campaign.campaign_id }, /^Campaign not found$/);
    await denied(
      'trigger_campaign',
      { campaign_id: campaign.campaign_id, contacts: [{ phoneNumber: customer }], idempotency_key: 'b-2' },
      /^Campaign not found$/,
    );
    expect(data(await call(agentB, 'list_workflows')).workflows).toEqual([]);
    await denied('start_workflow', { workflow_id: workflow.id }, /^Workflow not found$/);
    await denied('get_workflow_run', { run_id: runId }, /^Workflow run not found$/);
    const bContact = data(await call(agentB, 'create_contact', { contact_number: customer, name: 'B own' }));
    expect(bContact).toMatchObject({ created: true, contact: { name: 'B own' } });
    expect(bContact.contact.contact_id).not.toBe(Number(contactId));
    const account_resource = await agentB.readResource({ uri: 'switchboard://account' });
    expect(JSON.parse((account_resource.contents[0] as { text: string }).text).id).toBe(Number(b.accountId));
    expect(
      JSON.parse(
        ((await agentB.readResource({ uri: 'switchboard://templates' })).contents[0] as { text: string }).text,
      ),
    ).toEqual([]);

    // A's records are as they were, and nothing was sent from or for A.
    const [aContact] = await t.db.query(`SELECT name, is_blocked FROM contacts WHERE id = $1`, [contactId]);
    expect(aContact).toEqual({ name: 'Customer A', is_blocked: false });
    expect(await messageCount(a)).toBe(aMessages);
    expect(await messageCount(b)).toBe(0);
    expect(await h.received(a, customer)).toHaveLength(aReceived);
  });
});
