import type { WorkflowDefinition, WorkflowNode } from './definition';
import { advance, effectIdempotencyKey, isFinished, start } from './interpreter';
import { HISTORY_LIMIT, type EngineEvent, type RunState, type StepResult } from './protocol';

function def(nodes: unknown[], startNodeId = (nodes[0] as { id: string }).id): WorkflowDefinition {
  return { trigger: { type: 'webhook' }, startNodeId, nodes: nodes as WorkflowNode[] };
}

const END = { id: 'end', type: 'end' };
const contact = { id: 'c-1', phone: '+4915100000001', name: 'Ada', email: 'ada@example.com' };

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

/** Completes the effect the run is waiting for. */
function complete(d: WorkflowDefinition, r: StepResult, result?: unknown): StepResult {
  const waiting = r.state.waitingFor;
  if (waiting?.kind !== 'effect') throw new Error(`not waiting for an effect: ${JSON.stringify(waiting)}`);
  return advance(d, r.state, { type: 'effect_completed', seq: waiting.seq, result });
}

describe('start', () => {
  it('fails an invalid definition with a fail effect', () => {
    const r = start(def([{ id: 'a', type: 'delay', next: 'end' }, END]), { payload: {} });
    expect(r.state.status).toBe('failed');
    expect(r.state.error).toMatchObject({
      code: 'invalid_definition',
      message: expect.stringContaining('node "a" duration: is required'),
    });
    expect(r.effects).toEqual([{ type: 'fail', seq: 0, error: r.state.error }]);
  });

  it('builds a JSON-serialisable initial context and never aliases the input', () => {
    const payload = { order: { id: 1 }, dropped: undefined };
    const input = { payload, contact: { ...contact } };
    const r = start(def([{ id: 'w', type: 'delay', duration: 5, next: 'end' }, END]), input);
    expect(r.state.context).toEqual({ payload: { order: { id: 1 } }, contact, reply: null, vars: {} });
    payload.order.id = 2;
    expect((r.state.context.payload as any).order.id).toBe(1);
    expect(JSON.parse(JSON.stringify(r.state))).toEqual(r.state);
  });

  it('defaults payload to null and contact to {}', () => {
    const r = start(def([{ id: 'w', type: 'delay', duration: 5, next: 'end' }, END]));
    expect(r.state.context.payload).toBeNull();
    expect(r.state.context.contact).toEqual({});
  });

  it('is deterministic', () => {
    const d = def([
      {
        id: 'c',
        type: 'condition',
        rules: [{ left: '{{payload.n}}', operator: 'gt', right: '1', next: 's' }],
        else: 'end',
      },
      { id: 's', type: 'send_template', templateName: 't', variables: { name: '{{contact.name}}' }, next: 'end' },
      END,
    ]);
    expect(start(d, { payload: { n: 2 }, contact })).toEqual(start(d, { payload: { n: 2 }, contact }));
  });
});

describe('end', () => {
  it('completes the run with a complete effect', () => {
    const r = start(def([END]));
    expect(r.state).toMatchObject({ status: 'completed', currentNodeId: 'end', seq: 1, waitingFor: null });
    expect(r.effects).toEqual([{ type: 'complete', seq: 1 }]);
    expect(r.state.history).toEqual([{ seq: 1, nodeId: 'end', type: 'end', outcome: 'end' }]);
    expect(isFinished(r.state)).toBe(true);
  });
});

describe('send_template', () => {
  const d = def([
    {
      id: 's',
      type: 'send_template',
      templateName: 'order_update',
      variables: {
        name: '{{contact.name}}',
        custom_z: '{{payload.z}}',
        custom_a: 'A',
        email: '{{contact.email}}',
        cta_link: '{{payload.missing}}',
      },
      mediaUrl: 'https://cdn.example.com/{{payload.file}}',
      next: 'end',
    },
    END,
  ]);

  it('emits the effect with the default recipient, rendered variables in definition order and the media URL', () => {
    const r = start(d, { payload: { z: 26, file: 'a.pdf' }, contact });
    expect(r.effects).toEqual([
      {
        type: 'send_template',
        seq: 1,
        nodeId: 's',
        to: '+4915100000001',
        templateName: 'order_update',
        variables: { name: 'Ada', custom_z: '26', custom_a: 'A', email: 'ada@example.com', cta_link: '' },
        mediaUrl: 'https://cdn.example.com/a.pdf',
      },
    ]);
    expect(Object.keys((r.effects[0] as any).variables)).toEqual(['name', 'custom_z', 'custom_a', 'email', 'cta_link']);
    expect(r.state.status).toBe('waiting');
    expect(r.state.waitingFor).toEqual({ kind: 'effect', seq: 1, nodeId: 's', effect: r.effects[0] });
  });

  it('keeps variable order through a JSON round trip of the state', () => {
    const r = start(d, { payload: { z: 1, file: 'f' }, contact });
    const stored = JSON.parse(JSON.stringify(r.state)) as RunState;
    const effect = stored.waitingFor!.kind === 'effect' ? stored.waitingFor!.effect : null;
    expect(Object.keys((effect as any).variables)).toEqual(['name', 'custom_z', 'custom_a', 'email', 'cta_link']);
  });

  it('continues at next when the effect completes', () => {
    const r = complete(d, start(d, { payload: { file: 'f' }, contact }), { messageId: 'wamid.1' });
    expect(r.state.status).toBe('completed');
    expect(r.effects).toEqual([{ type: 'complete', seq: 2 }]);
    expect(r.state.history.map((h) => h.outcome)).toEqual(['completed', 'end']);
  });

  it('emits variables as an empty object when none are given', () => {
    const r = start(def([{ id: 's', type: 'send_template', templateName: 't', next: 'end' }, END]), { contact });
    expect(r.effects[0]).toEqual({
      type: 'send_template',
      seq: 1,
      nodeId: 's',
      to: contact.phone,
      templateName: 't',
      variables: {},
    });
  });
});

