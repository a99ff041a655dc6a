import { advance, start, type StepResult, type WorkflowDefinition, type WorkflowNode } from '@switchboard/engine';
import { offerPendingReplies } from './embedded-driver';

const definition = (nodes: unknown[]): WorkflowDefinition => ({
  trigger: { type: 'webhook' },
  startNodeId: 'ask',
  nodes: nodes as WorkflowNode[],
});
const wait = (id: string, next: string) => ({
  id,
  type: 'wait_for_reply',
  timeout: '1h',
  branches: [{ match: { type: 'keyword', keywords: ['yes'] }, next }],
  onTimeout: 'end',
});
const ask = (id: string, next: string) => ({ id, type: 'send_session_message', text: 'Shall we?', next });
const END = { id: 'end', type: 'end' };
const contact = { phone: '+4915100000001' };

/** The run's step that records the send of `nodeId` as done: it reaches the node after it. */
function sent(d: WorkflowDefinition, r: StepResult): StepResult {
  const waiting = r.state.waitingFor!;
  return advance(d, r.state, { type: 'effect_completed', seq: waiting.seq, result: { messageId: 'm' } });
}

describe('offerPendingReplies (embedded driver: replies kept while a run performed its steps)', () => {
  it('the first reply the wait takes resumes the run in the same step; its timeout is not started', () => {
    const d = definition([ask('ask', 'wait'), wait('wait', 'end'), END]);
    const reached = sent(d, start(d, { payload: {}, contact }));
    expect(reached.effects.map((e) => e.type)).toEqual(['wait_for_reply']);
    const { result, pending } = offerPendingReplies(d, reached, [
      { text: 'maybe', messageId: 'w1' },
      { text: 'yes', messageId: 'w2' },
    ]);
    expect(result.state.status).toBe('completed');
    expect(result.effects.map((e) => e.type)).toEqual(['complete']);
    expect(result.state.consumedReplyIds).toEqual(['w2']);
    expect(pending).toEqual([]);
  });

  it('replies after the one taken stay for a later wait when the run goes on to a step', () => {
    const d = definition([ask('ask', 'wait'), wait('wait', 'again'), ask('again', 'wait2'), wait('wait2', 'end'), END]);
    const reached = sent(d, start(d, { payload: {}, contact }));
    const { result, pending } = offerPendingReplies(d, reached, [
      { text: 'yes', messageId: 'w1' },
      { text: 'yes', messageId: 'w2' },
    ]);
    expect(result.state.waitingFor).toMatchObject({ kind: 'effect', nodeId: 'again' });
    expect(pending).toEqual([{ text: 'yes', messageId: 'w2' }]);
    // the next wait takes the one kept
    const next = offerPendingReplies(d, sent(d, result), pending);
    expect(next.result.state.status).toBe('completed');
    expect(next.pending).toEqual([]);
  });

  it('a run still performing a step keeps them; a delay or the end drops them', () => {
    const d = definition([ask('ask', 'pause'), { id: 'pause', type: 'delay', duration: 1, next: 'end' }, END]);
    const started = start(d, { payload: {}, contact });
    const kept = offerPendingReplies(d, started, [{ text: 'yes', messageId: 'w1' }]);
    expect(kept.pending).toHaveLength(1);
    expect(kept.result).toBe(started);
    expect(offerPendingReplies(d, sent(d, started), [{ text: 'yes', messageId: 'w1' }]).pending).toEqual([]);
  });
});
