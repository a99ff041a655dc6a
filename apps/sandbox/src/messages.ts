import { randomBytes } from 'node:crypto';
import { cloudError, invalidParam } from './errors';
import { BSUID, isObj, Json, nonEmpty } from './json';
import { SandboxState, Template } from './state';
import { StatusScheduler } from './webhooks';

const MEDIA_TYPES = ['image', 'video', 'document', 'audio', 'sticker'];
const SESSION_TYPES = ['text', ...MEDIA_TYPES, 'interactive', 'reaction', 'location', 'contacts'];

const WAMID_PREFIX = randomBytes(9);
let wamidCounter = 0;

/** Unique per process run: a random prefix and a counter, base64url (real wamids are base64 too). */
export function newWamid(): string {
  const buf = Buffer.allocUnsafe(15);
  WAMID_PREFIX.copy(buf, 0);
  buf.writeUIntBE(++wamidCounter, 9, 6);
  return 'wamid.' + buf.toString('base64url');
}

/**
 * POST /{version}/{phone_number_id}/messages: validation, throughput limit, customer-care window,
 * template checks, then acceptance (wamid) and scheduling of the status webhooks.
 */
export function handleSendMessage(
  state: SandboxState,
  scheduler: StatusScheduler,
  phoneNumberId: string,
  body: unknown,
  requestId?: string,
): Json {
  if (!isObj(body)) throw invalidParam('Request body must be a JSON object');
  if (body.messaging_product !== 'whatsapp') {
    throw cloudError(100, 'The parameter messaging_product is required and must be "whatsapp".', {
      message: '(#100) The parameter messaging_product is required.',
    });
  }

  // mark as read
  if (body.status !== undefined) {
    if (body.status !== 'read') throw invalidParam('status must be "read"');
    if (!nonEmpty(body.message_id)) throw invalidParam('message_id is required when status is "read"');
    return { success: true };
  }

  // `to` (a phone number) or, for a user known by a business-scoped user id, `recipient`; `to` wins when both are given
  let waId: string;
  if (nonEmpty(body.to)) {
    waId = body.to.replace(/[^\d]/g, '');
    if (waId.length < 6 || waId.length > 15 || !/^\+?[\d\s\-()]+$/.test(body.to)) {
      throw invalidParam(`Invalid recipient phone number: ${body.to}`);
    }
    waId = state.whatsappIdOf(waId);
  } else if (nonEmpty(body.recipient)) {
    if (!BSUID.test(body.recipient)) throw invalidParam(`Invalid recipient: ${body.recipient}`);
    waId = body.recipient;
  } else {
    throw cloudError(100, 'The parameter to is required.', { message: '(#100) The parameter to is required.' });
  }
  if (body.recipient_type !== undefined && body.recipient_type !== 'individual') {
    throw invalidParam('recipient_type must be "individual"');
  }
  const type = body.type === undefined ? 'text' : body.type;
  if (typeof type !== 'string' || (type !== 'template' && !SESSION_TYPES.includes(type))) {
    throw invalidParam(`Unsupported message type: ${String(type)}`);
  }
  validateContent(state, type, body);

  const now = Date.now();
  const limit = state.config.messagesPerSecond[phoneNumberId] ?? state.config.defaultMessagesPerSecond;
  // throughput first: the platform refuses before looking at content rules; only accepted sends count
  if (!state.rate.fits(phoneNumberId, limit, now)) {
    throw cloudError(
      130429,
      `Cloud API message throughput has been reached (${limit} messages per second for this phone number).`,
    );
  }
  const pair = state.config.pairRateLimit;
  const pairKey = `${phoneNumberId}:${waId}`;
  if (pair && !state.pairRate.fits(pairKey, pair.messages, now, pair.windowMs)) {
    throw cloudError(
      131056,
      'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.',
    );
  }

  let category = 'service';
  // Like Meta: a session message outside the 24-hour window is accepted (200 with a wamid) and then reported in a
  // `failed` status webhook with error 131047; it is never sent (no `sent` status).
  let windowClosed = false;
  if (type === 'template') {
    category = checkTemplate(state, phoneNumberId, body.template as Json).category.toLowerCase();
  } else if (state.config.enforceCustomerCareWindow) {
    const last = state.lastInbound.get(`${phoneNumberId}:${waId}`);
    windowClosed = last === undefined || now - last > state.config.customerCareWindowMs;
  }

  state.rate.take(phoneNumberId, limit, now);
  if (pair) state.pairRate.take(pairKey, pair.messages, now);
  state.knownPhones.add(phoneNumberId);
  const wamid = newWamid();
  state.stats.accepted++;
  // the log holds what reached the customer: a message refused for the closed window only gets its failed status
  if (!windowClosed)
    state.messages.add({
      wamid,
      phone_number_id: phoneNumberId,
      to: waId,
      type,
      acceptedAt: new Date(now).toISOString(),
      ...(state.config.messageLogPayloads ? { payload: body } : {}),
      ...(requestId ? { request_id: requestId } : {}),
    });
  const rule = state.config.failureRules.find((r) => waId.endsWith(r.toSuffix));
  if (windowClosed) state.stats.rejected[131047] = (state.stats.rejected[131047] ?? 0) + 1;
  scheduler.schedule(
    {
      wamid,
      phoneNumberId,
      recipientId: waId,
      category,
      failure: windowClosed
        ? {
            code: 131047,
            details:
              'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
            beforeSent: true,
          }
        : rule
          ? { code: rule.code, details: rule.details }
          : undefined,
      // Meta echoes the sender's opaque data in every status of the message
      bizOpaque: typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : undefined,
    },
    now,
  );
  return {
    messaging_product: 'whatsapp',
    contacts: [nonEmpty(body.to) ? { input: body.to, wa_id: waId } : { input: body.recipient, user_id: waId }],
    messages: [{ id: wamid, ...(type === 'template' ? { message_status: 'accepted' } : {}) }],
  };
}

