import { Logger } from '@nestjs/common';
import { BlockedTargetError, OutboundHttpError } from '@switchboard/core';
import type { ActionEffect } from '@switchboard/engine';
import type { DataSource } from 'typeorm';
import type { PerformEffectInput } from '../../../../workflows/activities';
import { ActivityNotAvailableError, type AutomationActivities } from '../activities/activities';
import { isTransientActivityError, TemporalActivities, TransientActivityError } from './temporal-activities';

/** A fake AutomationActivities: records calls, answers per method, idempotent by key like a real one must be. */
function fakeActivities() {
  const calls: Array<{ method: string; input: any }> = [];
  const byKey = new Map<string, unknown>();
  const failWith: { error?: unknown } = {};
  const record = (method: string, result: (input: any) => unknown) => async (input: any) => {
    calls.push({ method, input });
    if (failWith.error) throw failWith.error;
    if (byKey.has(input.idempotencyKey)) return byKey.get(input.idempotencyKey);
    const value = result(input);
    byKey.set(input.idempotencyKey, value);
    return value;
  };
  const activities: AutomationActivities = {
    sendTemplate: record('sendTemplate', (i) => ({ messageId: `wamid.${i.idempotencyKey}`, at: new Date(0) })),
    sendSessionMessage: record('sendSessionMessage', () => ({ messageId: 'wamid.session' })),
    triggerCampaign: record('triggerCampaign', () => undefined),
    httpRequest: record('httpRequest', () => ({
      status: 503,
      body: { down: true },
    })) as AutomationActivities['httpRequest'],
    updateContact: record('updateContact', () => ({ contactId: '9' })),
  };
  return { activities, calls, failWith, sent: () => byKey.size };
}

const input = (effect: ActionEffect, extra: Partial<PerformEffectInput> = {}): PerformEffectInput => ({
  runId: 'r1',
  accountId: '42',
  seq: effect.seq,
  idempotencyKey: `run:r1:step:${effect.seq}`,
  effect,
  ...extra,
});

const effects: Array<[ActionEffect, string]> = [
  [
    {
      type: 'send_template',
      seq: 1,
      nodeId: 'ask',
      to: '447700900001',
      templateName: 'order_confirm',
      variables: { a: '1' },
    },
    'sendTemplate',
  ],
  [
    { type: 'send_session_message', seq: 2, nodeId: 'say', to: '447700900001', text: 'hi' } as ActionEffect,
    'sendSessionMessage',
  ],
  [
    {
      type: 'trigger_campaign',
      seq: 3,
      nodeId: 'camp',
      campaignId: '7',
      contact: { phoneNumber: '447700900001' },
    } as ActionEffect,
    'triggerCampaign',
  ],
  [
    {
      type: 'http_request',
      seq: 4,
      nodeId: 'call',
      method: 'POST',
      url: 'https://example.com/x',
      headers: {},
      body: { a: 1 },
    } as ActionEffect,
    'httpRequest',
  ],
  [
    { type: 'update_contact', seq: 5, nodeId: 'tag', phone: '447700900001', fields: { tier: 'gold' } } as ActionEffect,
    'updateContact',
  ],
];

// The adapters log every failure they classify; the assertions say what matters here.
beforeAll(() => Logger.overrideLogger(false));
afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