describe('send_session_message', () => {
  it('emits text, recipient and quick-reply buttons (payload defaults to the text)', () => {
    const d = def([
      {
        id: 'm',
        type: 'send_session_message',
        to: '{{payload.phone}}',
        text: 'Hi {{contact.name}}, confirm order {{payload.order}}?',
        buttons: [{ text: 'Yes' }, { text: 'No', payload: 'NO_{{payload.order}}' }],
        next: 'end',
      },
      END,
    ]);
    const r = start(d, { payload: { phone: '+111', order: 7 }, contact });
    expect(r.effects).toEqual([
      {
        type: 'send_session_message',
        seq: 1,
        nodeId: 'm',
        to: '+111',
        text: 'Hi Ada, confirm order 7?',
        buttons: [
          { text: 'Yes', payload: 'Yes' },
          { text: 'No', payload: 'NO_7' },
        ],
      },
    ]);
    expect(complete(d, r).state.status).toBe('completed');
  });
});

describe('effect failures', () => {
  const nodes = (onError?: string) => [
    {
      id: 'h',
      type: 'http_request',
      method: 'GET',
      url: 'https://api.example.com',
      next: 'end',
      ...(onError ? { onError } : {}),
    },
    { id: 'fallback', type: 'send_session_message', text: 'Sorry: {{vars.lastError.message}}', next: 'end' },
    END,
  ];

  it('without onError, a failed effect fails the run naming the node', () => {
    const d = def(nodes());
    const r0 = start(d, { contact });
    const r = advance(d, r0.state, { type: 'effect_failed', seq: 1, error: 'connect ECONNREFUSED' });
    expect(r.state.status).toBe('failed');
    expect(r.state.error).toEqual({
      code: 'effect_failed',
      message: 'node "h" (http_request) failed: connect ECONNREFUSED',
      nodeId: 'h',
    });
    expect(r.effects).toEqual([{ type: 'fail', seq: 1, error: r.state.error }]);
    expect(r.state.waitingFor).toBeNull();
    expect(r.state.history.at(-1)).toEqual({ seq: 1, nodeId: 'h', type: 'http_request', outcome: 'failed' });
  });

  it('with onError, the run continues there with vars.lastError', () => {
    const d = def(nodes('fallback'));
    const r = advance(d, start(d, { contact }).state, {
      type: 'effect_failed',
      seq: 1,
      error: { message: 'blocked by SSRF guard', code: 'ssrf' },
    });
    expect(r.state.status).toBe('waiting');
    expect(r.state.context.vars.lastError).toEqual({ nodeId: 'h', message: 'blocked by SSRF guard', code: 'ssrf' });
    expect(r.effects).toEqual([
      {
        type: 'send_session_message',
        seq: 2,
        nodeId: 'fallback',
        to: contact.phone,
        text: 'Sorry: blocked by SSRF guard',
      },
    ]);
    expect(r.state.history.at(-1)!.outcome).toBe('on_error');
  });

  it('tolerates a malformed error value', () => {
    const d = def(nodes());
    const r = advance(d, start(d, { contact }).state, { type: 'effect_failed', seq: 1, error: 42 as never });
    expect(r.state.error!.message).toBe('node "h" (http_request) failed: effect failed');
  });
});

describe('delay', () => {
  const d = def([{ id: 'd', type: 'delay', duration: '15m', next: 'end' }, END]);

  it('starts a timer and resumes on timer_fired of the same seq', () => {
    const r0 = start(d);
    expect(r0.effects).toEqual([{ type: 'start_timer', seq: 1, nodeId: 'd', durationMs: 900_000 }]);
    expect(r0.state.waitingFor).toEqual({ kind: 'timer', seq: 1, nodeId: 'd', durationMs: 900_000 });
    expect(r0.state.status).toBe('waiting');
    const r1 = advance(d, r0.state, { type: 'timer_fired', seq: 1 });
    expect(r1.state.status).toBe('completed');
    expect(r1.state.history.map((h) => h.outcome)).toEqual(['timer_fired', 'end']);
  });

  it.each<[string, EngineEvent]>([
    ['a timer of another seq', { type: 'timer_fired', seq: 2 }],
    ['a reply', { type: 'reply_received', reply: { text: 'hi' } }],
    ['an effect completion', { type: 'effect_completed', seq: 1 }],
    ['an effect failure', { type: 'effect_failed', seq: 1, error: 'x' }],
    ['an unknown event', { type: 'cancelled' } as never],
    ['a non-object event', null as never],
  ])('ignores %s', (_name, event) => {
    const r0 = start(d);
    const r = advance(d, r0.state, event);
    expect(r.state).toBe(r0.state);
    expect(r.effects).toEqual([]);
  });
});