function validateContent(state: SandboxState, type: string, body: Json): void {
  const content = body[type];
  if (!isObj(content))
    throw cloudError(100, `The parameter ${type} is required.`, {
      message: `(#100) The parameter ${type} is required.`,
    });
  switch (type) {
    case 'text':
      if (!nonEmpty(content.body)) throw invalidParam('text.body is required');
      if (content.body.length > 4096) throw invalidParam('text.body must be at most 4096 characters');
      return;
    case 'image':
    case 'video':
    case 'document':
    case 'audio':
    case 'sticker':
      if (!nonEmpty(content.link) && !nonEmpty(content.id))
        throw invalidParam(`${type}.link or ${type}.id is required`);
      if (nonEmpty(content.link) && !/^https?:\/\//.test(content.link))
        throw invalidParam(`${type}.link must be an http(s) URL`);
      if (content.caption !== undefined && (typeof content.caption !== 'string' || content.caption.length > 1024)) {
        throw invalidParam(`${type}.caption must be a string of at most 1024 characters`);
      }
      return;
    case 'template':
      if (!nonEmpty(content.name)) throw invalidParam('template.name is required');
      if (!isObj(content.language) || !nonEmpty(content.language.code))
        throw invalidParam('template.language.code is required');
      if (content.components !== undefined && !Array.isArray(content.components))
        throw invalidParam('template.components must be an array');
      return;
    case 'interactive':
      return validateInteractive(state, content);
    case 'reaction':
      if (!nonEmpty(content.message_id)) throw invalidParam('reaction.message_id is required');
      return;
    default:
      return;
  }
}

function validateInteractive(state: SandboxState, it: Json): void {
  const kind = it.type;
  const body = it.body;
  const action = it.action;
  if (!isObj(action)) throw invalidParam('interactive.action is required');
  const needBody = () => {
    if (!isObj(body) || !nonEmpty(body.text)) throw invalidParam('interactive.body.text is required');
    if ((body.text as string).length > 1024)
      throw invalidParam('interactive.body.text must be at most 1024 characters');
  };
  switch (kind) {
    case 'button': {
      needBody();
      const buttons = action.buttons;
      if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) {
        throw invalidParam('interactive.action.buttons must hold 1 to 3 buttons');
      }
      const ids = new Set<string>();
      for (const b of buttons) {
        const reply = isObj(b) && b.type === 'reply' && isObj(b.reply) ? b.reply : null;
        if (!reply || !nonEmpty(reply.id) || !nonEmpty(reply.title)) {
          throw invalidParam('each button must be {type: "reply", reply: {id, title}}');
        }
        if ((reply.title as string).length > 20) throw invalidParam('button title must be at most 20 characters');
        if (ids.has(reply.id as string)) throw invalidParam('button ids must be unique');
        ids.add(reply.id as string);
      }
      return;
    }
    case 'cta_url': {
      needBody();
      const p = action.parameters;
      if (action.name !== 'cta_url' || !isObj(p) || !nonEmpty(p.display_text) || !nonEmpty(p.url)) {
        throw invalidParam('interactive cta_url needs action {name: "cta_url", parameters: {display_text, url}}');
      }
      if (!/^https?:\/\//.test(p.url as string)) throw invalidParam('cta_url url must be an http(s) URL');
      return;
    }
    case 'flow': {
      needBody();
      const p = action.parameters;
      if (action.name !== 'flow' || !isObj(p))
        throw invalidParam('interactive flow needs action {name: "flow", parameters: {...}}');
      if (!nonEmpty(p.flow_cta)) throw invalidParam('flow parameters.flow_cta is required');
      if (!nonEmpty(p.flow_id) && !nonEmpty(p.flow_name))
        throw invalidParam('flow parameters.flow_id or flow_name is required');
      if (p.flow_message_version !== undefined && String(p.flow_message_version) !== '3') {
        throw invalidParam('flow parameters.flow_message_version must be "3"');
      }
      const flow = nonEmpty(p.flow_id)
        ? state.flows.get(p.flow_id as string)
        : [...state.flows.values()].find((f) => f.name === p.flow_name);
      if (flow) {
        if (flow.status === 'DEPRECATED') throw invalidParam(`Flow ${flow.id} is deprecated and can no longer be sent`);
        if (flow.status === 'DRAFT' && p.mode !== 'draft') {
          throw invalidParam(`Flow ${flow.id} is in DRAFT: publish it or send with mode "draft"`);
        }
      }
      return;
    }
    case 'list': {
      needBody();
      if (!nonEmpty(action.button) || !Array.isArray(action.sections) || action.sections.length === 0) {
        throw invalidParam('interactive list needs action.button and action.sections');
      }
      return;
    }
    default:
      throw invalidParam(`Unsupported interactive type: ${String(kind)}`);
  }
}

/** Find the template the send refers to; enforce APPROVED and the parameter counts. */
function checkTemplate(state: SandboxState, phoneNumberId: string, t: Json): Template {
  const name = t.name as string;
  const language = (t.language as Json).code as string;
  const configuredWaba = state.config.phoneNumbers[phoneNumberId]?.wabaId ?? state.learntWaba.get(phoneNumberId);
  let found: Template | undefined;
  for (const tpl of state.templates.values()) {
    if (tpl.name !== name || tpl.language !== language) continue;
    if (configuredWaba && tpl.wabaId !== configuredWaba) continue;
    if (!found || (found.status !== 'APPROVED' && tpl.status === 'APPROVED')) found = tpl;
  }
  // Meta's own codes for a template it paused (its quality) or disabled: the send is refused, the template exists
  if (found?.status === 'PAUSED') throw cloudError(132015, `template ${name} is paused due to low quality`);
  if (found?.status === 'DISABLED') throw cloudError(132016, `template ${name} is disabled`);
  if (!found || found.status !== 'APPROVED') {
    const why = found ? ` (template status is ${found.status})` : '';
    throw cloudError(132001, `template name (${name}) does not exist in ${language}${why}`);
  }
  if (!configuredWaba) state.learntWaba.set(phoneNumberId, found.wabaId);

  const sent = Array.isArray(t.components) ? (t.components as unknown[]).filter(isObj) : [];
  const sentOf = (type: string) => sent.find((c) => String(c.type).toLowerCase() === type);
  for (const comp of found.components) {
    const ctype = String(comp.type).toUpperCase();
    if (ctype === 'BODY' || (ctype === 'HEADER' && (comp.format ?? 'TEXT') === 'TEXT')) {
      const vars = variablesOf(comp.text);
      const given = sentOf(ctype.toLowerCase());
      const params = given && Array.isArray(given.parameters) ? (given.parameters as unknown[]) : [];
      if (params.length !== vars.length) {
        throw cloudError(
          132000,
          `${ctype.toLowerCase()}: number of localizable_params (${params.length}) does not match the expected number of params (${vars.length})`,
        );
      }
      if (params.some((p) => isObj(p) && typeof p.text === 'string' && /[\r\n\t]| {5}/.test(p.text)))
        throw cloudError(
          132018,
          `${ctype.toLowerCase()}: Param text cannot have new-line/tab characters or more than 4 consecutive spaces`,
        );
      if (found.parameter_format === 'NAMED') {
        const names = new Set(params.map((p) => (isObj(p) ? p.parameter_name : undefined)));
        const missing = vars.filter((v) => !names.has(v));
        if (missing.length)
          throw cloudError(132000, `${ctype.toLowerCase()}: missing named parameters: ${missing.join(', ')}`);
      }
    } else if (ctype === 'HEADER' && ['IMAGE', 'VIDEO', 'DOCUMENT'].includes(String(comp.format))) {
      const media = String(comp.format).toLowerCase();
      const given = sentOf('header');
      const p = given && Array.isArray(given.parameters) ? (given.parameters as unknown[])[0] : undefined;
      if (!isObj(p) || p.type !== media || !isObj(p[media])) {
        throw cloudError(
          132012,
          `header: format mismatch, expected ${media.toUpperCase()}, received ${isObj(p) ? String(p.type).toUpperCase() : 'UNKNOWN'}`,
        );
      }
    }
  }
  return found;
}

/** Distinct `{{1}}` / `{{name}}` variables of a template text, in order of first appearance. */
export function variablesOf(text: unknown): string[] {
  if (typeof text !== 'string') return [];
  const out: string[] = [];
  for (const m of text.matchAll(/\{\{\s*([a-z0-9_]+)\s*\}\}/gi)) if (!out.includes(m[1])) out.push(m[1]);
  return out;
}
