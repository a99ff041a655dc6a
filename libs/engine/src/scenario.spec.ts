/**
 * End-to-end scenarios through the public API, the way a driver runs them: perform the effects,
 * store the state as JSON, feed events back.
 */
import { orderConfirmationWorkflow, orderPayload } from './__fixtures__/workflows';
import {
  advance,
  start,
  validateDefinition,
  type Effect,
  type EngineEvent,
  type RunState,
  type StepResult,
  type WorkflowDefinition,
} from './index';

/** What a driver does between steps: persist the state as JSON and load it back. */
const roundTrip = (state: RunState): RunState => JSON.parse(JSON.stringify(state)) as RunState;

function feed(def: WorkflowDefinition, r: StepResult, event: EngineEvent): StepResult {
  const next = advance(def, roundTrip(r.state), event);
  expect(roundTrip(next.state)).toEqual(next.state);
  return next;
}

function only(effects: Effect[]): Effect {
  expect(effects).toHaveLength(1);
  return effects[0];
}

describe('scenario: webhook → send_template → wait_for_reply → reply "yes" → condition → send_template → end', () => {
  const def = orderConfirmationWorkflow();

  it('is a valid definition', () => {
    expect(validateDefinition(JSON.parse(JSON.stringify(def))).ok).toBe(true);
  });

  it('runs the happy path with a JSON round trip between every step', () => {
    let r = start(def, { payload: orderPayload, contact: { id: 'c-9' } });
    expect(only(r.effects)).toEqual({
      type: 'send_template',
      seq: 1,
      nodeId: 'ask',
      to: '+4915112345678',
      templateName: 'order_confirm',
      variables: { name: 'Ada', custom_order: 'A-17', cta_link: 'orders/A-17' },
    });
    expect(Object.keys((r.effects[0] as any).variables)).toEqual(['name', 'custom_order', 'cta_link']);

    r = feed(def, r, { type: 'effect_completed', seq: 1, result: { messageId: 'wamid.out1' } });
    expect(only(r.effects)).toEqual({ type: 'wait_for_reply', seq: 2, nodeId: 'wait', timeoutMs: 86_400_000 });
    expect(r.state).toMatchObject({
      status: 'waiting',
      currentNodeId: 'wait',
      waitingFor: { kind: 'reply', seq: 2, timeoutMs: 86_400_000 },
    });

    // Redelivered completion of the first send: ignored.
    const dup = feed(def, r, { type: 'effect_completed', seq: 1 });
    expect(dup.effects).toEqual([]);
    expect(dup.state).toEqual(r.state);

    // A reply that matches no branch keeps the run waiting.
    const chatter = feed(def, r, { type: 'reply_received', reply: { text: 'what is this?', messageId: 'wamid.in0' } });
    expect(chatter.effects).toEqual([]);
    expect(chatter.state).toEqual(r.state);

    r = feed(def, r, { type: 'reply_received', reply: { text: 'Yes', messageId: 'wamid.in1' } });
    // condition (total 120 ≥ 100) evaluated inline → vip_thanks
    expect(only(r.effects)).toEqual({
      type: 'send_template',
      seq: 4,
      nodeId: 'vip_thanks',
      to: '+4915112345678',
      templateName: 'vip_thanks',
      variables: { name: 'Ada', custom_reply: 'Yes' },
    });

    // The reply's timeout timer fires late: ignored.
    expect(feed(def, r, { type: 'timer_fired', seq: 2 }).effects).toEqual([]);

    r = feed(def, r, { type: 'effect_completed', seq: 4 });
    expect(r.effects).toEqual([{ type: 'complete', seq: 5 }]);
    expect(r.state.status).toBe('completed');
    expect(r.state.waitingFor).toBeNull();
    expect(r.state.history).toEqual([
      { seq: 1, nodeId: 'ask', type: 'send_template', outcome: 'completed' },
      { seq: 2, nodeId: 'wait', type: 'wait_for_reply', outcome: 'branch:1' },
      { seq: 3, nodeId: 'check', type: 'condition', outcome: 'rule:0' },
      { seq: 4, nodeId: 'vip_thanks', type: 'send_template', outcome: 'completed' },
      { seq: 5, nodeId: 'done', type: 'end', outcome: 'end' },
    ]);
    expect(r.state.historyCount).toBe(5);
    expect(r.state.context.reply).toEqual({ text: 'Yes', messageId: 'wamid.in1' });
  });

  it('takes the else branch for a small order', () => {
    let r = start(def, { payload: { ...orderPayload, order: { id: 'B-2', total: 20 } } });
    r = feed(def, r, { type: 'effect_completed', seq: 1 });
    r = feed(def, r, { type: 'reply_received', reply: { text: 'confirm' } });
    expect(only(r.effects)).toMatchObject({ nodeId: 'thanks', templateName: 'thanks', variables: {} });
  });

  it('takes the button branch to cancel', () => {
    let r = start(def, { payload: orderPayload });
    r = feed(def, r, { type: 'effect_completed', seq: 1 });
    r = feed(def, r, { type: 'reply_received', reply: { buttonPayload: 'CANCEL', buttonText: 'Cancel order' } });
    expect(only(r.effects)).toEqual({
      type: 'send_session_message',
      seq: 3,
      nodeId: 'cancelled',
      to: '+4915112345678',
      text: 'Order A-17 cancelled.',
    });
  });

  it('runs the timeout path', () => {
    let r = start(def, { payload: orderPayload });
    r = feed(def, r, { type: 'effect_completed', seq: 1 });
    // A timer with a wrong seq is ignored.
    expect(feed(def, r, { type: 'timer_fired', seq: 1 }).effects).toEqual([]);
    r = feed(def, r, { type: 'timer_fired', seq: 2 });
    expect(only(r.effects)).toMatchObject({
      type: 'send_template',
      seq: 3,
      nodeId: 'reminder',
      templateName: 'order_reminder',
    });
    // A reply after the timeout is ignored (the run is waiting for the reminder's send).
    expect(feed(def, r, { type: 'reply_received', reply: { text: 'yes' } }).effects).toEqual([]);
    r = feed(def, r, { type: 'effect_completed', seq: 3 });
    expect(r.effects).toEqual([{ type: 'complete', seq: 4 }]);
    expect(r.state.history.map((h) => `${h.nodeId}:${h.outcome}`)).toEqual([
      'ask:completed',
      'wait:timeout',
      'reminder:completed',
      'done:end',
    ]);
  });

  it('fails with a binding error when the payload has no phone', () => {
    const r = start(def, { payload: { order: { id: 'X' } } });
    expect(r.state.status).toBe('failed');
    expect(r.state.error).toMatchObject({
      code: 'binding_error',
      nodeId: 'ask',
      field: 'to',
      paths: ['payload.customer.phone'],
    });
  });

  it('works when the definition itself went through JSON (as stored in Postgres)', () => {
    const stored = JSON.parse(JSON.stringify(def)) as WorkflowDefinition;
    let r = start(stored, { payload: orderPayload });
    r = feed(stored, r, { type: 'effect_completed', seq: 1 });
    r = feed(stored, r, { type: 'reply_received', reply: { text: 'yes' } });
    expect(Object.keys((r.effects[0] as any).variables)).toEqual(['name', 'custom_reply']);
  });
});

