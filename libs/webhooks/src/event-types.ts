/**
 * The account webhook event types (docs/webhooks.md lists each payload). An endpoint subscribes to a list of them or
 * to `*` (every type, also those added later). `webhook.test` is sent only by POST /v1/webhook-endpoints/{id}/test.
 */
export const WEBHOOK_EVENT_TYPES = [
  'message.received',
  'message.status',
  'template_status_update',
  'campaign.completed',
  'workflow_run.failed',
  'webhook_endpoint.disabled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const TEST_EVENT_TYPE = 'webhook.test';

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** What a receiver gets: the body of every delivery (and an item of GET /v1/events). */
export interface WebhookEnvelope<T = Record<string, unknown>> {
  id: string;
  type: string;
  createdAt: string;
  accountId: string;
  data: T;
}
