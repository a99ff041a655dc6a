/**
 * The `data` of each event type, built from what the owning module has at hand. These shapes are the public
 * contract documented in docs/webhooks.md: add fields, never rename or remove one.
 */
import type { MessageEvent, StatusEvent } from '@switchboard/whatsapp';

/** message.received: a customer's message, stored as `messageId`. */
export function messageReceivedData(event: MessageEvent, messageId: string): Record<string, unknown> {
  return {
    messageId,
    wamid: event.wamid,
    messagingPhoneId: event.phoneNumberId,
    from: event.from,
    profileName: event.profileName ?? null,
    timestamp: new Date(event.timestamp * 1000).toISOString(),
    type: event.type,
    interactiveType: event.interactiveType ?? null,
    text: event.text ?? null,
    button:
      event.buttonPayload !== undefined || event.buttonText !== undefined
        ? { payload: event.buttonPayload ?? null, text: event.buttonText ?? null }
        : null,
    media: event.media ?? null,
    location: event.location ?? null,
    reaction: event.reaction ?? null,
    flowResponse: event.flowResponse ?? null,
    contextWamid: event.contextWamid ?? null,
  };
}

/** message.status: one of our messages reached sent, delivered, read or failed (each at most once per message). */
export function messageStatusData(
  event: StatusEvent,
  message: { messageId: string; recipient: string },
): Record<string, unknown> {
  const error = event.status === 'failed' ? event.errors?.[0] : undefined;
  return {
    messageId: message.messageId,
    wamid: event.wamid || null, // null: the platform refused the send, no WhatsApp message exists
    messagingPhoneId: event.phoneNumberId,
    recipient: message.recipient,
    status: event.status,
    timestamp: new Date(event.timestamp * 1000).toISOString(),
    error: error
      ? {
          code: error.code ?? null,
          title: error.title ?? null,
          message: error.message ?? null,
          details: error.details ?? null,
        }
      : null,
  };
}

/** campaign.completed: a started campaign sent (or skipped) every recipient; counts: GET /v2/campaigns/{id}. */
export function campaignCompletedData(c: {
  id: string | number;
  name: string;
  messaging_phone_id: string;
  template_name: string;
  template_language: string;
  started_at: Date | string | null;
  completed_at: Date | string;
}): Record<string, unknown> {
  return {
    campaignId: Number(c.id),
    name: c.name,
    messagingPhoneId: c.messaging_phone_id,
    templateName: c.template_name,
    templateLanguage: c.template_language,
    startedAt: c.started_at ? new Date(c.started_at).toISOString() : null,
    completedAt: new Date(c.completed_at).toISOString(),
  };
}

/** workflow_run.failed: an automation run ended in failure (the failing node and the error). */
export function workflowRunFailedData(run: {
  runId: string;
  workflowId: string | number;
  workflowVersion?: number | null;
  nodeId: string | null;
  error: { message: string; code?: string } | null;
  contactPhone?: string | null;
}): Record<string, unknown> {
  return {
    runId: run.runId,
    workflowId: Number(run.workflowId),
    workflowVersion: run.workflowVersion ?? null,
    nodeId: run.nodeId,
    error: run.error ? { message: run.error.message, code: run.error.code ?? null } : null,
    contactPhone: run.contactPhone ?? null,
  };
}
