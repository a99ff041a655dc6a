/** Flat events parsed from Meta's webhook envelope. */

/**
 * A business-scoped user id (BSUID, WhatsApp usernames, 2026): ISO country code, optional `ENT.` (parent BSUID),
 * then up to 128 alphanumerics, e.g. `US.13491208655302741918`. Sends address such a user with `recipient` instead of `to`.
 */
export const BUSINESS_SCOPED_USER_ID = /^[A-Z]{2}\.(ENT\.)?[A-Za-z0-9]{1,128}$/;

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
  /** the customer's phone (wa id); Meta may withhold it for a user with a username: then the BSUID */
  recipientId: string;
  /** the customer's business-scoped user id (`recipient_user_id`), when Meta sends it */
  recipientUserId?: string;
  errors?: StatusError[];
  conversationId?: string;
  /** `conversation.origin.type` (only for free entry point conversations from v24.0 on) */
  conversationOrigin?: string;
  pricingCategory?: string;
  /** `pricing.type` (regular, free_customer_service, free_entry_point) */
  pricingType?: string;
  bizOpaqueCallbackData?: string;
}

/** Message types Meta documents for the `messages` webhook (v24); anything else is stored as `unsupported`. */
export const KNOWN_MESSAGE_TYPES = [
  'text',
  'image',
  'audio',
  'video',
  'document',
  'sticker',
  'location',
  'contacts',
  'interactive',
  'button',
  'reaction',
  'order',
  'system',
  'unsupported',
  'unknown',
  'request_welcome',
  'revoke',
  'edit',
] as const;

export interface LocationContent {
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
  url?: string;
}

export interface ReactionContent {
  /** the wamid reacted to */
  messageId: string;
  /** null when the customer removed the reaction */
  emoji: string | null;
}

export interface OrderContent {
  catalogId?: string;
  text?: string;
  productItems: Array<{ productRetailerId: string; quantity: number; itemPrice: number; currency: string }>;
}

export interface MessageEvent {
  kind: 'message';
  wabaId?: string;
  phoneNumberId: string;
  wamid: string;
  /**
   * The customer: the phone number (wa id) when Meta sends it, else the business-scoped user id (`from_user_id`,
   * e.g. `US.13491208655302741918`) of a user known only by a username.
   */
  from: string;
  /** the business-scoped user id (`from_user_id`, or `contacts[].user_id`) when Meta sends one */
  fromUserId?: string;
  /** the customer's WhatsApp username (`contacts[].profile.username`) */
  username?: string;
  timestamp: number;
  /** Meta's type (text, image, location, contacts, reaction, order, system, ...); `unsupported` for kinds we do not know */
  type: string;
  /** the type as Meta sent it, when it is not one we know (stored as `unsupported`) */
  originalType?: string;
  /**
   * true for what the platform reports but the customer did not write to us: system messages (number changed),
   * revoked (deleted) and edited messages, reaction removals. They do not open the 24-hour window, do not mark a
   * message as replied and do not reach automations.
   */
  informational?: true;
  /** interactive sub-type: button_reply, list_reply, nfm_reply */
  interactiveType?: string;
  text?: string;
  /** quick-reply template button payload, or interactive button/list reply id */
  buttonPayload?: string;
  /** button text or reply title */
  buttonText?: string;
  /** the wamid this message answers (`context.id`; for a reaction, the message reacted to) */
  contextWamid?: string;
  /** parsed `nfm_reply.response_json` of a Flow reply (includes flow_token) */
  flowResponse?: Record<string, unknown>;
  profileName?: string;
  media?: {
    id?: string;
    mime_type?: string;
    caption?: string;
    filename?: string;
    sha256?: string;
    voice?: boolean;
    animated?: boolean;
    url?: string;
  };
  location?: LocationContent;
  /** shared contact cards (vCards), as Meta sends them (name, phones, emails, addresses, org, urls, birthday) */
  contacts?: Array<Record<string, unknown>>;
  reaction?: ReactionContent;
  order?: OrderContent;
  /** `system` messages: `{type: user_changed_number | user_identity_changed, body, new_wa_id?, wa_id?, user_id?}` */
  system?: Record<string, unknown>;
  /** revoke / edit: the wamid of the message that was deleted or edited */
  originalWamid?: string;
  /** edit: the new content (Meta's message object) */
  edited?: Record<string, unknown>;
  /** click-to-WhatsApp ads: `referral` as Meta sends it (source_url, source_id, source_type, headline, body, ctwa_clid, ...) */
  referral?: Record<string, unknown>;
  /** `context.referred_product` or a forwarded flag of the context */
  context?: Record<string, unknown>;
  /** errors Meta attaches (e.g. 131051 for an unsupported message type) */
  errors?: StatusError[];
  /** the type-specific object as Meta sent it (`message[type]`), kept whole */
  content?: Record<string, unknown>;
  /** unsupported kinds: the whole message object as received */
  raw?: Record<string, unknown>;
}

/** A template's category changed by Meta (`template_category_update`). */
export interface TemplateCategoryEvent {
  kind: 'template_category';
  wabaId?: string;
  templateId: string;
  templateName: string;
  language: string;
  previousCategory: string;
  newCategory: string;
  /** `correct_category`: Meta's announcement of a category it will apply later */
  correctCategory?: string;
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

export type WebhookEvent = StatusEvent | MessageEvent | TemplateStatusEvent | TemplateCategoryEvent | UnknownEvent;
