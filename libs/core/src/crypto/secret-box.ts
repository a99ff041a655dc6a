import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Raised when no configured key opens a sealed value: the data was written with another ENCRYPTION_KEY. */
export class WrongSecretsKeyError extends Error {
  constructor() {
    super('No configured key opens this value: it was encrypted with another ENCRYPTION_KEY');
  }
}

function decodeKey(key: string, setting: string): Buffer {
  const trimmed = key.trim();
  const bytes = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (bytes.length !== 32) throw new Error(`${setting} must decode to 32 bytes`);
  return bytes;
}

/**
 * AES-256-GCM for secrets kept at rest (platform access tokens, webhook signing secrets). Output:
 * v1.<iv>.<tag>.<ciphertext>, base64url. Seals with ENCRYPTION_KEY; opens with it or, during a key rotation, with
 * ENCRYPTION_KEY_PREVIOUS (docs/production.md "Secrets").
 */
export class SecretBox {
  private readonly key: Buffer;
  private readonly previous: Buffer[];

  constructor(key: string, previousKeys: Array<string | undefined> = []) {
    this.key = decodeKey(key, 'ENCRYPTION_KEY');
    this.previous = previousKeys
      .filter((k): k is string => Boolean(k))
      .map((k) => decodeKey(k, 'ENCRYPTION_KEY_PREVIOUS'));
  }

  /** The box of a process: ENCRYPTION_KEY, and ENCRYPTION_KEY_PREVIOUS when set. */
  static fromConfig(config: { ENCRYPTION_KEY: string; ENCRYPTION_KEY_PREVIOUS?: string }): SecretBox {
    return new SecretBox(config.ENCRYPTION_KEY, [config.ENCRYPTION_KEY_PREVIOUS]);
  }

  /** A short, non-secret name of the current key (the first 12 hex digits of its SHA-256), for logs and checks. */
  get keyFingerprint(): string {
    return createHash('sha256').update(this.key).digest('hex').slice(0, 12);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  decrypt(sealed: string): string {
    return this.open(sealed).plain;
  }

  /** Opens `sealed` and says whether the current key did it (false: a previous key; re-encrypt it). */
  open(sealed: string): { plain: string; withCurrentKey: boolean } {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('Unrecognised encrypted value');
    for (const [index, key] of [this.key, ...this.previous].entries()) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        const plain = Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
          'utf8',
        );
        return { plain, withCurrentKey: index === 0 };
      } catch {
        // not this key: try the next one
      }
    }
    throw new WrongSecretsKeyError();
  }

  /** `sealed` re-encrypted with the current key, or null when it already is. */
  reseal(sealed: string): string | null {
    const { plain, withCurrentKey } = this.open(sealed);
    return withCurrentKey ? null : this.encrypt(plain);
  }
}