describe('scenario: keyword trigger with a reminder loop (delay inside a cycle)', () => {
  const def: WorkflowDefinition = {
    trigger: { type: 'keyword', keywords: ['JOIN'] },
    startNodeId: 'welcome',
    nodes: [
      {
        id: 'welcome',
        type: 'send_session_message',
        text: 'Welcome! Reply with your city.',
        buttons: [{ text: 'Skip', payload: 'SKIP' }],
        next: 'ask',
      },
      {
        id: 'ask',
        type: 'wait_for_reply',
        timeout: '1h',
        branches: [
          { match: { type: 'button', payload: 'SKIP' }, next: 'bye' },
          { match: { type: 'any' }, next: 'save' },
        ],
        onTimeout: 'count',
      },
      {
        id: 'count',
        type: 'http_request',
        method: 'POST',
        url: 'https://crm.example.com/nudges',
        body: { phone: '{{contact.phone}}' },
        saveAs: 'nudge',
        next: 'again',
      },
      {
        id: 'again',
        type: 'condition',
        rules: [{ left: '{{vars.nudge.body.count}}', operator: 'lt', right: '3', next: 'wait_a_bit' }],
        else: 'bye',
      },
      { id: 'wait_a_bit', type: 'delay', duration: '1d', next: 'welcome' },
      { id: 'save', type: 'update_contact', fields: { custom_city: '{{reply.text}}' }, next: 'bye' },
      { id: 'bye', type: 'end' },
    ],
  };

  it('loops through the delay until the condition stops it', () => {
    expect(validateDefinition(def)).toMatchObject({ ok: true });
    let r = start(def, { payload: { text: 'join' }, contact: { phone: '+333' } });
    for (let round = 1; round <= 3; round++) {
      const send = only(r.effects);
      expect(send).toMatchObject({
        type: 'send_session_message',
        nodeId: 'welcome',
        buttons: [{ text: 'Skip', payload: 'SKIP' }],
      });
      r = feed(def, r, { type: 'effect_completed', seq: send.seq });
      const wait = only(r.effects);
      expect(wait.type).toBe('wait_for_reply');
      r = feed(def, r, { type: 'timer_fired', seq: wait.seq });
      const http = only(r.effects);
      expect(http).toMatchObject({ type: 'http_request', body: { phone: '+333' } });
      r = feed(def, r, { type: 'effect_completed', seq: http.seq, result: { status: 200, body: { count: round } } });
      if (round < 3) {
        const timer = only(r.effects);
        expect(timer).toMatchObject({ type: 'start_timer', durationMs: 86_400_000 });
        r = feed(def, r, { type: 'timer_fired', seq: timer.seq });
      }
    }
    expect(r.effects).toEqual([expect.objectContaining({ type: 'complete' })]);
  });

  it('saves the answer to the contact', () => {
    let r = start(def, { payload: { text: 'join' }, contact: { id: 'c1', phone: '+333' } });
    r = feed(def, r, { type: 'effect_completed', seq: 1 });
    r = feed(def, r, { type: 'reply_received', reply: { text: 'Lisbon' } });
    expect(only(r.effects)).toEqual({
      type: 'update_contact',
      seq: 3,
      nodeId: 'save',
      contactId: 'c1',
      phone: '+333',
      fields: { custom_city: 'Lisbon' },
    });
  });
});
