/** The control API under /_sandbox/: play the customer and the reviewer, read what happened, configure. */
import type { FastifyInstance } from 'fastify';
import { invalidParam } from './errors';
import { BSUID, isObj, Json, nonEmpty } from './json';
import { Catalog, flowView, templateView } from './catalog';
import { newWamid } from './messages';
import { SandboxConfig, SandboxState, TemplateStatus } from './state';
import { envelope, StatusScheduler, WebhookDispatcher } from './webhooks';

export interface ControlDeps {
  state: SandboxState;
  initialConfig: SandboxConfig;
  dispatcher: WebhookDispatcher;
  scheduler: StatusScheduler;
  catalog: Catalog;
  /** emit the statuses due now and wait until every queued webhook was delivered */
  flush: () => Promise<void>;
}

export function registerControlRoutes(app: FastifyInstance, deps: ControlDeps): void {
  const { state, dispatcher, scheduler, catalog } = deps;

  app.get('/_sandbox/health', async () => ({ ok: true }));

  app.post('/_sandbox/inbound', async (req) => {
    const { value, wamid, from, phoneNumberId, at } = buildInbound(state, req.body);
    state.lastInbound.set(`${phoneNumberId}:${from}`, at);
    state.knownPhones.add(phoneNumberId);
    state.stats.inbound++;
    const delivery = await dispatcher.send('messages', envelope(state.wabaOf(phoneNumberId), 'messages', value));
    return { wamid, messages: [{ id: wamid }], webhook: delivery };
  });

  app.post('/_sandbox/templates/review', async (req) => {
    const body = isObj(req.body) ? req.body : {};
    const status = String(body.status ?? '').toUpperCase() as TemplateStatus;
    if (!['APPROVED', 'REJECTED', 'PAUSED', 'DISABLED', 'PENDING'].includes(status)) {
      throw invalidParam('status must be APPROVED, REJECTED, PAUSED, DISABLED or PENDING');
    }
    const matches = [...state.templates.values()].filter(
      (t) =>
        (nonEmpty(body.id) ? t.id === body.id : t.name === body.name) &&
        (!nonEmpty(body.language) || t.language === body.language) &&
        (!nonEmpty(body.waba_id) || t.wabaId === body.waba_id),
    );
    if (matches.length === 0) throw invalidParam(`no template named ${String(body.name ?? body.id)}`);
    const results = [];
    for (const t of matches) {
      const webhook = await catalog.review(t, status, nonEmpty(body.reason) ? body.reason : undefined);
      results.push({ ...templateView(t), webhook });
    }
    return { templates: results };
  });

  app.post('/_sandbox/templates/fail', async (req) => {
    const body = isObj(req.body) ? req.body : {};
    if (!nonEmpty(body.name)) throw invalidParam('name is required');
    const fail = body.fail !== false;
    const set = new Set(state.config.failTemplateGets);
    if (fail) set.add(body.name);
    else set.delete(body.name);
    state.config.failTemplateGets = [...set];
    return { failTemplateGets: state.config.failTemplateGets };
  });

  app.get('/_sandbox/templates', async () => ({
    data: [...state.templates.values()].map((t) => ({ ...templateView(t), waba_id: t.wabaId })),
  }));

  app.get('/_sandbox/flows', async () => ({
    data: [...state.flows.values()].map((f) => ({ ...flowView(f), waba_id: f.wabaId, flow_json: f.json })),
  }));

  app.get('/_sandbox/messages', async (req) => {
    const q = (req.query ?? {}) as Json;
    const to = typeof q.to === 'string' ? (BSUID.test(q.to) ? q.to : q.to.replace(/\D/g, '')) : undefined; // a phone, or a user id
    const pn = typeof q.phone_number_id === 'string' ? q.phone_number_id : undefined;
    const limit = Number(q.limit) > 0 ? Number(q.limit) : undefined;
    let data = state.messages.toArray().filter((m) => (!to || m.to === to) && (!pn || m.phone_number_id === pn));
    if (limit) data = data.slice(-limit);
    return { data, total: state.stats.accepted };
  });

  app.get('/_sandbox/webhooks', async (req) => {
    const q = (req.query ?? {}) as Json;
    const field = typeof q.field === 'string' ? q.field : undefined;
    const limit = Number(q.limit) > 0 ? Number(q.limit) : undefined;
    let data = state.webhooks.toArray().filter((w) => !field || w.field === field);
    if (limit) data = data.slice(-limit);
    return { data };
  });

  /** Emit every status that is due now and wait until all queued webhooks are delivered. */
  app.post('/_sandbox/webhooks/flush', async () => {
    await deps.flush();
    return { pendingStatuses: scheduler.pending };
  });

  app.get('/_sandbox/stats', async () => ({
    ...state.stats,
    pendingStatuses: scheduler.pending,
    pendingWebhooks: dispatcher.pending,
    templates: state.templates.size,
    flows: state.flows.size,
  }));

  app.get('/_sandbox/config', async () => state.config);

  app.post('/_sandbox/config', async (req) => {
    applyConfig(state, req.body);
    scheduler.restart();
    return state.config;
  });

  app.post('/_sandbox/reset', async (req) => {
    const body = isObj(req.body) ? req.body : {};
    state.reset();
    scheduler.reset();
    dispatcher.reset();
    catalog.close();
    if (body.config === true) {
      state.config = structuredClone(deps.initialConfig);
      state.messages.limit = state.config.messageLogLimit;
      state.webhooks.limit = state.config.webhookLogLimit;
      scheduler.restart();
    }
    return { ok: true };
  });
}

