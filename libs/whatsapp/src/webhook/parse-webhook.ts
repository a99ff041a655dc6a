import {
  KNOWN_MESSAGE_TYPES,
  MessageEvent,
  OrderContent,
  StatusError,
  StatusEvent,
  WebhookEvent,
} from './webhook.types';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
const num = (v: unknown): number => {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
};

/**
 * Flatten a WhatsApp Business Account webhook (`{object, entry[].changes[]}`) into typed events.
 * Tolerant: unknown fields are ignored, unknown change fields become `{kind: 'unknown'}`,
 * malformed items are skipped. Never throws.
 */
export function parseWebhook(body: unknown): WebhookEvent[] {
  const events: WebhookEvent[] = [];
  if (!isObj(body)) return events;
  for (const entry of arr(body.entry)) {
    if (!isObj(entry)) continue;
    const wabaId = str(entry.id);
    for (const change of arr(entry.changes)) {
      if (!isObj(change)) continue;
      const field = str(change.field) ?? '';
      const value = isObj(change.value) ? change.value : {};
      if (field === 'messages') {
        parseMessagesValue(value, wabaId, events);
      } else if (field === 'message_template_status_update') {
        const templateId = str(value.message_template_id);
        const templateName = str(value.message_template_name);
        if (!templateId && !templateName) continue;
        events.push({
          kind: 'template_status',
          wabaId,
          templateId: templateId ?? '',
          templateName: templateName ?? '',
          language: str(value.message_template_language) ?? '',
          event: str(value.event) ?? '',
          reason: str(value.reason) ?? null,
          ...(str(value.message_template_category) ? { category: str(value.message_template_category) } : {}),
        });
      } else if (field === 'template_category_update') {
        const templateId = str(value.message_template_id);
        const templateName = str(value.message_template_name);
        const newCategory = str(value.new_category);
        const correctCategory = str(value.correct_category);
        if ((!templateId && !templateName) || (!newCategory && !correctCategory)) {
          events.push({ kind: 'unknown', wabaId, field });
          continue;
        }
        events.push({
          kind: 'template_category',
          wabaId,
          templateId: templateId ?? '',
          templateName: templateName ?? '',
          language: str(value.message_template_language) ?? '',
          previousCategory: str(value.previous_category) ?? str(value.old_category) ?? '',
          newCategory: newCategory ?? '',
          ...(correctCategory ? { correctCategory } : {}),
        });
      } else {
        events.push({ kind: 'unknown', wabaId, field });
      }
    }
  }
  return events;
}

function parseMessagesValue(value: Json, wabaId: string | undefined, events: WebhookEvent[]): void {
  const phoneNumberId = str(value.metadata?.phone_number_id) ?? '';
  // contacts[]: the sender's profile, keyed by phone (wa_id) and by business-scoped user id (user_id)
  const profiles = new Map<string, { name?: string; username?: string; userId?: string }>();
  for (const c of arr(value.contacts)) {
    if (!isObj(c)) continue;
    const profile = { name: str(c.profile?.name), username: str(c.profile?.username), userId: str(c.user_id) };
    for (const key of [str(c.wa_id), str(c.user_id)]) if (key) profiles.set(key, profile);
  }

  for (const s of arr(value.statuses)) {
    if (!isObj(s) || !str(s.id) || !str(s.status)) continue;
    const ev: StatusEvent = {
      kind: 'status',
      wabaId,
      phoneNumberId,
      wamid: str(s.id)!,
      status: str(s.status)!,
      timestamp: num(s.timestamp),
      recipientId: str(s.recipient_id) ?? str(s.recipient_user_id) ?? '',
    };
    if (str(s.recipient_user_id)) ev.recipientUserId = str(s.recipient_user_id);
    const errors = arr(s.errors).filter(isObj).map(toStatusError);
    if (errors.length) ev.errors = errors;
    if (str(s.conversation?.id)) ev.conversationId = str(s.conversation.id);
    if (str(s.conversation?.origin?.type)) ev.conversationOrigin = str(s.conversation.origin.type);
    if (str(s.pricing?.category)) ev.pricingCategory = str(s.pricing.category);
    if (str(s.pricing?.type)) ev.pricingType = str(s.pricing.type);
    if (str(s.biz_opaque_callback_data)) ev.bizOpaqueCallbackData = str(s.biz_opaque_callback_data);
    events.push(ev);
  }

  for (const m of arr(value.messages)) {
    const ev = parseMessage(m, wabaId, phoneNumberId, profiles);
    if (ev) events.push(ev);
  }
}

const MEDIA_TYPES = ['image', 'video', 'document', 'audio', 'sticker'];
const MEDIA_FIELDS = ['id', 'mime_type', 'caption', 'filename', 'sha256', 'url'] as const;

