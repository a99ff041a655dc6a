import { orderConfirmationWorkflow } from './__fixtures__/workflows';
import { templateNamesUsed, type WorkflowDefinition } from './definition';
import { formatValidationErrors, validateDefinition, type ValidationError } from './validate';

type AnyDef = Record<string, any>;

/** A definition with one node under test: start → node; every edge name listed in `targets` exists. */
function withNode(node: AnyDef, extraNodes: AnyDef[] = []): AnyDef {
  return {
    trigger: { type: 'webhook' },
    startNodeId: 'n',
    nodes: [{ id: 'n', ...node }, { id: 'a', type: 'end' }, { id: 'b', type: 'end' }, ...extraNodes],
  };
}

function errorsOf(def: unknown): ValidationError[] {
  const result = validateDefinition(def);
  if (result.ok) throw new Error('expected validation to fail');
  return result.errors;
}

function expectError(def: unknown, expected: Partial<ValidationError> & { message?: any }): void {
  expect(errorsOf(def)).toEqual(expect.arrayContaining([expect.objectContaining(expected)]));
}

const validNodes: AnyDef[] = [
  { type: 'send_template', templateName: 't', next: 'a' },
  {
    type: 'send_template',
    templateName: 't',
    to: '{{payload.p}}',
    variables: { name: '{{contact.name}}' },
    mediaUrl: 'https://x/{{payload.f}}',
    next: 'a',
    onError: 'b',
  },
  { type: 'send_session_message', text: 'Hi', next: 'a' },
  {
    type: 'send_session_message',
    to: '{{payload.p}}',
    text: 'Hi',
    buttons: [{ text: 'Yes' }, { text: 'No', payload: 'NO' }],
    next: 'a',
  },
  { type: 'delay', duration: 60, next: 'a' },
  { type: 'delay', duration: '2h', next: 'a' },
  { type: 'wait_for_reply', timeout: '15m', branches: [{ match: { type: 'any' }, next: 'a' }], onTimeout: 'b' },
  { type: 'condition', rules: [{ left: '{{payload.x}}', operator: 'exists', next: 'a' }], else: 'b' },
  {
    type: 'condition',
    rules: [{ left: '{{payload.x}}', operator: 'in', right: ['1', '2'], caseSensitive: true, next: 'a' }],
    else: 'b',
  },
  { type: 'trigger_campaign', campaignId: 12, next: 'a' },
  {
    type: 'trigger_campaign',
    campaignId: 'c-1',
    contact: { phoneNumber: '{{payload.p}}', name: 'n', email: 'e', variables: { custom1: 'v' } },
    next: 'a',
  },
  {
    type: 'http_request',
    method: 'POST',
    url: 'https://api/{{payload.id}}',
    headers: { 'X-Key': 'k' },
    body: { a: ['{{payload.x}}', 1] },
    saveAs: 'res',
    next: 'a',
  },
  { type: 'update_contact', fields: { name: '{{reply.text}}', custom_city: 'Berlin' }, next: 'a' },
  { type: 'end', label: 'Done', description: 'the end', position: { x: 1, y: 2 } },
];