describe('wait_for_reply', () => {
  const d = def([
    {
      id: 'w',
      type: 'wait_for_reply',
      timeout: '2h',
      branches: [
        { match: { type: 'button', payload: 'STOP' }, next: 'stopped' },
        { match: { type: 'keyword', keywords: ['yes', 'Sure'] }, next: 'yes' },
      ],
      onTimeout: 'timeout',
    },
    { id: 'stopped', type: 'send_session_message', text: 'stopped', next: 'end' },
    { id: 'yes', type: 'send_session_message', text: 'You said {{reply.text}}', next: 'end' },
    { id: 'timeout', type: 'send_session_message', text: 'no answer [{{reply.text}}]', next: 'end' },
    END,
  ]);
  const waiting = () => start(d, { contact });

  it('asks the driver to wait for a reply with a timeout', () => {
    const r = waiting();
    expect(r.effects).toEqual([{ type: 'wait_for_reply', seq: 1, nodeId: 'w', timeoutMs: 7_200_000 }]);
    expect(r.state.waitingFor).toEqual({ kind: 'reply', seq: 1, nodeId: 'w', timeoutMs: 7_200_000 });
  });

  it('follows the button branch', () => {
    const r = advance(d, waiting().state, {
      type: 'reply_received',
      reply: { buttonPayload: 'STOP', buttonText: 'Stop' },
    });
    expect(r.effects).toEqual([expect.objectContaining({ nodeId: 'stopped', seq: 2 })]);
    expect(r.state.history.at(-1)).toEqual({ seq: 1, nodeId: 'w', type: 'wait_for_reply', outcome: 'branch:0' });
  });

  it('follows the keyword branch case-insensitively and binds the reply', () => {
    const r = advance(d, waiting().state, { type: 'reply_received', reply: { text: ' SURE ', messageId: 'wamid.9' } });
    expect(r.effects).toEqual([expect.objectContaining({ nodeId: 'yes', text: 'You said  SURE ' })]);
    expect(r.state.context.reply).toEqual({ text: ' SURE ', messageId: 'wamid.9' });
    expect(r.state.history.at(-1)!.outcome).toBe('branch:1');
  });

  it('an unmatched reply is ignored and the run keeps waiting', () => {
    const r0 = waiting();
    const r = advance(d, r0.state, { type: 'reply_received', reply: { text: 'maybe later' } });
    expect(r.state).toBe(r0.state);
    expect(r.effects).toEqual([]);
    const r2 = advance(d, r.state, { type: 'reply_received', reply: { text: 'yes' } });
    expect(r2.effects).toEqual([expect.objectContaining({ nodeId: 'yes' })]);
  });

  it('an "any" branch catches every reply', () => {
    const d2 = def([
      {
        id: 'w',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [
          { match: { type: 'keyword', keywords: ['no'] }, next: 'end' },
          { match: { type: 'any' }, next: 'other' },
        ],
        onTimeout: 'end',
      },
      { id: 'other', type: 'update_contact', fields: { custom_answer: '{{reply.text}}' }, next: 'end' },
      END,
    ]);
    const r = advance(d2, start(d2, { contact }).state, { type: 'reply_received', reply: { text: 'whatever' } });
    expect(r.effects).toEqual([
      expect.objectContaining({ type: 'update_contact', fields: { custom_answer: 'whatever' } }),
    ]);
  });

  it('a timer_fired of the same seq takes the timeout branch and clears the reply', () => {
    const r = advance(d, waiting().state, { type: 'timer_fired', seq: 1 });
    expect(r.effects).toEqual([expect.objectContaining({ nodeId: 'timeout', text: 'no answer []' })]);
    expect(r.state.context.reply).toBeNull();
    expect(r.state.history.at(-1)!.outcome).toBe('timeout');
  });

  it('a timeout clears the reply of an earlier wait', () => {
    const two = def([
      {
        id: 'w1',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [{ match: { type: 'any' }, next: 'w2' }],
        onTimeout: 'end',
      },
      {
        id: 'w2',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [{ match: { type: 'any' }, next: 'end' }],
        onTimeout: 'say',
      },
      { id: 'say', type: 'send_session_message', text: 'last reply: [{{reply.text}}]', next: 'end' },
      END,
    ]);
    const r1 = advance(two, start(two, { contact }).state, { type: 'reply_received', reply: { text: 'first' } });
    expect(r1.state.context.reply).toEqual({ text: 'first' });
    const r2 = advance(two, r1.state, { type: 'timer_fired', seq: 2 });
    expect(r2.state.context.reply).toBeNull();
    expect(r2.effects).toEqual([expect.objectContaining({ text: 'last reply: []' })]);
  });

  it('ignores a timer of another seq and effect events', () => {
    const r0 = waiting();
    for (const event of [
      { type: 'timer_fired', seq: 0 },
      { type: 'timer_fired', seq: 2 },
      { type: 'effect_completed', seq: 1 },
    ] as EngineEvent[]) {
      const r = advance(d, r0.state, event);
      expect(r.state).toBe(r0.state);
      expect(r.effects).toEqual([]);
    }
  });

  it('ignores a reply addressed to another seq, accepts one addressed to this seq', () => {
    const r0 = waiting();
    expect(advance(d, r0.state, { type: 'reply_received', seq: 7, reply: { text: 'yes' } }).state).toBe(r0.state);
    expect(advance(d, r0.state, { type: 'reply_received', seq: 1, reply: { text: 'yes' } }).effects).toHaveLength(1);
  });

  it('ignores a reply without a reply object', () => {
    const r0 = waiting();
    expect(advance(d, r0.state, { type: 'reply_received' } as never).state).toBe(r0.state);
  });

  it('a late timeout after the reply was taken is ignored', () => {
    const r1 = advance(d, waiting().state, { type: 'reply_received', reply: { text: 'yes' } });
    const r2 = advance(d, r1.state, { type: 'timer_fired', seq: 1 });
    expect(r2.state).toBe(r1.state);
    expect(r2.effects).toEqual([]);
  });

  it('a redelivered reply (same messageId) does not resume a later wait', () => {
    const loop = def([
      {
        id: 'w1',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [{ match: { type: 'any' }, next: 'w2' }],
        onTimeout: 'end',
      },
      {
        id: 'w2',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [{ match: { type: 'any' }, next: 'end' }],
        onTimeout: 'end',
      },
      END,
    ]);
    const r1 = advance(loop, start(loop).state, { type: 'reply_received', reply: { text: 'a', messageId: 'wamid.A' } });
    expect(r1.state.waitingFor).toMatchObject({ kind: 'reply', nodeId: 'w2', seq: 2 });
    const dup = advance(loop, r1.state, { type: 'reply_received', reply: { text: 'a', messageId: 'wamid.A' } });
    expect(dup.state).toBe(r1.state);
    const next = advance(loop, r1.state, { type: 'reply_received', reply: { text: 'b', messageId: 'wamid.B' } });
    expect(next.state.status).toBe('completed');
    expect(next.state.consumedReplyIds).toEqual(['wamid.A', 'wamid.B']);
  });
});

