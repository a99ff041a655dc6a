/**
 * Switchboard sandbox: a local emulator of Meta's WhatsApp Cloud API (a Graph API subset, signed
 * webhooks) with a control API under /_sandbox/. In-memory state only. See ../README.md.
 */
import Fastify, { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AddressInfo } from 'node:net';
import { Catalog, flowView, unknownObject } from './catalog';
import { registerControlRoutes } from './control';
import { cloudError, GraphError } from './errors';
import { Json } from './json';
import { handleSendMessage } from './messages';
import { MEDIA_DOWNLOAD_PATH } from './media';
import { parseMultipart, MultipartPart } from './multipart';
import { SandboxConfig, SandboxState } from './state';
import { StatusScheduler, WebhookDispatcher } from './webhooks';

export type { SandboxConfig, FailureRule, PhoneNumberConfig } from './state';
export { sign as signWebhookBody } from './webhooks';

export interface SandboxOptions extends Partial<SandboxConfig> {
  /** log lines (webhook failures, listen address); default: console.warn unless quiet */
  log?: (message: string) => void;
  quiet?: boolean;
}

export interface Sandbox {
  app: FastifyInstance;
  state: SandboxState;
  /** start listening (port 0 = any free port); resolves to the base URL, e.g. http://127.0.0.1:41234 */
  listen(port?: number, host?: string): Promise<string>;
  /** base URL once listening */
  url: string | null;
  /** emit the statuses due now and wait until every queued webhook was delivered */
  flush(): Promise<void>;
  close(): Promise<void>;
}

type Params = { version: string; id: string };

const VERSION = /^v\d+\.\d+$/;
/** The version an unversioned Graph path is served by. */
export const DEFAULT_VERSION = 'v24.0';

/** Graph API `fields=a,b{c}`: the object keeps `id`, `messaging_product` and the named top-level fields (a list: per item). */
export function projectFields(result: unknown, fields: unknown): unknown {
  if (typeof fields !== 'string' || !fields.trim() || typeof result !== 'object' || result === null) return result;
  const names = new Set([
    'id',
    'messaging_product',
    ...fields
      .replace(/\{[^}]*\}/g, '')
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
  ]);
  const pick = (o: unknown) =>
    typeof o === 'object' && o !== null && !Array.isArray(o)
      ? Object.fromEntries(Object.entries(o).filter(([k]) => names.has(k)))
      : o;
  const r = result as Record<string, unknown>;
  if (Array.isArray(r.data)) return { ...r, data: r.data.map(pick) };
  return pick(r);
}