const CONFIG_TYPES: Record<keyof SandboxConfig, string> = {
  webhookUrl: 'string|null',
  appSecret: 'string',
  statusWebhooks: 'boolean',
  statusDelaysMs: 'object',
  statusBatchSize: 'number',
  tickMs: 'number',
  templateReviewDelayMs: 'number',
  autoReview: 'boolean',
  defaultMessagesPerSecond: 'number',
  messagesPerSecond: 'object',
  enforceCustomerCareWindow: 'boolean',
  customerCareWindowMs: 'number',
  pairRateLimit: 'object|null',
  failureRules: 'array',
  messageLogLimit: 'number',
  messageLogPayloads: 'boolean',
  webhookLogLimit: 'number',
  webhookTimeoutMs: 'number',
  webhookRetries: 'number',
  webhookRetryDelayMs: 'number',
  webhookConcurrency: 'number',
  maxPendingWebhooks: 'number',
  phoneNumbers: 'object',
  whatsappIds: 'object',
  failTemplateGets: 'array',
  invalidTokens: 'array',
  sendAnswerDelayMs: 'number',
  garbledAnswers: 'number',
  droppedAnswers: 'number',
  garbledTemplateCreates: 'number',
  garbledTemplateEdits: 'number',
};

/** Merge a partial config (objects one level deep: statusDelaysMs, messagesPerSecond, phoneNumbers, whatsappIds). */
export function applyConfig(state: SandboxState, patch: unknown): void {
  if (!isObj(patch)) throw invalidParam('config must be a JSON object');
  const next: Json = { ...state.config };
  for (const [key, value] of Object.entries(patch)) {
    const expected = CONFIG_TYPES[key as keyof SandboxConfig];
    if (!expected) throw invalidParam(`unknown config key: ${key}`);
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    if (!expected.split('|').includes(actual)) throw invalidParam(`config ${key} must be ${expected}`);
    if (expected === 'number' && (!Number.isFinite(value) || (value as number) < 0))
      throw invalidParam(`config ${key} must be >= 0`);
    if (key === 'statusDelaysMs' || key === 'messagesPerSecond' || key === 'phoneNumbers' || key === 'whatsappIds') {
      next[key] = { ...(state.config[key] as object), ...(value as object) };
    } else {
      next[key] = value;
    }
  }
  const cfg = next as unknown as SandboxConfig;
  const pair = cfg.pairRateLimit;
  if (
    pair &&
    !(Number.isInteger(pair.messages) && pair.messages > 0 && Number.isFinite(pair.windowMs) && pair.windowMs > 0)
  ) {
    throw invalidParam('pairRateLimit must be null or {messages: integer > 0, windowMs: number > 0}');
  }
  for (const r of cfg.failureRules) {
    if (!isObj(r) || typeof r.toSuffix !== 'string' || typeof r.code !== 'number') {
      throw invalidParam('failureRules items must be {toSuffix: string, code: number, details?: string}');
    }
  }
  state.config = cfg;
  state.messages.limit = cfg.messageLogLimit;
  state.webhooks.limit = cfg.webhookLogLimit;
}