describe('condition', () => {
  const d = def([
    {
      id: 'c',
      type: 'condition',
      rules: [
        { left: '{{payload.total}}', operator: 'gte', right: '1000', next: 'big' },
        { left: '{{payload.total}}', operator: 'gte', right: '100', next: 'medium' },
      ],
      else: 'small',
    },
    { id: 'big', type: 'delay', duration: 1, next: 'end' },
    { id: 'medium', type: 'delay', duration: 2, next: 'end' },
    { id: 'small', type: 'delay', duration: 3, next: 'end' },
    END,
  ]);

  it.each([
    [5000, 'big', 'rule:0'],
    [100, 'medium', 'rule:1'],
    [99, 'small', 'else'],
    [undefined, 'small', 'else'],
  ])('total %p goes to %s (%s), inline without effects of its own', (total, target, outcome) => {
    const r = start(d, { payload: { total } });
    expect(r.effects).toEqual([expect.objectContaining({ type: 'start_timer', nodeId: target, seq: 2 })]);
    expect(r.state.history).toEqual([{ seq: 1, nodeId: 'c', type: 'condition', outcome }]);
  });

  it('a condition leading to end completes in the same call', () => {
    const d2 = def([
      { id: 'c', type: 'condition', rules: [{ left: '{{payload.a}}', operator: 'exists', next: 'end' }], else: 'end' },
      END,
    ]);
    expect(start(d2, { payload: { a: 1 } }).effects).toEqual([{ type: 'complete', seq: 2 }]);
  });
});

describe('trigger_campaign', () => {
  it('emits the campaign id as a string and the contact with the default phone', () => {
    const d = def([
      {
        id: 't',
        type: 'trigger_campaign',
        campaignId: 42,
        contact: { name: '{{contact.name}}', variables: { custom_b: '{{payload.b}}', custom_a: 'x' } },
        next: 'end',
      },
      END,
    ]);
    const r = start(d, { payload: { b: 'B' }, contact });
    expect(r.effects).toEqual([
      {
        type: 'trigger_campaign',
        seq: 1,
        nodeId: 't',
        campaignId: '42',
        contact: { phoneNumber: contact.phone, name: 'Ada', variables: { custom_b: 'B', custom_a: 'x' } },
      },
    ]);
    expect(Object.keys((r.effects[0] as any).contact.variables)).toEqual(['custom_b', 'custom_a']);
    expect(complete(d, r).state.status).toBe('completed');
  });

  it('uses an explicit phone number and email', () => {
    const d = def([
      {
        id: 't',
        type: 'trigger_campaign',
        campaignId: 'camp-1',
        contact: { phoneNumber: '{{payload.p}}', email: '{{payload.e}}' },
        next: 'end',
      },
      END,
    ]);
    expect(start(d, { payload: { p: '+222', e: 'x@y.z' } }).effects[0]).toEqual({
      type: 'trigger_campaign',
      seq: 1,
      nodeId: 't',
      campaignId: 'camp-1',
      contact: { phoneNumber: '+222', email: 'x@y.z' },
    });
  });
});

