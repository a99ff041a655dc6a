import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header value Meta sends: `sha256=` + hex HMAC-SHA256 of the raw body with the app secret. */
export function computeSignature(rawBody: Buffer | string, appSecret: string): string {
  return 'sha256=' + createHmac('sha256', appSecret).update(rawBody).digest('hex');
}

/**
 * Verify `X-Hub-Signature-256` over the exact raw request body (not re-serialised JSON).
 * Constant-time comparison; false for a missing or malformed header or an empty secret.
 */
export function verifySignature(
  rawBody: Buffer | string,
  header: string | string[] | undefined | null,
  appSecret: string,
): boolean {
  if (!appSecret || typeof header !== 'string') return false;
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!m) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  const given = Buffer.from(m[1], 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
