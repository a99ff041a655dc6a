import { maxInWindow } from '../../../test/bench/scenarios/campaign';
import { checkScheduledAt, mergeVariables, validateCreateCampaign, validateTriggerBody } from './campaign-requests';
import { backlogLimit, refillSize } from './campaign-fanout';

describe('campaign requests', () => {
  it.each([
    ['2030-06-01T09:00:00Z', '2030-06-01T09:00:00.000Z'],
    ['2030-06-01T09:00Z', '2030-06-01T09:00:00.000Z'],
    ['2030-06-01T09:00:00.123456+00:00', '2030-06-01T09:00:00.123Z'], // Python
    ['2030-06-01T09:00:00.1234567+02:00', '2030-06-01T07:00:00.123Z'], // .NET
    ['2030-06-01T09:00:00.123456789Z', '2030-06-01T09:00:00.123Z'], // Go
    ['2030-06-01T09:00:00+0100', '2030-06-01T08:00:00.000Z'],
    ['2030-06-01 09:00:00-05:00', '2030-06-01T14:00:00.000Z'],
  ])('scheduledAt %s is %s', (text, iso) => {
    const errors: Array<{ field: string; message: string }> = [];
    expect(checkScheduledAt(text, errors, Date.parse('2030-01-01T00:00:00Z'))?.toISOString()).toBe(iso);
    expect(errors).toEqual([]);
  });

  it.each(['2030-06-01 09:00', '2030-06-01', '2030-02-31T09:00:00Z', '2030-06-01T24:00:00Z', '2030-06-01T09:00:00+01'])(
    'scheduledAt %s is refused',
    (text) => {
      const errors: Array<{ field: string; message: string }> = [];
      expect(checkScheduledAt(text, errors, Date.parse('2030-01-01T00:00:00Z'))).toBeNull();
      expect(errors.map((e) => e.field)).toEqual(['scheduledAt']);
    },
  );

  it('per-contact variables go over the defaults: defaults keep their place, new keys follow in order', () => {
    const merged = mergeVariables({ name: 'there', custom_code: 'D' }, { custom_city: 'Rome', name: 'Ann' });
    expect(Object.entries(merged)).toEqual([
      ['name', 'Ann'],
      ['custom_code', 'D'],
      ['custom_city', 'Rome'],
    ]);
  });

  it('trigger body: every contact checked, fields named by index; numbers normalised', () => {
    const ok = validateTriggerBody(
      { contacts: [{ phoneNumber: '+49 151 1234-5678', name: ' Ann ', variables: { custom_n: 7 } }] },
      10,
    );
    expect(ok.value).toEqual([
      { index: 0, number: '4915112345678', name: 'Ann', email: null, variables: { custom_n: '7' } },
    ]);
    const bad = validateTriggerBody(
      { contacts: [{ phoneNumber: '1' }, 'x', { phoneNumber: '4915112345678', variables: [1] }] },
      10,
    );
    expect(bad.value).toBeUndefined();
    expect(bad.errors.map((e) => e.field)).toEqual(['contacts[0].phoneNumber', 'contacts[1]', 'contacts[2].variables']);
    expect(
      validateTriggerBody({ contacts: new Array(11).fill({ phoneNumber: '4915112345678' }) }, 10).errors[0].message,
    ).toMatch(/at most 10 contacts/);
  });

  it('create body: required fields and event/callback rules', () => {
    const { errors } = validateCreateCampaign({ name: 'x', messagingPhoneId: '1', templateName: 't', event: ['read'] });
    expect(errors).toEqual([{ field: 'callback_url', message: 'callback_url is required when event is given' }]);
    expect(
      validateCreateCampaign({ name: 'x', messagingPhoneId: 1, templateName: 't', group_ids: [2, '2', 0] }).errors,
    ).toEqual([{ field: 'group_ids[2]', message: 'group_ids[2] must be a group id (a positive integer)' }]);
  });

  it('backlog: about 2 seconds of the rate, within bounds', () => {
    expect([backlogLimit(1), backlogLimit(80), backlogLimit(1000), backlogLimit(10_000)]).toEqual([
      20, 160, 4000, 5000,
    ]);
  });

  it('backlog: topped up in batches of half the backlog, at most one fan-out batch', () => {
    expect([20, 160, 4000, 5000].map(refillSize)).toEqual([10, 80, 1000, 1000]);
  });

  it('bench: highest count in any 1-second window', () => {
    expect(maxInWindow([0, 100, 999, 1000, 1500, 1999, 2000]).count).toBe(3);
  });
});