describe('http_request', () => {
  const d = def([
    {
      id: 'h',
      type: 'http_request',
      method: 'POST',
      url: 'https://api.example.com/orders/{{payload.order.id}}',
      headers: { Authorization: 'Bearer {{payload.token}}', 'X-Static': '1' },
      body: {
        order: '{{payload.order}}',
        total: '{{payload.order.total}}',
        note: 'for {{contact.name}}',
        fixed: [1, true],
      },
      saveAs: 'lookup',
      next: 'c',
    },
    {
      id: 'c',
      type: 'condition',
      rules: [{ left: '{{vars.lookup.body.tier}}', operator: 'equals', right: 'gold', next: 'gold' }],
      else: 'end',
    },
    {
      id: 'gold',
      type: 'send_session_message',
      text: 'Hello {{vars.lookup.body.tier}} member (status {{vars.lookup.status}})',
      next: 'end',
    },
    END,
  ]);
  const payload = { order: { id: 'A1', total: 10 }, token: 'tok' };

  it('emits the rendered request with raw values in the body', () => {
    expect(start(d, { payload, contact }).effects).toEqual([
      {
        type: 'http_request',
        seq: 1,
        nodeId: 'h',
        method: 'POST',
        url: 'https://api.example.com/orders/A1',
        headers: { Authorization: 'Bearer tok', 'X-Static': '1' },
        body: { order: { id: 'A1', total: 10 }, total: 10, note: 'for Ada', fixed: [1, true] },
        saveAs: 'lookup',
      },
    ]);
  });

  it('saves { status, body } under vars[saveAs] for later nodes', () => {
    const r = complete(d, start(d, { payload, contact }), {
      status: 200,
      body: { tier: 'gold' },
      headers: { 'content-type': 'application/json' },
    });
    expect(r.state.context.vars.lookup).toEqual({
      status: 200,
      body: { tier: 'gold' },
      headers: { 'content-type': 'application/json' },
    });
    expect(r.effects).toEqual([expect.objectContaining({ nodeId: 'gold', text: 'Hello gold member (status 200)' })]);
  });

  it('a non-2xx result is a completed effect the workflow can branch on', () => {
    const r = complete(d, start(d, { payload, contact }), { status: 404, body: null });
    expect(r.state.context.vars.lookup).toEqual({ status: 404, body: null });
    expect(r.state.status).toBe('completed');
  });

  it('saves a malformed result defensively', () => {
    const r = complete(d, start(d, { payload, contact }), 'raw text');
    expect(r.state.context.vars.lookup).toEqual({ status: null, body: 'raw text' });
  });

  it('GET without headers, body or saveAs', () => {
    const d2 = def([
      { id: 'h', type: 'http_request', method: 'GET', url: 'https://x.example/{{payload.q}}', next: 'end' },
      END,
    ]);
    const r = start(d2, { payload: { q: 'a' } });
    expect(r.effects).toEqual([
      { type: 'http_request', seq: 1, nodeId: 'h', method: 'GET', url: 'https://x.example/a', headers: {} },
    ]);
    expect(complete(d2, r, { status: 200, body: {} }).state.context.vars).toEqual({});
  });

  describe('values in the URL are data, not URL syntax', () => {
    const urlOf = (url: string, payload: unknown, reply = 'a') => {
      const d3 = def([
        {
          id: 'w',
          type: 'wait_for_reply',
          timeout: '1h',
          branches: [{ match: { type: 'any' }, next: 'h' }],
          onTimeout: 'end',
        },
        { id: 'h', type: 'http_request', method: 'GET', url, next: 'end' },
        END,
      ]);
      const waiting = start(d3, { payload, contact });
      const r = advance(d3, waiting.state, { type: 'reply_received', reply: { text: reply, messageId: 'm1' } });
      return r.effects[0]?.type === 'http_request' ? r.effects[0].url : r.state.error;
    };

    it("a customer's reply stays in the path or query the author wrote", () => {
      // the path: segments kept (a value may be `v1/orders`), but no query, fragment or escape of its own
      expect(urlOf('https://crm.example.com/customers/{{reply.text}}', {}, 'v1/a b?delete=1#x%2e')).toBe(
        'https://crm.example.com/customers/v1/a%20b%3Fdelete=1%23x%252e',
      );
      expect(urlOf('https://crm.example.com/customers/{{reply.text}}', {}, '../../admin/users')).toMatchObject({
        code: 'binding_error',
        message: expect.stringContaining('field "url": {{reply.text}} in the path holds a "." or ".." segment'),
      });
      // the query and fragment: one value
      expect(urlOf('https://crm.example.com/search?q={{reply.text}}&page=1', {}, 'a&b=c d/e')).toBe(
        'https://crm.example.com/search?q=a%26b%3Dc%20d%2Fe&page=1',
      );
    });

    it('a value in the host must be a host name (a port, an IPv6 address), else the step fails naming it', () => {
      expect(urlOf('https://{{payload.region}}.api.example.com/orders', { region: 'eu-1' })).toBe(
        'https://eu-1.api.example.com/orders',
      );
      expect(urlOf('https://{{payload.host}}/orders', { host: 'api.example.com:8443' })).toBe(
        'https://api.example.com:8443/orders',
      );
      expect(urlOf('https://{{payload.region}}.api.example.com/orders', { region: 'evil.com#' })).toMatchObject({
        code: 'binding_error',
        message: expect.stringContaining('field "url": {{payload.region}} in the host is not a host name'),
      });
      expect(urlOf('https://{{payload.host}}/orders', { host: 'user:pw@evil.com' })).toMatchObject({
        code: 'binding_error',
      });
    });

    it('a URL that starts with a value takes it as written: a base URL, or a whole URL from the payload', () => {
      expect(urlOf('{{payload.api}}/orders/{{payload.id}}', { api: 'https://api.example.com/v2', id: 'A/1' })).toBe(
        'https://api.example.com/v2/orders/A/1',
      );
      expect(urlOf('{{payload.callback}}', { callback: 'https://hooks.example.com/x?y=1' })).toBe(
        'https://hooks.example.com/x?y=1',
      );
    });
  });
});