/** The `messages` webhook value of a customer's inbound message. */
function buildInbound(state: SandboxState, body: unknown) {
  if (!isObj(body)) throw invalidParam('body must be a JSON object');
  // a user with a username: Meta withholds the phone and sends the business-scoped user id (from_user_id) alone
  const userId = nonEmpty(body.user_id) ? body.user_id : undefined;
  if (userId && !BSUID.test(userId))
    throw invalidParam('user_id must be a business-scoped user id like US.13491208655302741918');
  if (!nonEmpty(body.from) && !userId)
    throw invalidParam('from (the customer wa_id) or user_id (a business-scoped user id) is required');
  if (!nonEmpty(body.phone_number_id)) throw invalidParam('phone_number_id is required');
  const from = nonEmpty(body.from) ? state.whatsappIdOf(body.from.replace(/\D/g, '')) : userId!;
  const phoneNumberId = body.phone_number_id;
  const at = typeof body.timestamp === 'number' ? body.timestamp * 1000 : Date.now();
  const wamid = newWamid();
  const display = state.displayPhoneNumber(phoneNumberId);
  const message: Json = nonEmpty(body.from)
    ? { from, ...(userId ? { from_user_id: userId } : {}), id: wamid, timestamp: String(Math.floor(at / 1000)) }
    : { from_user_id: userId, id: wamid, timestamp: String(Math.floor(at / 1000)) };
  if (nonEmpty(body.context_message_id)) message.context = { from: display, id: body.context_message_id };

  if (nonEmpty(body.text)) {
    message.type = 'text';
    message.text = { body: body.text };
  } else if (isObj(body.button)) {
    if (!nonEmpty(body.button.payload) && !nonEmpty(body.button.text))
      throw invalidParam('button needs payload and/or text');
    message.type = 'button';
    message.button = {
      payload: body.button.payload ?? body.button.text,
      text: body.button.text ?? body.button.payload,
    };
  } else if (isObj(body.interactive)) {
    message.type = 'interactive';
    message.interactive = buildInteractive(body.interactive);
  } else if (isObj(body.nfm_reply)) {
    message.type = 'interactive';
    message.interactive = buildInteractive({ nfm_reply: body.nfm_reply });
  } else {
    throw invalidParam('one of text, button, interactive or nfm_reply is required');
  }
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: display, phone_number_id: phoneNumberId },
    contacts: [
      {
        profile: {
          name: nonEmpty(body.name) ? body.name : 'Sandbox Customer',
          ...(nonEmpty(body.username) ? { username: body.username } : {}),
        },
        ...(nonEmpty(body.from) ? { wa_id: from } : {}),
        ...(userId ? { user_id: userId } : {}),
      },
    ],
    messages: [message],
  };
  return { value, wamid, from, phoneNumberId, at };
}

function buildInteractive(it: Json): Json {
  if (isObj(it.button_reply)) {
    const r = it.button_reply;
    if (!nonEmpty(r.id)) throw invalidParam('interactive.button_reply.id is required');
    return { type: 'button_reply', button_reply: { id: r.id, title: nonEmpty(r.title) ? r.title : r.id } };
  }
  if (isObj(it.list_reply)) {
    const r = it.list_reply;
    if (!nonEmpty(r.id)) throw invalidParam('interactive.list_reply.id is required');
    return {
      type: 'list_reply',
      list_reply: {
        id: r.id,
        title: nonEmpty(r.title) ? r.title : r.id,
        ...(nonEmpty(r.description) ? { description: r.description } : {}),
      },
    };
  }
  if (isObj(it.nfm_reply)) {
    const r = it.nfm_reply;
    const responseJson = typeof r.response_json === 'string' ? r.response_json : JSON.stringify(r.response_json ?? {});
    return {
      type: 'nfm_reply',
      nfm_reply: {
        response_json: responseJson,
        body: nonEmpty(r.body) ? r.body : 'Sent',
        name: nonEmpty(r.name) ? r.name : 'flow',
      },
    };
  }
  throw invalidParam('interactive needs button_reply, list_reply or nfm_reply');
}
