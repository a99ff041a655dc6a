/**
 * Request and response types of the WhatsApp Cloud API (Graph API), with Meta's field names.
 * Only what Switchboard uses; unknown fields in responses are tolerated.
 */

/** How to reach the Cloud API for one connected phone number. */
export interface CloudApiConnection {
  /** https://graph.facebook.com in production, the sandbox's URL in dev and tests */
  baseUrl: string;
  /** e.g. "v21.0" */
  apiVersion: string;
  accessToken: string;
  phoneNumberId: string;
  /** the WhatsApp Business Account (WABA) id that owns templates and flows */
  businessAccountId: string;
}

// ------------------------------------------------------------------ messages

export interface TextObject {
  body: string;
  preview_url?: boolean;
}

export interface MediaObject {
  link?: string;
  id?: string;
  caption?: string;
  /** documents only */
  filename?: string;
}

export type MediaType = 'image' | 'video' | 'document' | 'audio' | 'sticker';

export interface CurrencyParameter {
  fallback_value: string;
  code: string;
  amount_1000: number;
}

export type TemplateParameter =
  | { type: 'text'; text: string; parameter_name?: string }
  | { type: 'currency'; currency: CurrencyParameter; parameter_name?: string }
  | { type: 'date_time'; date_time: { fallback_value: string }; parameter_name?: string }
  | { type: 'image'; image: MediaObject }
  | { type: 'video'; video: MediaObject }
  | { type: 'document'; document: MediaObject }
  | { type: 'payload'; payload: string }
  | { type: 'action'; action: { flow_token?: string; flow_action_data?: Record<string, unknown> } }
  | { type: 'coupon_code'; coupon_code: string };

export type TemplateSendComponent =
  | { type: 'header'; parameters: TemplateParameter[] }
  | { type: 'body'; parameters: TemplateParameter[] }
  | {
      type: 'button';
      sub_type: 'quick_reply' | 'url' | 'flow' | 'copy_code' | 'catalog';
      index: string | number;
      parameters: TemplateParameter[];
    }
  | { type: 'carousel'; cards: Array<{ card_index: number; components: TemplateSendComponent[] }> };

export interface TemplateMessageObject {
  name: string;
  language: { code: string; policy?: 'deterministic' };
  components?: TemplateSendComponent[];
}

export interface InteractiveHeader {
  type: 'text' | 'image' | 'video' | 'document';
  text?: string;
  image?: MediaObject;
  video?: MediaObject;
  document?: MediaObject;
}

interface InteractiveBase {
  header?: InteractiveHeader;
  body: { text: string };
  footer?: { text: string };
}

export interface InteractiveButton extends InteractiveBase {
  type: 'button';
  action: { buttons: Array<{ type: 'reply'; reply: { id: string; title: string } }> };
}

export interface InteractiveCtaUrl extends InteractiveBase {
  type: 'cta_url';
  action: { name: 'cta_url'; parameters: { display_text: string; url: string } };
}

export interface FlowActionParameters {
  flow_message_version: '3';
  flow_token?: string;
  flow_id?: string;
  flow_name?: string;
  flow_cta: string;
  flow_action?: 'navigate' | 'data_exchange';
  flow_action_payload?: { screen?: string; data?: Record<string, unknown> };
  mode?: 'draft' | 'published';
}

export interface InteractiveFlow extends InteractiveBase {
  type: 'flow';
  action: { name: 'flow'; parameters: FlowActionParameters };
}

export interface InteractiveList extends InteractiveBase {
  type: 'list';
  action: {
    button: string;
    sections: Array<{ title?: string; rows: Array<{ id: string; title: string; description?: string }> }>;
  };
}

export type InteractiveObject = InteractiveButton | InteractiveCtaUrl | InteractiveFlow | InteractiveList;

interface MessageBase {
  messaging_product: 'whatsapp';
  recipient_type?: 'individual';
  /** a phone number; or, for a user known only by a business-scoped user id, `recipient` instead */
  to?: string;
  recipient?: string;
  /** reply to a message */
  context?: { message_id: string };
  biz_opaque_callback_data?: string;
}

export type SendMessageRequest = MessageBase &
  (
    | { type?: 'text'; text: TextObject }
    | { type: 'image'; image: MediaObject }
    | { type: 'video'; video: MediaObject }
    | { type: 'document'; document: MediaObject }
    | { type: 'audio'; audio: MediaObject }
    | { type: 'sticker'; sticker: MediaObject }
    | { type: 'template'; template: TemplateMessageObject }
    | { type: 'interactive'; interactive: InteractiveObject }
    | { type: 'reaction'; reaction: { message_id: string; emoji: string } }
  );

export interface SendMessageResponse {
  messaging_product: 'whatsapp';
  contacts: Array<{ input: string; wa_id: string }>;
  messages: Array<{ id: string; message_status?: 'accepted' | 'held_for_quality_assessment' | 'paused' }>;
}

export interface MarkAsReadRequest {
  messaging_product: 'whatsapp';
  status: 'read';
  message_id: string;
  typing_indicator?: { type: 'text' };
}

export interface SuccessResponse {
  success: boolean;
}

// ------------------------------------------------------------------ phone number

