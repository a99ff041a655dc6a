import type {
  FlowActionParameters,
  InteractiveHeader,
  MediaType,
  SendMessageRequest,
  TemplateSendComponent,
} from './cloud-api.types';
import { BUSINESS_SCOPED_USER_ID } from './webhook/webhook.types';

/**
 * The one builder of Cloud API message requests (`POST /{phone-number-id}/messages` bodies), typed by Meta's shapes.
 * Every sender uses it: the send pipeline stores what it returns as `messages.payload` (API sends, campaigns,
 * automations, flows) and CloudApiClient's send helpers wrap it.
 */
export interface MessageOptions {
  /** reply to this wamid (`context.message_id`) */
  replyTo?: string;
  /** echoed back in status webhooks by Meta */
  bizOpaqueCallbackData?: string;
}

export interface InteractiveParts extends MessageOptions {
  body: string;
  header?: InteractiveHeader;
  footer?: string;
}

/** `to` is a phone number (digits) or a business-scoped user id (WhatsApp usernames), which Meta takes as `recipient`. */
function envelope(to: string, opts: MessageOptions) {
  return {
    messaging_product: 'whatsapp' as const,
    recipient_type: 'individual' as const,
    ...(BUSINESS_SCOPED_USER_ID.test(to) ? { recipient: to } : { to }),
    ...(opts.replyTo ? { context: { message_id: opts.replyTo } } : {}),
    ...(opts.bizOpaqueCallbackData ? { biz_opaque_callback_data: opts.bizOpaqueCallbackData } : {}),
  };
}

function interactiveParts(args: InteractiveParts) {
  return {
    ...(args.header ? { header: args.header } : {}),
    body: { text: args.body },
    ...(args.footer ? { footer: { text: args.footer } } : {}),
  };
}

export function textMessage(
  to: string,
  body: string,
  opts: MessageOptions & { previewUrl?: boolean } = {},
): SendMessageRequest {
  return {
    ...envelope(to, opts),
    type: 'text',
    text: { body, ...(opts.previewUrl !== undefined ? { preview_url: opts.previewUrl } : {}) },
  };
}

/** Media by public URL (`link`). `filename` applies to documents; audio has no caption. */
export function mediaMessage(
  to: string,
  type: MediaType,
  link: string,
  opts: MessageOptions & { caption?: string; filename?: string } = {},
): SendMessageRequest {
  const media: { link: string; caption?: string; filename?: string } = { link };
  if (opts.caption !== undefined) media.caption = opts.caption;
  if (opts.filename !== undefined) media.filename = opts.filename;
  return { ...envelope(to, opts), type, [type]: media } as SendMessageRequest;
}

export function templateMessage(
  to: string,
  name: string,
  languageCode: string,
  components?: TemplateSendComponent[],
  opts: MessageOptions = {},
): SendMessageRequest {
  return {
    ...envelope(to, opts),
    type: 'template',
    template: { name, language: { code: languageCode }, ...(components?.length ? { components } : {}) },
  };
}

/** Reply buttons (1 to 3, titles up to 20 characters). */
export function buttonsMessage(
  to: string,
  args: InteractiveParts & { buttons: Array<{ id: string; title: string }> },
): SendMessageRequest {
  return {
    ...envelope(to, args),
    type: 'interactive',
    interactive: {
      type: 'button',
      ...interactiveParts(args),
      action: { buttons: args.buttons.map((b) => ({ type: 'reply' as const, reply: { id: b.id, title: b.title } })) },
    },
  };
}

export function ctaUrlMessage(
  to: string,
  args: InteractiveParts & { displayText: string; url: string },
): SendMessageRequest {
  return {
    ...envelope(to, args),
    type: 'interactive',
    interactive: {
      type: 'cta_url',
      ...interactiveParts(args),
      action: { name: 'cta_url', parameters: { display_text: args.displayText, url: args.url } },
    },
  };
}

export interface FlowMessageArgs extends InteractiveParts {
  flowId?: string;
  flowName?: string;
  flowCta: string;
  flowToken?: string;
  mode?: 'draft' | 'published';
  flowAction?: 'navigate' | 'data_exchange';
  screen?: string;
  data?: Record<string, unknown>;
}

/** An interactive Flow message (by flowId or flowName). */
export function flowMessage(to: string, args: FlowMessageArgs): SendMessageRequest {
  if (!args.flowId && !args.flowName) throw new Error('flowMessage: flowId or flowName is required');
  const parameters: FlowActionParameters = { flow_message_version: '3', flow_cta: args.flowCta };
  if (args.flowId) parameters.flow_id = args.flowId;
  if (args.flowName) parameters.flow_name = args.flowName;
  if (args.flowToken) parameters.flow_token = args.flowToken;
  if (args.mode) parameters.mode = args.mode;
  if (args.flowAction) parameters.flow_action = args.flowAction;
  if (args.screen || args.data) {
    parameters.flow_action_payload = {
      ...(args.screen ? { screen: args.screen } : {}),
      ...(args.data ? { data: args.data } : {}),
    };
  }
  return {
    ...envelope(to, args),
    type: 'interactive',
    interactive: { type: 'flow', ...interactiveParts(args), action: { name: 'flow', parameters } },
  };
}
