import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new endpoint signing secret: `whsec_` + 32 random bytes in base64 (the Standard Webhooks format). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one delivery attempt. With several secrets (during a rotation's overlap) the
 * signature header carries one `v1,<sig>` per secret, space-separated: a receiver holding either secret verifies it.
 */
export function signedHeaders(secrets: string[], webhookId: string, at: Date, payload: string): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(webhookId, at, payload)).join(' ');
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}
