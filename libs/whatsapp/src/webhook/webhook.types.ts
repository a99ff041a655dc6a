/** Flat events parsed from Meta's webhook envelope. */

export interface StatusError {
  code: number;
  title?: string;
  message?: string;
  details?: string;
}

export type MessageStatus = 'sent' | 'delivered' | 'read' | 'failed' | 'deleted' | 'warning' | (string & {});

export interface StatusEvent {
  kind: 'status';
  wabaId?: string;
  phoneNumberId: string;
  wamid: string;
  status: MessageStatus;
  /** seconds since epoch, as Meta sends it */
  timestamp: number;
  recipientId: string;
  errors?: StatusError[];
  conversationId?: string;
  pricingCategory?: string;
  bizOpaqueCallbackData?: string;
}

export interface MessageEvent {
  kind: 'message';
  wabaId?: string;
  phoneNumberId: string;
  wamid: string;
  from: string;
  timestamp: number;
  /** text, button, interactive, image, ... */
  type: string;
  /** interactive sub-type: button_reply, list_reply, nfm_reply */
  interactiveType?: string;
  text?: string;
  /** quick-reply template button payload, or interactive button/list reply id */
  buttonPayload?: string;
  /** button text or reply title */
  buttonText?: string;
  /** the wamid this message answers (`context.id`) */
  contextWamid?: string;
  /** parsed `nfm_reply.response_json` of a Flow reply (includes flow_token) */
  flowResponse?: Record<string, unknown>;
  profileName?: string;
  media?: { id?: string; mime_type?: string; caption?: string; filename?: string };
  /** a shared location */
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  /** a reaction to one of our messages (`emoji` empty when the reaction is removed) */
  reaction?: { messageWamid: string; emoji: string };
}

export interface TemplateStatusEvent {
  kind: 'template_status';
  wabaId?: string;
  templateId: string;
  templateName: string;
  language: string;
  /** APPROVED, REJECTED, PAUSED, DISABLED, ... */
  event: string;
  reason: string | null;
  category?: string;
}

export interface UnknownEvent {
  kind: 'unknown';
  wabaId?: string;
  field: string;
}

export type WebhookEvent = StatusEvent | MessageEvent | TemplateStatusEvent | UnknownEvent;
