import type { RunState } from '@switchboard/engine';
import { runRowValues } from './run-row';

/** A run waiting on its first send, with whatever contact its payload bound. */
const waitingOnSend = (to: string, phone?: string) =>
  ({
    version: 1,
    status: 'running',
    currentNodeId: 'send',
    seq: 1,
    context: { contact: phone ? { phone } : {}, payload: {}, vars: {} },
    waitingFor: {
      kind: 'effect',
      seq: 1,
      effect: { type: 'send_template', seq: 1, nodeId: 'send', to, templateName: 't', variables: {} },
    },
    history: [],
    historyCount: 0,
    consumedReplyIds: [],
  }) as unknown as RunState;

describe('runRowValues: the contact a run is bound to is stored as replies are matched', () => {
  // [7] contact_phone, [9] the first message's recipient (the binding when the payload named no phone)
  it.each([
    ['0044 7700 900123', '447700900123'],
    ['+44 (0)7700 900123', '447700900123'],
    ['+49 151 1234 5678', '4915112345678'],
  ])('recipient %s → %s', (to, stored) => {
    expect(runRowValues(waitingOnSend(to))[9]).toBe(stored);
    expect(runRowValues(waitingOnSend('x', to))[7]).toBe(stored);
  });
});
