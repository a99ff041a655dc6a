import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Client secrets are 256-bit random strings, so a fast SHA-256 is enough to keep them safe at rest
 * (no dictionary to attack); comparison is constant-time.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export interface NewClientCredentials {
  clientId: string;
  clientSecret: string;
  secretHash: string;
}

export function generateClientCredentials(): NewClientCredentials {
  const clientId = `sbc_${randomBytes(12).toString('hex')}`;
  const clientSecret = `sbs_${randomBytes(32).toString('base64url')}`;
  return { clientId, clientSecret, secretHash: hashSecret(clientSecret) };
}