export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const { log: logOption, quiet, ...config } = options;
  const log = logOption ?? (quiet ? () => undefined : (m: string) => console.warn(`[sandbox] ${m}`));
  const state = new SandboxState(config);
  const initialConfig = structuredClone(state.config);
  const dispatcher = new WebhookDispatcher(state, log);
  const scheduler = new StatusScheduler(state, dispatcher);
  const catalog = new Catalog(state, dispatcher);

  const app = Fastify({
    logger: false,
    bodyLimit: 16 * 1024 * 1024,
    // Like the Graph API, a path without a version (`/{phone-number-id}/messages`) is served by the default version.
    rewriteUrl: (req) => {
      const url = req.url ?? '/';
      return url.startsWith('/_sandbox') || url.startsWith(MEDIA_DOWNLOAD_PATH) || /^\/v\d+\.\d+(\/|\?|$)/.test(url)
        ? url
        : `/${DEFAULT_VERSION}${url}`;
    },
  });

  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, { __multipart: parseMultipart(body as Buffer, String(req.headers['content-type'])) });
    } catch (err) {
      done(cloudError(100, `Invalid multipart body: ${(err as Error).message}`), undefined);
    }
  });

  app.setErrorHandler((err: unknown, req, reply) => {
    if (err instanceof GraphError) {
      if (!req.url.startsWith('/_sandbox')) {
        const code = String(err.body.error.code);
        state.stats.rejected[code] = (state.stats.rejected[code] ?? 0) + 1;
      }
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return reply.status(err.httpStatus).send(err.body);
    }
    const e = err as { statusCode?: number; message?: string; code?: string };
    if (e.statusCode && e.statusCode < 500) {
      const g = cloudError(100, e.message ?? 'Invalid request');
      return reply.status(400).send(g.body);
    }
    log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
    const g = cloudError(1, (err as Error)?.message, { transient: true });
    return reply.status(500).send(g.body);
  });

  app.setNotFoundHandler((req, reply) => {
    const g = cloudError(2500, undefined, { message: `Unknown path components: ${req.url.split('?')[0]}` });
    return reply.status(400).send(g.body);
  });

  // Graph API authentication: any non-empty bearer token (or access_token query parameter).
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (req.url.startsWith('/_sandbox')) return;
    const header = req.headers.authorization;
    const bearer =
      typeof header === 'string' && /^Bearer\s+\S+/i.test(header) ? header.replace(/^Bearer\s+/i, '').trim() : '';
    const query = (req.query ?? {}) as Json;
    const token = bearer || (typeof query.access_token === 'string' ? query.access_token : '');
    if (!token) {
      throw cloudError(190, undefined, {
        message: 'An active access token must be used to query information about the current user.',
      });
    }
    if (state.config.invalidTokens.includes(token)) {
      throw cloudError(190, undefined, {
        subcode: 463,
        message: 'Error validating access token: Session has expired.',
      });
    }
  });

  const checkVersion = async (req: FastifyRequest) => {
    const { version } = req.params as Params;
    if (!VERSION.test(version)) {
      throw cloudError(2500, undefined, { message: `Unknown path components: /${version}` });
    }
  };
  const route = <T>(handler: (req: FastifyRequest, id: string) => T | Promise<T>) => ({
    preHandler: checkVersion,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const result = await handler(req, (req.params as Params).id);
      return reply.send(req.method === 'GET' ? projectFields(result, (req.query as Json)?.fields) : result);
    },
  });
  const flowOf = (id: string) => {
    const flow = state.flows.get(id);
    if (!flow) throw unknownObject(id);
    return flow;
  };

  // messages
  app.post('/:version/:id/messages', {
    preHandler: checkVersion,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const requestId = req.headers['x-request-id'];
      const answer = handleSendMessage(
        state,
        scheduler,
        (req.params as Params).id,
        req.body,
        typeof requestId === 'string' ? requestId : undefined,
      );
      const delay = state.config.sendAnswerDelayMs;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      if (state.config.droppedAnswers > 0) {
        // accepted (logged, statuses scheduled), but the connection goes down before any answer
        state.config.droppedAnswers--;
        reply.hijack();
        req.raw.socket.destroy();
        return;
      }
      if (state.config.garbledAnswers > 0) {
        // accepted (logged, statuses scheduled), but the answer is cut off, as a connection lost mid-answer leaves it
        state.config.garbledAnswers--;
        return reply.header('content-type', 'application/json').send(JSON.stringify(answer).slice(0, 24));
      }
      return reply.send(answer);
    },
  });

  // media (upload, metadata by id, download with the bearer token) and business profiles
  const origin = (req: FastifyRequest) => `${req.protocol}://${req.headers.host}`;
  app.post(
    '/:version/:id/media',
    route((req, id) => state.media.upload(id, req.body)),
  );
  app.get(MEDIA_DOWNLOAD_PATH, async (req, reply) => {
    const m = state.media.download((req.query as Json).mid);
    return reply.header('content-type', m.mimeType).header('content-length', m.bytes.length).send(m.bytes);
  });
  app.get(
    '/:version/:id/whatsapp_business_profile',
    route((_req, id) => state.media.profile(id)),
  );
  app.post(
    '/:version/:id/whatsapp_business_profile',
    route((req, id) => state.media.updateProfile(id, req.body)),
  );
  // a template by id under its WABA (as some clients address it)
  app.get(
    '/:version/:waba/message_templates/:templateId',
    route((req) => {
      const id = (req.params as { templateId: string }).templateId;
      const template = catalog.getTemplate(id);
      if (!template) throw unknownObject(id);
      return template;
    }),
  );

  // message templates
  app.post('/:version/:id/message_templates', {
    preHandler: checkVersion,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const created = catalog.createTemplate((req.params as Params).id, req.body);
      if (state.config.garbledTemplateCreates > 0) {
        // created (and under review), but the answer is cut off: the client cannot tell whether it exists
        state.config.garbledTemplateCreates--;
        return reply.header('content-type', 'application/json').send(JSON.stringify(created).slice(0, 12));
      }
      return reply.send(created);
    },
  });
  app.get(
    '/:version/:id/message_templates',
    route((req, id) => catalog.listTemplates(id, req.query as Json)),
  );
  app.delete(
    '/:version/:id/message_templates',
    route((req, id) => catalog.deleteTemplate(id, req.query as Json)),
  );

  // flows
  app.post(
    '/:version/:id/flows',
    route((req, id) => catalog.createFlow(id, req.body)),
  );
  app.get(
    '/:version/:id/flows',
    route((_req, id) => catalog.listFlows(id)),
  );
  app.post(
    '/:version/:id/assets',
    route((req, id) => catalog.uploadAsset(flowOf(id), assetFromBody(req.body))),
  );
  app.post(
    '/:version/:id/publish',
    route((_req, id) => catalog.publishFlow(flowOf(id))),
  );
  app.post(
    '/:version/:id/deprecate',
    route((_req, id) => catalog.deprecateFlow(flowOf(id))),
  );

  // objects by id: templates and flows
  app.get(
    '/:version/:id',
    route((req, id) => {
      if (state.media.has(id)) return state.media.view(id, origin(req));
      const template = catalog.getTemplate(id);
      if (template) return template;
      const flow = state.flows.get(id);
      if (flow) return flowView(flow);
      // any other id is a phone number (auto-registered), except ids of deleted templates and flows
      if (state.mintedIds.has(id)) throw unknownObject(id);
      return phoneNumberView(state, id);
    }),
  );
  app.post('/:version/:id', {
    preHandler: checkVersion,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const id = (req.params as Params).id;
      if (state.templates.has(id)) {
        const edited = catalog.editTemplate(id, req.body);
        if (state.config.garbledTemplateEdits > 0) {
          // applied (and under review), but the answer is cut off: the client cannot tell whether the edit was made
          state.config.garbledTemplateEdits--;
          return reply.header('content-type', 'application/json').send(JSON.stringify(edited).slice(0, 8));
        }
        return reply.send(edited);
      }
      if (state.flows.has(id)) return reply.send(catalog.updateFlowMetadata(state.flows.get(id)!, req.body));
      throw unknownObject(id);
    },
  });
  app.delete(
    '/:version/:id',
    route((_req, id) => {
      if (state.media.has(id)) return state.media.delete(id);
      if (state.flows.has(id)) return catalog.deleteFlow(state.flows.get(id)!);
      const t = state.templates.get(id);
      if (t) {
        state.templates.delete(id);
        return { success: true };
      }
      throw unknownObject(id);
    }),
  );

  const flush = async () => {
    scheduler.tick();
    await dispatcher.whenIdle();
  };
  registerControlRoutes(app, { state, initialConfig, dispatcher, scheduler, catalog, flush });

  const sandbox: Sandbox = {
    app,
    state,
    url: null,
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const addr = app.server.address() as AddressInfo;
      sandbox.url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
      scheduler.start();
      return sandbox.url;
    },
    flush,
    async close() {
      scheduler.stop();
      catalog.close();
      dispatcher.close();
      await app.close();
    },
  };
  return sandbox;
}