describe('update_contact', () => {
  const d = def([
    {
      id: 'u',
      type: 'update_contact',
      fields: { name: '{{reply.text}}', email: '{{payload.email}}', custom_city: 'Berlin' },
      next: 's',
    },
    {
      id: 's',
      type: 'send_session_message',
      text: 'Thanks {{contact.name}} from {{contact.custom_city}}',
      next: 'end',
    },
    END,
  ]);

  it('emits rendered fields (empty ones left out) with the contact id and phone', () => {
    const r = start(d, { payload: {}, contact });
    expect(r.effects).toEqual([
      {
        type: 'update_contact',
        seq: 1,
        nodeId: 'u',
        contactId: 'c-1',
        phone: contact.phone,
        fields: { custom_city: 'Berlin' },
      },
    ]);
  });

  it('merges the fields into the run contact once completed', () => {
    const r = complete(d, start(d, { payload: { email: 'new@example.com' }, contact }));
    expect(r.state.context.contact).toEqual({ ...contact, email: 'new@example.com', custom_city: 'Berlin' });
    expect(r.effects).toEqual([expect.objectContaining({ text: 'Thanks Ada from Berlin' })]);
  });

  it('a version published before id and phone were refused: they never move the run to another contact', () => {
    const old = def([
      {
        id: 'u',
        type: 'update_contact',
        fields: { phone: '{{reply.text}}', id: '99', custom_city: 'Rome' },
        next: 's',
      },
      { id: 's', type: 'send_session_message', text: 'Hi {{contact.custom_city}}', next: 'end' },
      END,
    ]);
    const r = complete(old, start(old, { payload: {}, contact }));
    expect(r.state.context.contact).toEqual({ ...contact, custom_city: 'Rome' });
    expect(r.effects).toEqual([expect.objectContaining({ type: 'send_session_message', to: contact.phone })]);
  });

  it('omits contactId and phone when the run has no contact', () => {
    const r = start(d, { payload: { email: 'e@x' } });
    expect(r.effects[0]).toEqual({
      type: 'update_contact',
      seq: 1,
      nodeId: 'u',
      fields: { email: 'e@x', custom_city: 'Berlin' },
    });
  });
});

describe('binding errors', () => {
  it.each<[string, unknown, string, string[]]>([
    [
      'send_template to (default contact.phone)',
      { type: 'send_template', templateName: 't', next: 'end' },
      'to',
      ['contact.phone'],
    ],
    [
      'send_template to',
      { type: 'send_template', templateName: 't', to: '{{payload.customer.phone}}', next: 'end' },
      'to',
      ['payload.customer.phone'],
    ],
    [
      'send_template mediaUrl',
      { type: 'send_template', templateName: 't', to: '+1', mediaUrl: '{{payload.url}}', next: 'end' },
      'mediaUrl',
      ['payload.url'],
    ],
    [
      'session message text',
      { type: 'send_session_message', to: '+1', text: '{{reply.text}}', next: 'end' },
      'text',
      ['reply.text'],
    ],
    [
      'session message button',
      {
        type: 'send_session_message',
        to: '+1',
        text: 'x',
        buttons: [{ text: 'ok' }, { text: '{{payload.b}}' }],
        next: 'end',
      },
      'buttons[1].text',
      ['payload.b'],
    ],
    [
      'campaign phone',
      { type: 'trigger_campaign', campaignId: 1, contact: { phoneNumber: '{{payload.p}}' }, next: 'end' },
      'contact.phoneNumber',
      ['payload.p'],
    ],
    [
      'http url',
      { type: 'http_request', method: 'GET', url: '{{vars.endpoint}}', next: 'end' },
      'url',
      ['vars.endpoint'],
    ],
  ])('%s resolving empty fails the run naming node, field and path', (_name, node, field, paths) => {
    const d = def([{ id: 'x', ...(node as object) }, END]);
    const r = start(d, { payload: {} });
    expect(r.state.status).toBe('failed');
    expect(r.state.error).toEqual({
      code: 'binding_error',
      message: expect.stringContaining(`node "x"`),
      nodeId: 'x',
      field,
      paths,
    });
    expect(r.state.error!.message).toContain(`"${field}"`);
    expect(r.state.error!.message).toContain(`{{${paths[0]}}}`);
    expect(r.effects).toEqual([{ type: 'fail', seq: 1, error: r.state.error }]);
    expect(r.state.history).toEqual([{ seq: 1, nodeId: 'x', type: (node as any).type, outcome: 'binding_error' }]);
  });

  it('a partially resolved required field is not a binding error', () => {
    const d = def([
      { id: 'x', type: 'send_session_message', to: '+1', text: 'Hi {{contact.name}}!', next: 'end' },
      END,
    ]);
    expect(start(d).effects[0]).toMatchObject({ text: 'Hi !' });
  });

  it('a default rescues a missing required value', () => {
    const d = def([
      { id: 'x', type: 'send_template', templateName: 't', to: '{{payload.p | default: "+999"}}', next: 'end' },
      END,
    ]);
    expect(start(d).effects[0]).toMatchObject({ to: '+999' });
  });

  it('a binding error after a wait fails the run during advance', () => {
    const d = def([
      {
        id: 'w',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [{ match: { type: 'any' }, next: 'x' }],
        onTimeout: 'end',
      },
      { id: 'x', type: 'send_session_message', to: '+1', text: '{{reply.text}}', next: 'end' },
      END,
    ]);
    const r = advance(d, start(d).state, { type: 'reply_received', reply: { buttonPayload: 'P' } });
    expect(r.state.error).toMatchObject({ code: 'binding_error', nodeId: 'x', field: 'text', paths: ['reply.text'] });
  });
});