describe('validateDefinition: valid definitions', () => {
  it('accepts the order confirmation workflow', () => {
    const def = orderConfirmationWorkflow();
    expect(validateDefinition(def)).toEqual({ ok: true, definition: def });
  });

  it.each(validNodes.map((n) => [n.type, n]))('accepts a %s node', (_type, node) => {
    const result = validateDefinition(withNode(node));
    expect(result.ok ? [] : result.errors).toEqual([]);
  });

  it('accepts a keyword trigger', () => {
    expect(
      validateDefinition({ ...withNode({ type: 'end' }), trigger: { type: 'keyword', keywords: ['START'] } }).ok,
    ).toBe(true);
  });

  it('accepts unreachable nodes', () => {
    expect(validateDefinition(withNode({ type: 'end' }, [{ id: 'orphan', type: 'end' }])).ok).toBe(true);
  });

  it('accepts loops that pass through a delay or a wait_for_reply', () => {
    const viaDelay = {
      trigger: { type: 'webhook' },
      startNodeId: 's',
      nodes: [
        { id: 's', type: 'send_template', templateName: 't', next: 'd' },
        { id: 'd', type: 'delay', duration: '1h', next: 'c' },
        { id: 'c', type: 'condition', rules: [{ left: '{{vars.x}}', operator: 'exists', next: 'e' }], else: 's' },
        { id: 'e', type: 'end' },
      ],
    };
    expect(validateDefinition(viaDelay).ok).toBe(true);
    const viaWait = {
      trigger: { type: 'webhook' },
      startNodeId: 'w',
      nodes: [
        {
          id: 'w',
          type: 'wait_for_reply',
          timeout: 60,
          branches: [{ match: { type: 'any' }, next: 'w' }],
          onTimeout: 'e',
        },
        { id: 'e', type: 'end' },
      ],
    };
    expect(validateDefinition(viaWait).ok).toBe(true);
  });
});