/** `GET /{phone_number_id}`: what Meta answers for a registered Cloud API number. */
function phoneNumberView(state: SandboxState, id: string): Json {
  const limit = state.config.messagesPerSecond[id] ?? state.config.defaultMessagesPerSecond;
  return {
    id,
    display_phone_number: state.displayPhoneNumber(id),
    verified_name: state.config.phoneNumbers[id]?.verifiedName ?? 'Switchboard Sandbox',
    code_verification_status: 'VERIFIED',
    quality_rating: 'GREEN',
    platform_type: 'CLOUD_API',
    throughput: { level: limit === 0 || limit > 80 ? 'HIGH' : 'STANDARD' },
    messaging_limit_tier: 'TIER_UNLIMITED',
  };
}

/** The flow asset upload: Meta's multipart form (name, asset_type, file) or the JSON equivalent. */
function assetFromBody(body: unknown): { name?: string; asset_type?: string; file?: string } {
  if (body && typeof body === 'object' && '__multipart' in body) {
    const parts = (body as { __multipart: MultipartPart[] }).__multipart;
    const field = (n: string) => parts.find((p) => p.name === n);
    return {
      name: field('name')?.data.toString('utf8'),
      asset_type: field('asset_type')?.data.toString('utf8'),
      file: field('file')?.data.toString('utf8'),
    };
  }
  if (body && typeof body === 'object') {
    const b = body as Json;
    const file = b.file === undefined ? undefined : typeof b.file === 'string' ? b.file : JSON.stringify(b.file);
    return {
      name: typeof b.name === 'string' ? b.name : undefined,
      asset_type: typeof b.asset_type === 'string' ? b.asset_type : undefined,
      file,
    };
  }
  return {};
}
