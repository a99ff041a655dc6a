import { randomBytes } from 'node:crypto';
import { SecretBox, WrongSecretsKeyError } from './secret-box';

describe('SecretBox', () => {
  const oldKey = randomBytes(32).toString('hex');
  const newKey = randomBytes(32).toString('base64');

  it('seals with the current key and opens with it or with a previous key (rotation)', () => {
    const sealedOld = new SecretBox(oldKey).encrypt('token-1');
    const rotating = new SecretBox(newKey, [oldKey]);
    expect(rotating.open(sealedOld)).toEqual({ plain: 'token-1', withCurrentKey: false });
    const resealed = rotating.reseal(sealedOld)!;
    expect(new SecretBox(newKey).decrypt(resealed)).toBe('token-1');
    expect(rotating.reseal(resealed)).toBeNull(); // already sealed with the current key
    expect(() => new SecretBox(newKey).decrypt(sealedOld)).toThrow(WrongSecretsKeyError);
  });

  it('names the current key by a fingerprint, never the key', () => {
    const box = new SecretBox(oldKey);
    expect(box.keyFingerprint).toMatch(/^[0-9a-f]{12}$/);
    expect(oldKey).not.toContain(box.keyFingerprint);
    expect(new SecretBox(oldKey).keyFingerprint).toBe(box.keyFingerprint);
    expect(new SecretBox(newKey).keyFingerprint).not.toBe(box.keyFingerprint);
  });
});
