import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { advance, start, templateNamesUsed, validateDefinition, type WorkflowDefinition } from './index';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)![1]) as WorkflowDefinition;

describe('README example', () => {
  it('is a valid definition', () => {
    const result = validateDefinition(example);
    expect(result.ok ? [] : result.errors).toEqual([]);
    expect(templateNamesUsed(example)).toEqual(['order_confirm', 'vip_thanks', 'thanks']);
  });

  it('runs: confirm → CRM lookup (gold) → vip → tag → end', () => {
    const payload = { customer: { phone: '+49151', name: 'Ada' }, order: { id: 'A1' }, token: 't' };
    let r = start(example, { payload, contact: { id: 'c1' } });
    r = advance(example, r.state, { type: 'effect_completed', seq: 1 });
    r = advance(example, r.state, { type: 'reply_received', reply: { text: 'Confirm' } });
    expect(r.effects[0]).toMatchObject({ type: 'http_request', body: { order: { id: 'A1' }, answer: 'Confirm' } });
    r = advance(example, r.state, {
      type: 'effect_completed',
      seq: 3,
      result: { status: 200, body: { tier: 'gold' } },
    });
    expect(r.effects[0]).toMatchObject({ nodeId: 'vip' });
    r = advance(example, r.state, { type: 'effect_completed', seq: 5 });
    expect(r.effects[0]).toMatchObject({
      type: 'update_contact',
      contactId: 'c1',
      fields: { custom_last_order: 'A1' },
    });
    r = advance(example, r.state, { type: 'effect_completed', seq: 6 });
    expect(r.state.status).toBe('completed');
  });

  it('runs the timeout path: delay → trigger_campaign', () => {
    const payload = { customer: { phone: '+49151', name: 'Ada' }, order: { id: 'A1' } };
    let r = start(example, { payload });
    r = advance(example, r.state, { type: 'effect_completed', seq: 1 });
    r = advance(example, r.state, { type: 'timer_fired', seq: 2 });
    expect(r.effects).toEqual([{ type: 'start_timer', seq: 3, nodeId: 'reminder', durationMs: 7_200_000 }]);
    r = advance(example, r.state, { type: 'timer_fired', seq: 3 });
    expect(r.effects).toEqual([
      {
        type: 'trigger_campaign',
        seq: 4,
        nodeId: 'remind',
        campaignId: '42',
        contact: { phoneNumber: '+49151', name: 'Ada' },
      },
    ]);
  });
});