describe('ignored events and immutability', () => {
  const d = def([
    { id: 's1', type: 'send_template', templateName: 't1', next: 's2' },
    { id: 's2', type: 'send_template', templateName: 't2', next: 'end' },
    END,
  ]);

  it('a duplicate or stale effect_completed is ignored', () => {
    const r1 = start(d, { contact });
    const r2 = advance(d, r1.state, { type: 'effect_completed', seq: 1 });
    expect(r2.state.waitingFor).toMatchObject({ kind: 'effect', seq: 2, nodeId: 's2' });
    const dup = advance(d, r2.state, { type: 'effect_completed', seq: 1 });
    expect(dup.state).toBe(r2.state);
    expect(dup.effects).toEqual([]);
    const future = advance(d, r2.state, { type: 'effect_completed', seq: 3 });
    expect(future.state).toBe(r2.state);
  });

  it('a completed run ignores every event', () => {
    const r1 = start(d, { contact });
    const done = advance(d, advance(d, r1.state, { type: 'effect_completed', seq: 1 }).state, {
      type: 'effect_completed',
      seq: 2,
    });
    expect(done.state.status).toBe('completed');
    for (const event of [
      { type: 'effect_completed', seq: 2 },
      { type: 'effect_failed', seq: 2, error: 'x' },
      { type: 'timer_fired', seq: 3 },
      { type: 'reply_received', reply: { text: 'hi' } },
    ] as EngineEvent[]) {
      const r = advance(d, done.state, event);
      expect(r.state).toBe(done.state);
      expect(r.effects).toEqual([]);
    }
  });

  it('a failed run ignores every event', () => {
    const r1 = start(d, { contact });
    const failed = advance(d, r1.state, { type: 'effect_failed', seq: 1, error: 'boom' });
    expect(failed.state.status).toBe('failed');
    const r = advance(d, failed.state, { type: 'effect_completed', seq: 1 });
    expect(r.state).toBe(failed.state);
    expect(r.effects).toEqual([]);
  });

  it('advance never mutates the state it is given', () => {
    const r1 = start(d, { contact });
    const frozen = deepFreeze(JSON.parse(JSON.stringify(r1.state)) as RunState);
    const copy = JSON.parse(JSON.stringify(frozen));
    const r2 = advance(d, frozen, { type: 'effect_completed', seq: 1 });
    expect(r2.state).not.toBe(frozen);
    expect(frozen).toEqual(copy);
    expect(r2.state.seq).toBe(2);
  });

  it('every effect of a run has a distinct, increasing seq', () => {
    let r = start(d, { contact });
    const seqs = r.effects.map((e) => e.seq);
    while (r.state.status === 'waiting') {
      r = complete(d, r);
      seqs.push(...r.effects.map((e) => e.seq));
    }
    expect(seqs).toEqual([1, 2, 3]);
  });
});

describe('history', () => {
  it(`keeps the last ${HISTORY_LIMIT} entries and counts all`, () => {
    const d = def([
      {
        id: 'w',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [
          { match: { type: 'keyword', keywords: ['stop'] }, next: 'end' },
          { match: { type: 'any' }, next: 'w' },
        ],
        onTimeout: 'end',
      },
      END,
    ]);
    let state = start(d).state;
    for (let i = 0; i < 150; i++) state = advance(d, state, { type: 'reply_received', reply: { text: `m${i}` } }).state;
    expect(state.history).toHaveLength(HISTORY_LIMIT);
    expect(state.historyCount).toBe(150);
    expect(state.history[0]).toEqual({ seq: 51, nodeId: 'w', type: 'wait_for_reply', outcome: 'branch:1' });
    expect(state.seq).toBe(151);
    const done = advance(d, state, { type: 'reply_received', reply: { text: 'STOP' } }).state;
    expect(done.status).toBe('completed');
    expect(done.historyCount).toBe(152);
    expect(done.history).toHaveLength(HISTORY_LIMIT);
    expect(done.history.at(-1)).toEqual({ seq: 152, nodeId: 'end', type: 'end', outcome: 'end' });
  });

  it('bounds the consumed reply ids', () => {
    const d = def([
      {
        id: 'w',
        type: 'wait_for_reply',
        timeout: 60,
        branches: [{ match: { type: 'any' }, next: 'w' }],
        onTimeout: 'end',
      },
      END,
    ]);
    let state = start(d).state;
    for (let i = 0; i < 30; i++)
      state = advance(d, state, { type: 'reply_received', reply: { text: 'x', messageId: `id${i}` } }).state;
    expect(state.consumedReplyIds).toHaveLength(20);
    expect(state.consumedReplyIds[0]).toBe('id10');
  });
});