export interface PhoneNumberDetails {
  id: string;
  display_phone_number: string;
  verified_name: string;
  quality_rating?: 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN' | (string & {});
  code_verification_status?: string;
  platform_type?: string;
  throughput?: { level: 'STANDARD' | 'HIGH' | 'NOT_APPLICABLE' | (string & {}) };
  messaging_limit_tier?: string;
  [key: string]: unknown;
}

// ------------------------------------------------------------------ templates

export type TemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
export type TemplateStatus =
  | 'PENDING'
  | 'APPROVED'
  | 'REJECTED'
  | 'PAUSED'
  | 'DISABLED'
  | 'IN_APPEAL'
  | 'PENDING_DELETION'
  | 'DELETED'
  | 'LIMIT_EXCEEDED';

export type TemplateButton =
  | { type: 'QUICK_REPLY'; text: string }
  | { type: 'URL'; text: string; url: string; example?: string[] }
  | { type: 'PHONE_NUMBER'; text: string; phone_number: string }
  | {
      type: 'FLOW';
      text: string;
      flow_id?: string;
      flow_name?: string;
      flow_action?: 'navigate' | 'data_exchange';
      navigate_screen?: string;
    }
  | { type: 'COPY_CODE'; example: string }
  | { type: 'OTP'; otp_type: 'COPY_CODE' | 'ONE_TAP' | 'ZERO_TAP'; text?: string };

export interface TemplateExample {
  header_text?: string[];
  header_handle?: string[];
  header_text_named_params?: Array<{ param_name: string; example: string }>;
  body_text?: string[][];
  body_text_named_params?: Array<{ param_name: string; example: string }>;
}

export type TemplateComponent =
  | {
      type: 'HEADER';
      format: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT' | 'LOCATION';
      text?: string;
      example?: TemplateExample;
    }
  | { type: 'BODY'; text: string; example?: TemplateExample; add_security_recommendation?: boolean }
  | { type: 'FOOTER'; text: string; code_expiration_minutes?: number }
  | { type: 'BUTTONS'; buttons: TemplateButton[] }
  | { type: 'CAROUSEL'; cards: Array<{ components: TemplateComponent[] }> };

export interface CreateTemplateRequest {
  name: string;
  language: string;
  category: TemplateCategory;
  parameter_format?: 'POSITIONAL' | 'NAMED';
  allow_category_change?: boolean;
  components: TemplateComponent[];
}

export interface CreateTemplateResponse {
  id: string;
  status: TemplateStatus;
  category: TemplateCategory;
}

export interface MessageTemplate {
  id: string;
  name: string;
  language: string;
  status: TemplateStatus;
  category: TemplateCategory;
  parameter_format?: 'POSITIONAL' | 'NAMED';
  components: TemplateComponent[];
  rejected_reason?: string;
  [key: string]: unknown;
}

export interface EditTemplateRequest {
  category?: TemplateCategory;
  components?: TemplateComponent[];
}

export interface ListTemplatesQuery {
  name?: string;
  status?: TemplateStatus;
  language?: string;
  limit?: number;
  after?: string;
  before?: string;
  fields?: string;
}

export interface Paging {
  cursors?: { before?: string; after?: string };
  next?: string;
  previous?: string;
}

export interface ListResponse<T> {
  data: T[];
  paging?: Paging;
}

// ------------------------------------------------------------------ flows

export type FlowCategory =
  | 'SIGN_UP'
  | 'SIGN_IN'
  | 'APPOINTMENT_BOOKING'
  | 'LEAD_GENERATION'
  | 'CONTACT_US'
  | 'CUSTOMER_SUPPORT'
  | 'SURVEY'
  | 'OTHER';

export type FlowStatus = 'DRAFT' | 'PUBLISHED' | 'DEPRECATED' | 'BLOCKED' | 'THROTTLED';

export interface FlowValidationError {
  error: string;
  error_type: string;
  message: string;
  line_start?: number;
  line_end?: number;
  column_start?: number;
  column_end?: number;
  pointers?: unknown[];
}

export interface CreateFlowRequest {
  name: string;
  categories: FlowCategory[];
  clone_flow_id?: string;
  endpoint_uri?: string;
  /** Flow JSON as a string (create-and-upload in one call) */
  flow_json?: string;
  publish?: boolean;
}

export interface CreateFlowResponse {
  id: string;
  success?: boolean;
  validation_errors?: FlowValidationError[];
}

export interface UploadFlowJsonResponse {
  success: boolean;
  validation_errors: FlowValidationError[];
}

export interface FlowDetails {
  id: string;
  name: string;
  status: FlowStatus;
  categories: FlowCategory[];
  validation_errors: FlowValidationError[];
  json_version?: string;
  endpoint_uri?: string;
  [key: string]: unknown;
}

// ------------------------------------------------------------------ errors

/** Graph API error body. */
export interface GraphApiErrorBody {
  error: {
    message: string;
    type?: string;
    code: number;
    error_subcode?: number;
    error_user_title?: string;
    error_user_msg?: string;
    is_transient?: boolean;
    error_data?: { messaging_product?: string; details?: string } | string;
    fbtrace_id?: string;
  };
}