describe('validateDefinition: errors name the node and field', () => {
  it('rejects non-objects', () => {
    expect(errorsOf(null)).toEqual([{ field: '', message: expect.stringContaining('must be an object') }]);
    expect(errorsOf([])).toHaveLength(1);
    expect(errorsOf('x')).toHaveLength(1);
  });

  it('rejects unknown top-level fields', () => {
    expectError({ ...withNode({ type: 'end' }), extra: 1 }, { field: 'extra', message: 'unknown field' });
  });

  it.each<[string, unknown, string, RegExp]>([
    ['missing trigger', undefined, 'trigger', /is required/],
    ['unknown trigger type', { type: 'cron' }, 'trigger.type', /unknown trigger type "cron"/],
    ['missing trigger type', {}, 'trigger.type', /is required/],
    ['keyword trigger without keywords', { type: 'keyword' }, 'trigger.keywords', /non-empty array/],
    ['keyword trigger with empty keywords', { type: 'keyword', keywords: [] }, 'trigger.keywords', /non-empty array/],
    [
      'keyword trigger with a blank keyword',
      { type: 'keyword', keywords: ['ok', ' '] },
      'trigger.keywords[1]',
      /non-empty string/,
    ],
    ['unknown field on a webhook trigger', { type: 'webhook', secret: 'x' }, 'trigger.secret', /unknown field/],
    [
      'unknown field on a keyword trigger',
      { type: 'keyword', keywords: ['a'], regex: 'x' },
      'trigger.regex',
      /unknown field/,
    ],
  ])('trigger: %s', (_name, trigger, field, message) => {
    expectError({ ...withNode({ type: 'end' }), trigger }, { field, message: expect.stringMatching(message) });
  });

  it('startNodeId must be given and exist', () => {
    const def = withNode({ type: 'end' });
    expectError(
      { ...def, startNodeId: undefined },
      { field: 'startNodeId', message: expect.stringMatching(/is required/) },
    );
    expectError({ ...def, startNodeId: 'ghost' }, { field: 'startNodeId', message: 'unknown node "ghost"' });
  });

  it('nodes must be a non-empty array of objects with an id', () => {
    expectError({ trigger: { type: 'webhook' }, startNodeId: 'x', nodes: [] }, { field: 'nodes' });
    expectError({ trigger: { type: 'webhook' }, startNodeId: 'x' }, { field: 'nodes' });
    expectError(withNode({ type: 'end' }, ['oops' as never]), {
      field: 'nodes[3]',
      message: expect.stringMatching(/must be an object/),
    });
    expectError(withNode({ type: 'end' }, [{ type: 'end' }]), {
      field: 'nodes[3].id',
      message: expect.stringMatching(/is required/),
    });
  });

  it('rejects too many nodes', () => {
    const nodes = Array.from({ length: 501 }, (_, i) => ({ id: `n${i}`, type: 'end' }));
    expectError(
      { trigger: { type: 'webhook' }, startNodeId: 'n0', nodes },
      { field: 'nodes', message: expect.stringMatching(/maximum is 500/) },
    );
  });

  it('missing and unknown node type', () => {
    expectError(withNode({}), { nodeId: 'n', field: 'type', message: expect.stringMatching(/is required/) });
    expectError(withNode({ type: 'send_sms' }), {
      nodeId: 'n',
      field: 'type',
      message: expect.stringMatching(/unknown node type "send_sms"/),
    });
  });

  it('duplicate ids', () => {
    expectError(withNode({ type: 'end' }, [{ id: 'a', type: 'end' }]), {
      nodeId: 'a',
      field: 'id',
      message: 'duplicate node id "a"',
    });
  });

  it('unknown fields on a node', () => {
    expectError(withNode({ type: 'delay', duration: 5, next: 'a', nxt: 'b' }), {
      nodeId: 'n',
      field: 'nxt',
      message: 'unknown field for a delay node',
    });
  });

  it.each<[string, AnyDef, string, RegExp]>([
    // send_template
    ['send_template without templateName', { type: 'send_template', next: 'a' }, 'templateName', /is required/],
    ['send_template without next', { type: 'send_template', templateName: 't' }, 'next', /is required/],
    [
      'send_template with empty to',
      { type: 'send_template', templateName: 't', to: ' ', next: 'a' },
      'to',
      /must not be empty/,
    ],
    [
      'send_template with non-string to',
      { type: 'send_template', templateName: 't', to: 5, next: 'a' },
      'to',
      /must be a string/,
    ],
    [
      'send_template with bad variables',
      { type: 'send_template', templateName: 't', variables: ['x'], next: 'a' },
      'variables',
      /must be an object/,
    ],
    [
      'send_template with non-string variable',
      { type: 'send_template', templateName: 't', variables: { name: 1 }, next: 'a' },
      'variables.name',
      /must be a string/,
    ],
    [
      'send_template with unclosed variable template',
      { type: 'send_template', templateName: 't', variables: { name: '{{contact.name' }, next: 'a' },
      'variables.name',
      /invalid template: unclosed/,
    ],
    [
      'send_template with integer-like variable key',
      { type: 'send_template', templateName: 't', variables: { name: 'a', '1': 'b' }, next: 'a' },
      'variables.1',
      /integer-like keys/,
    ],
    [
      'send_template with invalid mediaUrl template',
      { type: 'send_template', templateName: 't', mediaUrl: '{{payload.url', next: 'a' },
      'mediaUrl',
      /unclosed/,
    ],
    [
      'send_template with empty onError',
      { type: 'send_template', templateName: 't', next: 'a', onError: '' },
      'onError',
      /must be a node id/,
    ],
    // send_session_message
    ['session message without text', { type: 'send_session_message', next: 'a' }, 'text', /is required/],
    [
      'session message with empty text',
      { type: 'send_session_message', text: '', next: 'a' },
      'text',
      /must not be empty/,
    ],
    [
      'session message with unclosed text',
      { type: 'send_session_message', text: 'Hi {{contact.name', next: 'a' },
      'text',
      /unclosed/,
    ],
    [
      'session message with unknown root',
      { type: 'send_session_message', text: 'Hi {{customer.name}}', next: 'a' },
      'text',
      /unknown root "customer"/,
    ],
    [
      'session message with 4 buttons',
      {
        type: 'send_session_message',
        text: 'x',
        buttons: [{ text: '1' }, { text: '2' }, { text: '3' }, { text: '4' }],
        next: 'a',
      },
      'buttons',
      /1 to 3/,
    ],
    [
      'session message with no buttons',
      { type: 'send_session_message', text: 'x', buttons: [], next: 'a' },
      'buttons',
      /1 to 3/,
    ],
    [
      'session message button without text',
      { type: 'send_session_message', text: 'x', buttons: [{ payload: 'P' }], next: 'a' },
      'buttons[0].text',
      /is required/,
    ],
    [
      'session message button not an object',
      { type: 'send_session_message', text: 'x', buttons: ['Yes'], next: 'a' },
      'buttons[0]',
      /must be an object/,
    ],
    [
      "session message button title over WhatsApp's 20 characters",
      { type: 'send_session_message', text: 'x', buttons: [{ text: 'Yes, please book it now' }], next: 'a' },
      'buttons[0].text',
      /at most 20 characters/,
    ],
    [
      "update_contact setting the run's contact id",
      { type: 'update_contact', fields: { id: '{{payload.crm_id}}' }, next: 'a' },
      'fields.id',
      /cannot be set: the run's contact is not changed by a step/,
    ],
    [
      "update_contact setting the run's contact phone",
      { type: 'update_contact', fields: { name: 'x', phone: '{{reply.text}}' }, next: 'a' },
      'fields.phone',
      /cannot be set/,
    ],
    [
      'session message button unknown field',
      { type: 'send_session_message', text: 'x', buttons: [{ text: 'a', url: 'u' }], next: 'a' },
      'buttons[0].url',
      /unknown field/,
    ],
    // delay
    ['delay without duration', { type: 'delay', next: 'a' }, 'duration', /is required/],
    ['delay with invalid duration', { type: 'delay', duration: '1w', next: 'a' }, 'duration', /invalid duration "1w"/],
    ['delay with zero duration', { type: 'delay', duration: 0, next: 'a' }, 'duration', /positive integer/],
    ['delay without next', { type: 'delay', duration: 5 }, 'next', /is required/],
    // wait_for_reply
    [
      'wait_for_reply without timeout',
      { type: 'wait_for_reply', branches: [{ match: { type: 'any' }, next: 'a' }], onTimeout: 'b' },
      'timeout',
      /is required/,
    ],
    [
      'wait_for_reply with invalid timeout',
      {
        type: 'wait_for_reply',
        timeout: '10 minutes',
        branches: [{ match: { type: 'any' }, next: 'a' }],
        onTimeout: 'b',
      },
      'timeout',
      /invalid duration/,
    ],
    [
      'wait_for_reply without onTimeout',
      { type: 'wait_for_reply', timeout: 5, branches: [{ match: { type: 'any' }, next: 'a' }] },
      'onTimeout',
      /is required/,
    ],
    [
      'wait_for_reply without branches',
      { type: 'wait_for_reply', timeout: 5, onTimeout: 'b' },
      'branches',
      /non-empty array/,
    ],
    [
      'wait_for_reply with empty branches',
      { type: 'wait_for_reply', timeout: 5, branches: [], onTimeout: 'b' },
      'branches',
      /non-empty array/,
    ],
    [
      'wait_for_reply branch not an object',
      { type: 'wait_for_reply', timeout: 5, branches: ['a'], onTimeout: 'b' },
      'branches[0]',
      /must be an object/,
    ],
    [
      'wait_for_reply branch without match',
      { type: 'wait_for_reply', timeout: 5, branches: [{ next: 'a' }], onTimeout: 'b' },
      'branches[0].match',
      /is required/,
    ],
    [
      'wait_for_reply branch without next',
      { type: 'wait_for_reply', timeout: 5, branches: [{ match: { type: 'any' } }], onTimeout: 'b' },
      'branches[0].next',
      /is required/,
    ],
    [
      'wait_for_reply unknown match type',
      { type: 'wait_for_reply', timeout: 5, branches: [{ match: { type: 'regex' }, next: 'a' }], onTimeout: 'b' },
      'branches[0].match.type',
      /unknown match type "regex"/,
    ],
    [
      'wait_for_reply button without payload',
      { type: 'wait_for_reply', timeout: 5, branches: [{ match: { type: 'button' }, next: 'a' }], onTimeout: 'b' },
      'branches[0].match.payload',
      /is required/,
    ],
    [
      'wait_for_reply keyword without keywords',
      {
        type: 'wait_for_reply',
        timeout: 5,
        branches: [{ match: { type: 'keyword', keywords: [] }, next: 'a' }],
        onTimeout: 'b',
      },
      'branches[0].match.keywords',
      /non-empty array/,
    ],
    [
      'wait_for_reply keyword blank',
      {
        type: 'wait_for_reply',
        timeout: 5,
        branches: [{ match: { type: 'keyword', keywords: ['ok', ''] }, next: 'a' }],
        onTimeout: 'b',
      },
      'branches[0].match.keywords[1]',
      /non-empty string/,
    ],
    // condition
    ['condition without rules', { type: 'condition', else: 'b' }, 'rules', /non-empty array/],
    [
      'condition without else',
      { type: 'condition', rules: [{ left: 'x', operator: 'exists', next: 'a' }] },
      'else',
      /is required/,
    ],
    ['condition rule not an object', { type: 'condition', rules: [1], else: 'b' }, 'rules[0]', /must be an object/],
    [
      'condition bad operator',
      { type: 'condition', rules: [{ left: 'x', operator: 'matches', right: 'y', next: 'a' }], else: 'b' },
      'rules[0].operator',
      /unknown operator "matches"/,
    ],
    [
      'condition missing operator',
      { type: 'condition', rules: [{ left: 'x', right: 'y', next: 'a' }], else: 'b' },
      'rules[0].operator',
      /is required/,
    ],
    [
      'condition missing left',
      { type: 'condition', rules: [{ operator: 'exists', next: 'a' }], else: 'b' },
      'rules[0].left',
      /is required/,
    ],
    [
      'condition missing right',
      { type: 'condition', rules: [{ left: 'x', operator: 'equals', next: 'a' }], else: 'b' },
      'rules[0].right',
      /is required/,
    ],
    [
      'condition right for exists',
      { type: 'condition', rules: [{ left: 'x', operator: 'exists', right: 'y', next: 'a' }], else: 'b' },
      'rules[0].right',
      /must be omitted/,
    ],
    [
      'condition in without array',
      { type: 'condition', rules: [{ left: 'x', operator: 'in', right: 'a,b', next: 'a' }], else: 'b' },
      'rules[0].right',
      /non-empty array/,
    ],
    [
      'condition in with a bad template',
      { type: 'condition', rules: [{ left: 'x', operator: 'in', right: ['{{x'], next: 'a' }], else: 'b' },
      'rules[0].right[0]',
      /unclosed/,
    ],
    [
      'condition bad left template',
      { type: 'condition', rules: [{ left: '{{payload.x', operator: 'exists', next: 'a' }], else: 'b' },
      'rules[0].left',
      /unclosed/,
    ],
    [
      'condition rule without next',
      { type: 'condition', rules: [{ left: 'x', operator: 'exists' }], else: 'b' },
      'rules[0].next',
      /is required/,
    ],
    [
      'condition caseSensitive not boolean',
      { type: 'condition', rules: [{ left: 'x', operator: 'exists', caseSensitive: 'yes', next: 'a' }], else: 'b' },
      'rules[0].caseSensitive',
      /boolean/,
    ],
    [
      'condition rule unknown field',
      { type: 'condition', rules: [{ left: 'x', operator: 'exists', op: 1, next: 'a' }], else: 'b' },
      'rules[0].op',
      /unknown field/,
    ],
    // trigger_campaign
    ['trigger_campaign without campaignId', { type: 'trigger_campaign', next: 'a' }, 'campaignId', /is required/],
    [
      'trigger_campaign with bad campaignId',
      { type: 'trigger_campaign', campaignId: -1, next: 'a' },
      'campaignId',
      /is required/,
    ],
    [
      'trigger_campaign contact not an object',
      { type: 'trigger_campaign', campaignId: 1, contact: 'x', next: 'a' },
      'contact',
      /must be an object/,
    ],
    [
      'trigger_campaign bad phone template',
      { type: 'trigger_campaign', campaignId: 1, contact: { phoneNumber: '{{payload.p' }, next: 'a' },
      'contact.phoneNumber',
      /unclosed/,
    ],
    [
      'trigger_campaign contact unknown field',
      { type: 'trigger_campaign', campaignId: 1, contact: { phone: 'x' }, next: 'a' },
      'contact.phone',
      /unknown field/,
    ],
    [
      'trigger_campaign integer-like variable',
      { type: 'trigger_campaign', campaignId: 1, contact: { variables: { '0': 'x' } }, next: 'a' },
      'contact.variables.0',
      /integer-like/,
    ],
    // http_request
    [
      'http_request bad method',
      { type: 'http_request', method: 'TRACE', url: 'https://x', next: 'a' },
      'method',
      /GET, POST, PUT, PATCH, DELETE/,
    ],
    [
      'http_request lowercase method',
      { type: 'http_request', method: 'get', url: 'https://x', next: 'a' },
      'method',
      /must be one of/,
    ],
    ['http_request without url', { type: 'http_request', method: 'GET', next: 'a' }, 'url', /is required/],
    [
      'http_request bad url template',
      { type: 'http_request', method: 'GET', url: 'https://x/{{payload.id', next: 'a' },
      'url',
      /unclosed/,
    ],
    [
      'http_request bad header template',
      {
        type: 'http_request',
        method: 'GET',
        url: 'https://x',
        headers: { Authorization: 'Bearer {{vars.t' },
        next: 'a',
      },
      'headers.Authorization',
      /unclosed/,
    ],
    [
      'http_request bad body leaf',
      { type: 'http_request', method: 'POST', url: 'https://x', body: { a: [{ b: '{{payload.x' }] }, next: 'a' },
      'body.a[0].b',
      /unclosed/,
    ],
    [
      'http_request bad saveAs',
      { type: 'http_request', method: 'GET', url: 'https://x', saveAs: 'my var', next: 'a' },
      'saveAs',
      /variable name/,
    ],
    [
      'http_request saveAs __proto__',
      { type: 'http_request', method: 'GET', url: 'https://x', saveAs: '__proto__', next: 'a' },
      'saveAs',
      /variable name/,
    ],
    [
      'http_request reserved saveAs',
      { type: 'http_request', method: 'GET', url: 'https://x', saveAs: 'lastError', next: 'a' },
      'saveAs',
      /reserved/,
    ],
    // update_contact
    ['update_contact without fields', { type: 'update_contact', next: 'a' }, 'fields', /non-empty object/],
    [
      'update_contact with empty fields',
      { type: 'update_contact', fields: {}, next: 'a' },
      'fields',
      /non-empty object/,
    ],
    [
      'update_contact bad template',
      { type: 'update_contact', fields: { name: '{{reply.text' }, next: 'a' },
      'fields.name',
      /unclosed/,
    ],
    [
      'update_contact __proto__ key',
      { type: 'update_contact', fields: JSON.parse('{"__proto__": "x"}'), next: 'a' },
      'fields.__proto__',
      /forbidden key/,
    ],
    // end
    ['end with next', { type: 'end', next: 'a' }, 'next', /unknown field for a end node/],
  ])('%s', (_name, node, field, message) => {
    expectError(withNode(node), { nodeId: 'n', field, message: expect.stringMatching(message) });
  });

  it.each<[string, AnyDef, string]>([
    ['next', { type: 'send_template', templateName: 't', next: 'ghost' }, 'next'],
    ['onError', { type: 'http_request', method: 'GET', url: 'https://x', next: 'a', onError: 'ghost' }, 'onError'],
    ['delay next', { type: 'delay', duration: 1, next: 'ghost' }, 'next'],
    [
      'branch',
      {
        type: 'wait_for_reply',
        timeout: 5,
        branches: [
          { match: { type: 'any' }, next: 'a' },
          { match: { type: 'any' }, next: 'ghost' },
        ],
        onTimeout: 'b',
      },
      'branches[1].next',
    ],
    [
      'onTimeout',
      { type: 'wait_for_reply', timeout: 5, branches: [{ match: { type: 'any' }, next: 'a' }], onTimeout: 'ghost' },
      'onTimeout',
    ],
    [
      'rule',
      { type: 'condition', rules: [{ left: 'x', operator: 'exists', next: 'ghost' }], else: 'b' },
      'rules[0].next',
    ],
    ['else', { type: 'condition', rules: [{ left: 'x', operator: 'exists', next: 'a' }], else: 'ghost' }, 'else'],
  ])('dangling edge: %s', (_name, node, field) => {
    expectError(withNode(node), { nodeId: 'n', field, message: 'points to unknown node "ghost"' });
  });

  it('rejects a cycle without delay or wait_for_reply, naming its nodes', () => {
    const def = {
      trigger: { type: 'webhook' },
      startNodeId: 's',
      nodes: [
        { id: 's', type: 'send_template', templateName: 't', next: 'c' },
        { id: 'c', type: 'condition', rules: [{ left: '{{payload.x}}', operator: 'exists', next: 'e' }], else: 'h' },
        { id: 'h', type: 'http_request', method: 'GET', url: 'https://x', next: 's' },
        { id: 'e', type: 'end' },
      ],
    };
    const errors = errorsOf(def);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ nodeId: 's', field: 'next' });
    expect(errors[0].message).toMatch(/cycle without a delay or wait_for_reply would loop forever: s → c → h → s/);
  });

  it('rejects a condition that points to itself', () => {
    const def = withNode({ type: 'condition', rules: [{ left: 'x', operator: 'exists', next: 'n' }], else: 'a' });
    expectError(def, { nodeId: 'n', message: expect.stringMatching(/loop forever: n → n/) });
  });

  it('rejects a cycle through onError edges', () => {
    const def = withNode({ type: 'http_request', method: 'GET', url: 'https://x', next: 'a', onError: 'n' });
    expectError(def, { nodeId: 'n', message: expect.stringMatching(/loop forever/) });
  });

  it('collects several errors at once', () => {
    const def = {
      trigger: { type: 'sms' },
      startNodeId: 'ghost',
      nodes: [
        { id: 'x', type: 'delay', next: 'y' },
        { id: 'x', type: 'end' },
      ],
    };
    const errors = errorsOf(def);
    expect(errors.map((e) => `${e.nodeId ?? ''}:${e.field}`)).toEqual(
      expect.arrayContaining([':trigger.type', 'x:duration', 'x:id', ':startNodeId', 'x:next']),
    );
    expect(formatValidationErrors(errors)).toContain('node "x" duration: is required');
  });
});

