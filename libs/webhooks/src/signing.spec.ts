import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signedHeaders } from './signing';

describe('Standard Webhooks signing', () => {
  const payload = JSON.stringify({
    id: 'evt_1',
    type: 'message.status',
    createdAt: '2026-11-23T10:00:00.000Z',
    accountId: '1',
    data: { status: 'read' },
  });

  it('new secrets are whsec_ + 32 random bytes, different each time', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });

  it('verifies with the library; with two secrets (rotation) either one verifies, a third does not', () => {
    const [current, previous, other] = [newSigningSecret(), newSigningSecret(), newSigningSecret()];
    const headers = signedHeaders([current, previous], 'evt_1', new Date(), payload);
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(payload, headers)).toEqual(JSON.parse(payload));
    expect(new Webhook(previous).verify(payload, headers)).toEqual(JSON.parse(payload));
    expect(() => new Webhook(other).verify(payload, headers)).toThrow(/No matching signature/);
  });

  it('a changed body or id, or a timestamp older than 5 minutes, fails', () => {
    const secret = newSigningSecret();
    const headers = signedHeaders([secret], 'evt_1', new Date(), payload);
    expect(() => new Webhook(secret).verify(payload.replace('read', 'sent'), headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(secret).verify(payload, { ...headers, 'webhook-id': 'evt_2' })).toThrow(
      /No matching signature/,
    );
    const old = signedHeaders([secret], 'evt_1', new Date(Date.now() - 6 * 60_000), payload);
    expect(() => new Webhook(secret).verify(payload, old)).toThrow(/too old/);
  });
});