/** One inbound message: every documented kind keeps its content; an unknown kind becomes `unsupported` with the raw object. */
function parseMessage(
  m: unknown,
  wabaId: string | undefined,
  phoneNumberId: string,
  profiles: Map<string, { name?: string; username?: string; userId?: string }>,
): MessageEvent | null {
  if (!isObj(m) || !str(m.id)) return null;
  const phone = str(m.from);
  const profile = profiles.get(phone ?? '') ?? profiles.get(str(m.from_user_id) ?? '');
  const userId = str(m.from_user_id) ?? profile?.userId;
  const from = phone ?? userId;
  if (!from) return null;
  const sentType = str(m.type) ?? 'unknown';
  const known = (KNOWN_MESSAGE_TYPES as readonly string[]).includes(sentType);
  const type = known ? sentType : 'unsupported';
  const ev: MessageEvent = {
    kind: 'message',
    wabaId,
    phoneNumberId,
    wamid: str(m.id)!,
    from,
    timestamp: num(m.timestamp),
    type,
  };
  if (userId) ev.fromUserId = userId;
  if (profile?.name) ev.profileName = profile.name;
  if (profile?.username) ev.username = profile.username;
  if (!known) {
    ev.originalType = sentType;
    ev.raw = m;
  }
  const body = isObj(m[sentType]) ? (m[sentType] as Json) : undefined;
  if (body && !['text', 'button', 'interactive'].includes(type)) ev.content = body;

  if (isObj(m.context)) {
    if (str(m.context.id)) ev.contextWamid = str(m.context.id);
    const { id: _id, from: _from, ...rest } = m.context;
    if (Object.keys(rest).length) ev.context = rest;
  }
  if (isObj(m.referral)) ev.referral = m.referral;
  const errors = arr(m.errors).filter(isObj).map(toStatusError);
  if (errors.length) ev.errors = errors;

  switch (type) {
    case 'text':
      if (str(m.text?.body) !== undefined) ev.text = str(m.text.body);
      break;
    case 'button':
      if (isObj(m.button)) {
        ev.buttonPayload = str(m.button.payload);
        ev.buttonText = str(m.button.text);
      }
      break;
    case 'interactive':
      if (isObj(m.interactive)) parseInteractive(m.interactive, ev);
      break;
    case 'location':
      if (body) {
        ev.location = {
          latitude: num(body.latitude),
          longitude: num(body.longitude),
          ...(str(body.name) ? { name: str(body.name) } : {}),
          ...(str(body.address) ? { address: str(body.address) } : {}),
          ...(str(body.url) ? { url: str(body.url) } : {}),
        };
        ev.text =
          [ev.location.name, ev.location.address].filter(Boolean).join(', ') ||
          `${ev.location.latitude},${ev.location.longitude}`;
      }
      break;
    case 'contacts':
      ev.contacts = arr(m.contacts).filter(isObj);
      ev.text = ev.contacts
        .map((c) => str((c as Json).name?.formatted_name) ?? '')
        .filter(Boolean)
        .join(', ');
      break;
    case 'reaction':
      if (body) {
        const emoji = str(body.emoji) || null;
        ev.reaction = { messageId: str(body.message_id) ?? '', emoji };
        if (ev.reaction.messageId) ev.contextWamid = ev.reaction.messageId;
        if (emoji) ev.text = emoji;
        else ev.informational = true; // a removed reaction is not a message from the customer
      }
      break;
    case 'order':
      if (body) {
        ev.order = toOrder(body);
        if (ev.order.text) ev.text = ev.order.text;
      }
      break;
    case 'system':
      ev.informational = true;
      if (body) {
        ev.system = body;
        if (str(body.body)) ev.text = str(body.body);
      }
      break;
    case 'revoke':
      ev.informational = true;
      if (str(body?.original_message_id)) ev.originalWamid = str(body!.original_message_id);
      break;
    case 'edit':
      ev.informational = true;
      if (body) {
        if (str(body.original_message_id)) ev.originalWamid = str(body.original_message_id);
        if (isObj(body.message)) {
          ev.edited = body.message;
          const text = str(body.message.text?.body) ?? str(body.message[str(body.message.type) ?? '']?.caption);
          if (text !== undefined) ev.text = text;
        }
      }
      break;
    default:
      if (MEDIA_TYPES.includes(type) && body) {
        const media: NonNullable<MessageEvent['media']> = {};
        for (const key of MEDIA_FIELDS) if (str(body[key])) media[key] = str(body[key]);
        if (typeof body.voice === 'boolean') media.voice = body.voice;
        if (typeof body.animated === 'boolean') media.animated = body.animated;
        ev.media = media;
        if (media.caption) ev.text = media.caption;
      }
  }
  return ev;
}

function parseInteractive(it: Json, ev: MessageEvent): void {
  ev.interactiveType = str(it.type);
  const reply = isObj(it.button_reply) ? it.button_reply : isObj(it.list_reply) ? it.list_reply : undefined;
  if (reply) {
    ev.buttonPayload = str(reply.id);
    ev.buttonText = str(reply.title);
    if (str(reply.description)) ev.content = { description: str(reply.description) };
  }
  if (isObj(it.nfm_reply)) {
    const raw = it.nfm_reply.response_json;
    if (isObj(raw)) ev.flowResponse = raw;
    else if (typeof raw === 'string') {
      try {
        const parsed = JSON.parse(raw);
        ev.flowResponse = isObj(parsed) ? parsed : { value: parsed };
      } catch {
        ev.flowResponse = { raw };
      }
    }
    if (str(it.nfm_reply.body)) ev.text = str(it.nfm_reply.body);
    if (str(it.nfm_reply.name)) ev.content = { name: str(it.nfm_reply.name) };
  }
}

function toOrder(body: Json): OrderContent {
  return {
    ...(str(body.catalog_id) ? { catalogId: str(body.catalog_id) } : {}),
    ...(str(body.text) ? { text: str(body.text) } : {}),
    productItems: arr(body.product_items)
      .filter(isObj)
      .map((p) => ({
        productRetailerId: str(p.product_retailer_id) ?? '',
        quantity: num(p.quantity),
        itemPrice: num(p.item_price),
        currency: str(p.currency) ?? '',
      })),
  };
}

function toStatusError(e: Json): StatusError {
  const details = typeof e.error_data === 'string' ? e.error_data : str(e.error_data?.details);
  return {
    code: num(e.code),
    ...(str(e.title) ? { title: str(e.title) } : {}),
    ...(str(e.message) ? { message: str(e.message) } : {}),
    ...(details ? { details } : {}),
  };
}