describe('templateNamesUsed', () => {
  it('lists unique template names in node order', () => {
    expect(templateNamesUsed(orderConfirmationWorkflow())).toEqual([
      'order_confirm',
      'vip_thanks',
      'thanks',
      'order_reminder',
    ]);
    const def = withNode({ type: 'send_template', templateName: 'b', next: 'a' }, [
      { id: 'c', type: 'send_template', templateName: 'a', next: 'a' },
      { id: 'd', type: 'send_template', templateName: 'b', next: 'a' },
    ]) as WorkflowDefinition;
    expect(templateNamesUsed(def)).toEqual(['b', 'a']);
  });
});

describe("validateDefinition at a run's start: only the rules published versions were checked by", () => {
  const def = (node: Record<string, unknown>) => ({
    trigger: { type: 'webhook' },
    startNodeId: 'n',
    nodes: [
      { id: 'n', ...node, next: 'end' },
      { id: 'end', type: 'end' },
    ],
  });
  it.each([
    [
      'a literal button title over 20 characters',
      { type: 'send_session_message', text: 'x', buttons: [{ text: 'Yes, please book it now' }] },
    ],
    ["update_contact setting the contact's phone", { type: 'update_contact', fields: { phone: '{{reply.text}}' } }],
  ])('%s: refused when publishing, accepted when a run of a live version starts', (_name, node) => {
    expect(validateDefinition(def(node)).ok).toBe(false);
    expect(validateDefinition(def(node), { atRunStart: true }).ok).toBe(true);
  });
  it('a structural error still stops a run', () => {
    expect(validateDefinition(def({ type: 'delay', duration: '1w' }), { atRunStart: true }).ok).toBe(false);
  });
});
