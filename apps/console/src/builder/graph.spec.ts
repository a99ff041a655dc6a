import { validateDefinition } from '@switchboard/engine';
import {
  addNode,
  connect,
  disconnect,
  edgesOf,
  removeNodes,
  renameNode,
  moveNode,
  sourceHandles,
  TRIGGER_ID,
  type Model,
} from './graph';

const empty = (): Model => ({
  definition: { trigger: { type: 'webhook' }, startNodeId: '', nodes: [] },
  layout: { nodes: {}, trigger: { x: 0, y: 0 } },
});

/** The builder's edits produce engine definitions: built by hand here, then checked by the engine's own validation. */
describe('builder graph model', () => {
  function built() {
    let m = empty();
    for (const type of ['send_template', 'wait_for_reply', 'send_session_message', 'end'] as const)
      m = addNode(m, type, { x: 10.4, y: 20.6 }).model;
    m = connect(m, 'send_template_1', 'next', 'wait_for_reply_1');
    m = connect(m, 'wait_for_reply_1', 'branches[0].next', 'send_session_message_1');
    m = connect(m, 'wait_for_reply_1', 'onTimeout', 'end_1');
    m = connect(m, 'send_session_message_1', 'next', 'end_1');
    return m;
  }

  it('the first node added becomes the start; connections write the fields the engine reads', () => {
    const m = built();
    expect(m.definition.startNodeId).toBe('send_template_1');
    expect(m.layout.nodes.end_1).toEqual({ x: 10, y: 21 });
    expect(m.definition.nodes[1]).toEqual({
      id: 'wait_for_reply_1',
      type: 'wait_for_reply',
      timeout: '1d',
      branches: [{ match: { type: 'any' }, next: 'send_session_message_1' }],
      onTimeout: 'end_1',
    });
    expect(edgesOf(m.definition).map((e) => e.id)).toEqual([
      `${TRIGGER_ID}:start`,
      'send_template_1:next',
      'wait_for_reply_1:branches[0].next',
      'wait_for_reply_1:onTimeout',
      'send_session_message_1:next',
    ]);
    const result = validateDefinition(m.definition);
    // only the forms are still empty: the graph itself is complete
    expect(result.ok ? [] : result.errors.map((e) => `${e.nodeId}.${e.field}`)).toEqual([
      'send_template_1.templateName',
      'send_session_message_1.text',
    ]);
  });

  it('a dangling node is reported by the engine on the node and field', () => {
    const m = disconnect(built(), 'send_session_message_1', 'next');
    const result = validateDefinition(m.definition);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors.some((e) => e.nodeId === 'send_session_message_1' && e.field === 'next')).toBe(
      true,
    );
  });

  it('removing a node removes its edges in both directions and its position', () => {
    const m = removeNodes(built(), ['wait_for_reply_1']);
    expect(m.definition.nodes.map((n) => n.id)).toEqual(['send_template_1', 'send_session_message_1', 'end_1']);
    expect(m.definition.nodes[0].next).toBeUndefined();
    expect(m.layout.nodes.wait_for_reply_1).toBeUndefined();
    expect(edgesOf(m.definition).map((e) => e.id)).toEqual([`${TRIGGER_ID}:start`, 'send_session_message_1:next']);
    expect(removeNodes(built(), ['send_template_1']).definition.startNodeId).toBe('');
  });

  it('the trigger edge sets startNodeId; the trigger cannot be a target nor deleted', () => {
    const m = built();
    expect(connect(m, TRIGGER_ID, 'start', 'end_1').definition.startNodeId).toBe('end_1');
    expect(connect(m, 'end_1', 'next', TRIGGER_ID)).toBe(m);
    expect(removeNodes(m, [TRIGGER_ID])).toBe(m);
  });

  it('renaming a node renames every reference; moving to the same place changes nothing', () => {
    const m = renameNode(built(), 'end_1', 'done');
    expect(m.definition.nodes[1].onTimeout).toBe('done');
    expect(m.definition.nodes[2].next).toBe('done');
    expect(m.layout.nodes.done).toBeDefined();
    expect(renameNode(m, 'done', 'send_template_1')).toBe(m); // taken
    expect(moveNode(m, 'done', { x: 10.2, y: 21.4 })).toBe(m);
  });

  it('handles: one per outgoing field of each kind', () => {
    const ids = (n: any) => sourceHandles(n).map((h) => h.id);
    expect(ids({ id: 'a', type: 'http_request' })).toEqual(['next', 'onError']);
    expect(ids({ id: 'a', type: 'condition', rules: [{}, {}] })).toEqual(['rules[0].next', 'rules[1].next', 'else']);
    expect(ids({ id: 'a', type: 'delay' })).toEqual(['next']);
    expect(ids({ id: 'a', type: 'end' })).toEqual([]);
  });
});
