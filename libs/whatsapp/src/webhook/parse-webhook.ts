import { MessageEvent, StatusError, StatusEvent, WebhookEvent } from './webhook.types';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
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
      } else {
        events.push({ kind: 'unknown', wabaId, field });
      }
    }
  }
  return events;
}

function parseMessagesValue(value: Json, wabaId: string | undefined, events: WebhookEvent[]): void {
  const phoneNumberId = str(value.metadata?.phone_number_id) ?? '';
  const names = new Map<string, string>();
  for (const c of arr(value.contacts)) {
    if (isObj(c) && str(c.wa_id) && str(c.profile?.name)) names.set(str(c.wa_id)!, str(c.profile.name)!);
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
      recipientId: str(s.recipient_id) ?? '',
    };
    const errors = arr(s.errors).filter(isObj).map(toStatusError);
    if (errors.length) ev.errors = errors;
    if (str(s.conversation?.id)) ev.conversationId = str(s.conversation.id);
    if (str(s.pricing?.category)) ev.pricingCategory = str(s.pricing.category);
    if (str(s.biz_opaque_callback_data)) ev.bizOpaqueCallbackData = str(s.biz_opaque_callback_data);
    events.push(ev);
  }

  for (const m of arr(value.messages)) {
    if (!isObj(m) || !str(m.id) || !str(m.from)) continue;
    const type = str(m.type) ?? 'unknown';
    const ev: MessageEvent = {
      kind: 'message',
      wabaId,
      phoneNumberId,
      wamid: str(m.id)!,
      from: str(m.from)!,
      timestamp: num(m.timestamp),
      type,
    };
    const profileName = names.get(ev.from);
    if (profileName) ev.profileName = profileName;
    if (str(m.context?.id)) ev.contextWamid = str(m.context.id);
    if (type === 'text' && str(m.text?.body) !== undefined) ev.text = str(m.text.body);
    if (type === 'button' && isObj(m.button)) {
      ev.buttonPayload = str(m.button.payload);
      ev.buttonText = str(m.button.text);
    }
    if (type === 'interactive' && isObj(m.interactive)) {
      const it = m.interactive;
      ev.interactiveType = str(it.type);
      const reply = isObj(it.button_reply) ? it.button_reply : isObj(it.list_reply) ? it.list_reply : undefined;
      if (reply) {
        ev.buttonPayload = str(reply.id);
        ev.buttonText = str(reply.title);
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
      }
    }
    const media = ['image', 'video', 'document', 'audio', 'sticker'].includes(type) && isObj(m[type]) ? m[type] : undefined;
    if (media) {
      ev.media = {
        ...(str(media.id) ? { id: str(media.id) } : {}),
        ...(str(media.mime_type) ? { mime_type: str(media.mime_type) } : {}),
        ...(str(media.caption) ? { caption: str(media.caption) } : {}),
        ...(str(media.filename) ? { filename: str(media.filename) } : {}),
      };
      if (str(media.caption)) ev.text = str(media.caption);
    }
    if (type === 'location' && isObj(m.location) && typeof m.location.latitude === 'number' && typeof m.location.longitude === 'number') {
      ev.location = {
        latitude: m.location.latitude,
        longitude: m.location.longitude,
        ...(str(m.location.name) ? { name: str(m.location.name) } : {}),
        ...(str(m.location.address) ? { address: str(m.location.address) } : {}),
      };
    }
    if (type === 'reaction' && isObj(m.reaction) && str(m.reaction.message_id)) {
      ev.reaction = { messageWamid: str(m.reaction.message_id)!, emoji: str(m.reaction.emoji) ?? '' };
    }
    events.push(ev);
  }
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