describe('TemporalActivities.performEffect (the Temporal worker → AUTOMATION_ACTIVITIES adapter)', () => {
  it.each(effects)(
    'dispatches %j to %s with the context and the idempotency key, like the embedded driver',
    async (effect, method) => {
      const fake = fakeActivities();
      const adapter = new TemporalActivities({} as DataSource, fake.activities);
      const outcome = await adapter.performEffect(input(effect, { messagingPhoneId: 'mp-1' }));
      expect(fake.calls).toHaveLength(1);
      expect(fake.calls[0].method).toBe(method);
      const { type: _type, ...fields } = effect;
      // Exactly what EmbeddedDriver.perform passes: the context, then the effect's fields without `type`.
      expect(fake.calls[0].input).toEqual({
        accountId: '42',
        runId: 'r1',
        idempotencyKey: `run:r1:step:${effect.seq}`,
        messagingPhoneId: 'mp-1',
        ...fields,
      });
      expect(fake.calls[0].input.seq).toBe(effect.seq);
      expect(outcome.ok).toBe(true);
    },
  );

  it('returns JSON results (dates serialised, undefined → no result; a non-2xx HTTP status is a result)', async () => {
    const fake = fakeActivities();
    const adapter = new TemporalActivities({} as DataSource, fake.activities);
    expect(await adapter.performEffect(input(effects[0][0]))).toEqual({
      ok: true,
      result: { messageId: 'wamid.run:r1:step:1', at: '1970-01-01T00:00:00.000Z' },
    });
    expect(await adapter.performEffect(input(effects[2][0]))).toEqual({ ok: true });
    expect(await adapter.performEffect(input(effects[3][0]))).toEqual({
      ok: true,
      result: { status: 503, body: { down: true } },
    });
    expect(fake.calls[0].input.messagingPhoneId).toBeNull();
  });

  it('a retried activity (same idempotency key) does not act twice', async () => {
    const fake = fakeActivities();
    const adapter = new TemporalActivities({} as DataSource, fake.activities);
    const first = await adapter.performEffect(input(effects[0][0]));
    const again = await adapter.performEffect(input(effects[0][0]));
    expect(again).toEqual(first);
    expect(fake.calls.map((c) => c.input.idempotencyKey)).toEqual(['run:r1:step:1', 'run:r1:step:1']);
    expect(fake.sent()).toBe(1);
  });

  it.each([
    [
      'ActivityNotAvailableError',
      new ActivityNotAvailableError('send_template is not available'),
      { message: 'send_template is not available', code: 'activity_not_available' },
    ],
    [
      'an SSRF refusal',
      new BlockedTargetError('target 127.0.0.1 is not allowed (loopback address)'),
      { message: 'target 127.0.0.1 is not allowed (loopback address)', code: 'blocked_target' },
    ],
    [
      'an http_request timeout',
      new OutboundHttpError('request to x timed out after 10 ms', 'timeout'),
      { message: 'request to x timed out after 10 ms', code: 'timeout' },
    ],
    [
      'an http_request network error',
      new OutboundHttpError('connect ECONNREFUSED', 'network_error'),
      { message: 'connect ECONNREFUSED', code: 'network_error' },
    ],
    [
      'a validation error',
      Object.assign(new Error('invalid recipient'), { code: 'validation' }),
      { message: 'invalid recipient', code: 'validation' },
    ],
    [
      'a plain error (missing contact)',
      new Error('no contact with phone number 1 in this account'),
      { message: 'no contact with phone number 1 in this account' },
    ],
  ])('permanent failure (%s) → { ok: false } with message and code, not retried', async (_what, error, expected) => {
    const fake = fakeActivities();
    fake.failWith.error = error;
    const adapter = new TemporalActivities({} as DataSource, fake.activities);
    await expect(adapter.performEffect(input(effects[0][0]))).resolves.toEqual({ ok: false, error: expected });
  });

  it.each([
    ['TransientActivityError', new TransientActivityError('platform unavailable')],
    ['retryable: true', Object.assign(new Error('rate limited'), { retryable: true })],
    [
      'database connection refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    [
      'postgres connection failure (08006)',
      Object.assign(new Error('connection failure'), { name: 'QueryFailedError', driverError: { code: '08006' } }),
    ],
    ['postgres serialization failure', Object.assign(new Error('could not serialize'), { code: '40001' })],
    ['postgres shutting down (57P01)', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a platform 503', Object.assign(new Error('Service Unavailable'), { status: 503 })],
    ['a platform 429', Object.assign(new Error('Too Many Requests'), { statusCode: 429 })],
  ])('transient failure (%s) is thrown, so Temporal retries it', async (_what, error) => {
    const fake = fakeActivities();
    fake.failWith.error = error;
    const adapter = new TemporalActivities({} as DataSource, fake.activities);
    await expect(adapter.performEffect(input(effects[0][0]))).rejects.toBe(error);
  });

  it('classifies non-errors and 4xx as permanent', () => {
    expect(isTransientActivityError('boom')).toBe(false);
    expect(isTransientActivityError(Object.assign(new Error('bad request'), { status: 400 }))).toBe(false);
    expect(isTransientActivityError(Object.assign(new Error('unique violation'), { code: '23505' }))).toBe(false);
  });

  it('forWorker() exposes exactly the activity names the workflow proxies', async () => {
    const adapter = new TemporalActivities({} as DataSource, fakeActivities().activities);
    const bound = adapter.forWorker();
    expect(Object.keys(bound).sort()).toEqual(['performEffect', 'recordRunState']);
    await expect(bound.performEffect(input(effects[4][0]))).resolves.toEqual({ ok: true, result: { contactId: '9' } });
  });
});