describe('runaway guards and broken definitions', () => {
  it('fails with step_limit_exceeded when a call executes too many inline steps', () => {
    const chain = Array.from({ length: 10 }, (_, i) => ({
      id: `c${i}`,
      type: 'condition',
      rules: [{ left: '1', operator: 'equals', right: '2', next: 'end' }],
      else: i === 9 ? 'end' : `c${i + 1}`,
    }));
    const d = def([...chain, END]);
    expect(start(d).state.status).toBe('completed');
    const r = start(d, {}, { maxInlineSteps: 5 });
    expect(r.state.status).toBe('failed');
    expect(r.state.error).toMatchObject({ code: 'step_limit_exceeded', nodeId: 'c5' });
    expect(r.effects).toEqual([{ type: 'fail', seq: 6, error: r.state.error }]);
  });

  it('an unvalidated busy loop given to advance is stopped by the step limit', () => {
    const good = def([{ id: 'd', type: 'delay', duration: 1, next: 'end' }, END]);
    const looping = def([
      { id: 'd', type: 'delay', duration: 1, next: 'c' },
      { id: 'c', type: 'condition', rules: [{ left: '1', operator: 'equals', right: '1', next: 'c' }], else: 'end' },
      END,
    ]);
    const r = advance(looping, start(good).state, { type: 'timer_fired', seq: 1 });
    expect(r.state.status).toBe('failed');
    expect(r.state.error!.code).toBe('step_limit_exceeded');
    expect(r.state.seq).toBe(1 + 1001);
  });

  it('fails with node_not_found when the definition lost the waiting node', () => {
    const d = def([{ id: 'd', type: 'delay', duration: 1, next: 'end' }, END]);
    const r = advance(def([END]), start(d).state, { type: 'timer_fired', seq: 1 });
    expect(r.state.error).toMatchObject({ code: 'node_not_found', nodeId: 'd' });
    expect(r.effects).toEqual([expect.objectContaining({ type: 'fail' })]);
  });

  it('fails with node_not_found when an edge points nowhere', () => {
    const d = def([{ id: 'd', type: 'delay', duration: 1, next: 'end' }, END]);
    const r = advance(def([{ id: 'd', type: 'delay', duration: 1, next: 'gone' }]), start(d).state, {
      type: 'timer_fired',
      seq: 1,
    });
    expect(r.state.error).toMatchObject({ code: 'node_not_found', nodeId: 'gone' });
  });

  it('turns a malformed node into a failed run instead of throwing', () => {
    const d = def([
      { id: 'd', type: 'delay', duration: 1, next: 'c' },
      { id: 'c', type: 'condition', rules: [{ left: '1', operator: 'equals', right: '1', next: 'end' }], else: 'end' },
      END,
    ]);
    const broken = def([
      { id: 'd', type: 'delay', duration: 1, next: 'c' },
      { id: 'c', type: 'condition', rules: null, else: 'end' },
      END,
    ]);
    const r = advance(broken, start(d).state, { type: 'timer_fired', seq: 1 });
    expect(r.state.status).toBe('failed');
    expect(r.state.error).toMatchObject({ code: 'invalid_definition', nodeId: 'c' });
    expect(r.effects).toEqual([expect.objectContaining({ type: 'fail' })]);
  });
});

describe('effectIdempotencyKey', () => {
  it('is derived from the run id and the step seq only', () => {
    expect(effectIdempotencyKey('r-1', 3)).toBe('run:r-1:step:3');
    expect(effectIdempotencyKey('r-1', 3)).not.toBe(effectIdempotencyKey('r-1', 4));
    expect(effectIdempotencyKey('r-1', 3)).not.toBe(effectIdempotencyKey('r-2', 3));
  });
});

describe('defensive copies', () => {
  it('mutating an emitted effect does not change the stored pending effect', () => {
    const d = def([{ id: 's', type: 'send_template', templateName: 't', variables: { name: 'a' }, next: 'end' }, END]);
    const r = start(d, { contact });
    (r.effects[0] as any).variables.name = 'tampered';
    expect((r.state.waitingFor as any).effect.variables.name).toBe('a');
  });

  it('a tampered state cannot write vars.__proto__', () => {
    const d = def([
      { id: 'h', type: 'http_request', method: 'GET', url: 'https://x', saveAs: 'res', next: 'end' },
      END,
    ]);
    const state = JSON.parse(
      JSON.stringify(start(d).state).replace('"saveAs":"res"', '"saveAs":"__proto__"'),
    ) as RunState;
    const r = advance(d, state, {
      type: 'effect_completed',
      seq: 1,
      result: { status: 200, body: { polluted: true } },
    });
    expect(Object.getPrototypeOf(r.state.context.vars)).toBe(Object.prototype);
    expect((r.state.context.vars as any).polluted).toBeUndefined();
    expect(r.state.status).toBe('completed');
  });
});
