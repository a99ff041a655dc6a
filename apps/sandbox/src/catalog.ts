/** Message templates and Flows: the WABA-level objects of the sandbox. */
import { isObj, Json, nonEmpty } from './json';
import { cloudError, GraphError, fbtraceId, invalidParam } from './errors';
import { variablesOf } from './messages';
import { Flow, FlowValidationError, SandboxState, Template, TemplateComponent, TemplateStatus } from './state';
import { envelope, WebhookDispatcher, DeliveryResult } from './webhooks';

const CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'];
const COMPONENT_TYPES = ['HEADER', 'BODY', 'FOOTER', 'BUTTONS', 'CAROUSEL'];
const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'];
const BUTTON_TYPES = ['QUICK_REPLY', 'URL', 'PHONE_NUMBER', 'FLOW', 'COPY_CODE', 'OTP', 'CATALOG', 'MPM'];
export const FLOW_CATEGORIES = [
  'SIGN_UP',
  'SIGN_IN',
  'APPOINTMENT_BOOKING',
  'LEAD_GENERATION',
  'CONTACT_US',
  'CUSTOMER_SUPPORT',
  'SURVEY',
  'OTHER',
];

/** Rejection reason of the documented rule: names starting with `reject_` are REJECTED. */
export const REJECT_PREFIX = 'reject_';
/** Names starting with `manual_` stay PENDING until POST /_sandbox/templates/review decides. */
export const MANUAL_PREFIX = 'manual_';

export function unknownObject(id: string): GraphError {
  return cloudError(100, undefined, {
    subcode: 33,
    message: `Unsupported request - method type: get. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
  });
}

export class Catalog {
  /** the automatic review of each template, by template id: an edit replaces its template's pending one */
  private reviewTimers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly state: SandboxState,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  close(): void {
    for (const t of this.reviewTimers.values()) clearTimeout(t);
    this.reviewTimers.clear();
  }

  // ---------------------------------------------------------------- templates

  createTemplate(wabaId: string, body: unknown): Json {
    if (!isObj(body)) throw invalidParam('Request body must be a JSON object');
    const { name, language, category } = body;
    if (!nonEmpty(name) || !/^[a-z0-9_]{1,512}$/.test(name)) {
      throw invalidParam('name is required: lowercase letters, digits and underscores, at most 512 characters');
    }
    if (!nonEmpty(language)) throw invalidParam('language is required');
    if (!nonEmpty(category) || !CATEGORIES.includes(category))
      throw invalidParam(`category must be one of ${CATEGORIES.join(', ')}`);
    const components = validateComponents(body.components, category);
    for (const t of this.state.templates.values()) {
      if (t.wabaId === wabaId && t.name === name && t.language === language) {
        throw new GraphError(400, {
          error: {
            message: 'Invalid parameter',
            type: 'OAuthException',
            code: 100,
            error_subcode: 2388024,
            is_transient: false,
            error_user_title: 'Message template already exists',
            error_user_msg: `There is already ${language} content for this template. You can create a new template and try again.`,
            fbtrace_id: fbtraceId(),
          },
        });
      }
    }
    const template: Template = {
      id: this.state.newId(),
      wabaId,
      name,
      language,
      category,
      status: 'PENDING',
      parameter_format: body.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL',
      components,
      rejected_reason: 'NONE',
      createdAt: Date.now(),
    };
    this.state.templates.set(template.id, template);
    this.scheduleReview(template);
    return { id: template.id, status: template.status, category: template.category };
  }

  listTemplates(wabaId: string, query: Json): Json {
    const name = typeof query.name === 'string' ? query.name : undefined;
    if (name && this.state.config.failTemplateGets.some((n) => name.includes(n) || n.includes(name)))
      throw transientFailure();
    const status = typeof query.status === 'string' ? query.status.toUpperCase() : undefined;
    const limit = Math.min(Math.max(Number(query.limit) || 25, 1), 1000);
    const all = [...this.state.templates.values()]
      .filter((t) => t.wabaId === wabaId)
      .filter((t) => !name || t.name.includes(name))
      .filter((t) => !status || t.status === status);
    const after = typeof query.after === 'string' ? decodeCursor(query.after) : 0;
    const page = all.slice(after, after + limit);
    const paging: Json = {
      cursors: { before: encodeCursor(after), after: encodeCursor(after + page.length) },
    };
    if (after + page.length < all.length) {
      const q = new URLSearchParams({ limit: String(limit), after: encodeCursor(after + page.length) });
      if (name) q.set('name', name);
      if (status) q.set('status', status);
      paging.next = `message_templates?${q.toString()}`;
    }
    if (after > 0) paging.previous = `message_templates?limit=${limit}&before=${encodeCursor(after)}`;
    return { data: page.map(templateView), paging };
  }

  getTemplate(id: string): Json | undefined {
    const t = this.state.templates.get(id);
    if (!t) return undefined;
    if (this.state.config.failTemplateGets.includes(t.name)) throw transientFailure();
    return templateView(t);
  }

  editTemplate(id: string, body: unknown): Json {
    const t = this.state.templates.get(id)!;
    if (!isObj(body)) throw invalidParam('Request body must be a JSON object');
    if (body.components === undefined && body.category === undefined) {
      throw invalidParam('Nothing to edit: give components and/or category');
    }
    const category = body.category === undefined ? t.category : body.category;
    if (!nonEmpty(category) || !CATEGORIES.includes(category))
      throw invalidParam(`category must be one of ${CATEGORIES.join(', ')}`);
    const components = body.components === undefined ? t.components : validateComponents(body.components, category);
    t.category = category;
    t.components = components;
    t.status = 'PENDING';
    t.rejected_reason = 'NONE';
    this.scheduleReview(t);
    return { success: true };
  }

  deleteTemplate(wabaId: string, query: Json): Json {
    const name = query.name;
    if (!nonEmpty(name)) throw invalidParam('name is required');
    const hsmId = typeof query.hsm_id === 'string' ? query.hsm_id : undefined;
    const victims = [...this.state.templates.values()].filter(
      (t) => t.wabaId === wabaId && t.name === name && (!hsmId || t.id === hsmId),
    );
    if (victims.length === 0) {
      throw cloudError(100, `Message template "${name}" does not exist in this WhatsApp Business Account`, {
        subcode: 2593002,
      });
    }
    for (const t of victims) this.state.templates.delete(t.id);
    return { success: true };
  }

  /** Decide a review now (control API or the automatic timer); emits the webhook. */
  async review(t: Template, status: TemplateStatus, reason?: string): Promise<DeliveryResult> {
    t.status = status;
    t.rejected_reason = status === 'REJECTED' ? reason || 'INVALID_FORMAT' : 'NONE';
    const value = {
      event: status,
      message_template_id: Number(t.id),
      message_template_name: t.name,
      message_template_language: t.language,
      reason: status === 'REJECTED' ? t.rejected_reason : (reason ?? 'NONE'),
      message_template_category: t.category,
    };
    return this.dispatcher.send(
      'message_template_status_update',
      envelope(t.wabaId, 'message_template_status_update', value),
    );
  }

  private scheduleReview(t: Template): void {
    clearTimeout(this.reviewTimers.get(t.id)); // the create's review must not approve an edit before its own time
    this.reviewTimers.delete(t.id);
    if (!this.state.config.autoReview || t.name.startsWith(MANUAL_PREFIX)) return;
    const timer = setTimeout(() => {
      this.reviewTimers.delete(t.id);
      const current = this.state.templates.get(t.id);
      if (!current || current !== t || current.status !== 'PENDING') return;
      if (t.name.startsWith(REJECT_PREFIX)) void this.review(t, 'REJECTED', 'INVALID_FORMAT');
      else void this.review(t, 'APPROVED');
    }, this.state.config.templateReviewDelayMs);
    timer.unref();
    this.reviewTimers.set(t.id, timer);
  }

  // ---------------------------------------------------------------- flows

  createFlow(wabaId: string, body: unknown): Json {
    if (!isObj(body)) throw invalidParam('Request body must be a JSON object');
    if (!nonEmpty(body.name)) throw invalidParam('name is required');
    const categories = body.categories;
    if (
      !Array.isArray(categories) ||
      categories.length === 0 ||
      !categories.every((c) => FLOW_CATEGORIES.includes(c as string))
    ) {
      throw invalidParam(`categories must be a non-empty array of ${FLOW_CATEGORIES.join(', ')}`);
    }
    for (const f of this.state.flows.values()) {
      if (f.wabaId === wabaId && f.name === body.name) {
        throw cloudError(100, 'Flow name is not unique', { subcode: 4016019 });
      }
    }
    const flow: Flow = {
      id: this.state.newId(),
      wabaId,
      name: body.name,
      categories: categories as string[],
      status: 'DRAFT',
      validation_errors: [],
      json: null,
      endpoint_uri: nonEmpty(body.endpoint_uri) ? body.endpoint_uri : undefined,
    };
    if (nonEmpty(body.clone_flow_id)) {
      const source = this.state.flows.get(body.clone_flow_id);
      if (!source) throw invalidParam(`clone_flow_id ${body.clone_flow_id} does not exist`);
      flow.json = source.json;
      flow.validation_errors = source.validation_errors;
    }
    if (body.flow_json !== undefined) {
      const json = typeof body.flow_json === 'string' ? body.flow_json : JSON.stringify(body.flow_json);
      flow.json = json;
      flow.validation_errors = validateFlowJson(json);
    }
    this.state.flows.set(flow.id, flow);
    const out: Json = { id: flow.id, success: true };
    if (body.flow_json !== undefined) out.validation_errors = flow.validation_errors;
    if (body.publish === true && flow.json && flow.validation_errors.length === 0) flow.status = 'PUBLISHED';
    return out;
  }

  updateFlowMetadata(flow: Flow, body: unknown): Json {
    if (!isObj(body)) throw invalidParam('Request body must be a JSON object');
    if (flow.status !== 'DRAFT') throw cloudError(139001, 'Only DRAFT flows can be updated');
    if (nonEmpty(body.name)) flow.name = body.name;
    if (Array.isArray(body.categories)) flow.categories = body.categories as string[];
    if (nonEmpty(body.endpoint_uri)) flow.endpoint_uri = body.endpoint_uri;
    return { success: true };
  }

  uploadAsset(flow: Flow, asset: { name?: string; asset_type?: string; file?: string }): Json {
    if (asset.asset_type !== undefined && asset.asset_type !== 'FLOW_JSON')
      throw invalidParam('asset_type must be FLOW_JSON');
    if (asset.name !== undefined && asset.name !== 'flow.json') throw invalidParam('name must be "flow.json"');
    if (asset.file === undefined) throw invalidParam('file is required');
    if (flow.status !== 'DRAFT') {
      throw cloudError(
        139001,
        `Flow ${flow.id} is ${flow.status}: published or deprecated flows can't be updated; clone it instead`,
      );
    }
    flow.json = asset.file;
    flow.validation_errors = validateFlowJson(asset.file);
    return { success: true, validation_errors: flow.validation_errors };
  }

  publishFlow(flow: Flow): Json {
    if (flow.status !== 'DRAFT') throw cloudError(139002, `Flow is ${flow.status}; only DRAFT flows can be published`);
    if (!flow.json) throw cloudError(139002, 'Flow has no Flow JSON; upload flow.json before publishing');
    if (flow.validation_errors.length > 0) {
      throw cloudError(
        139002,
        `Flow JSON has ${flow.validation_errors.length} validation error(s); fix them before publishing`,
      );
    }
    flow.status = 'PUBLISHED';
    return { success: true };
  }

  deprecateFlow(flow: Flow): Json {
    if (flow.status !== 'PUBLISHED')
      throw cloudError(139003, `Flow is ${flow.status}; only PUBLISHED flows can be deprecated`);
    flow.status = 'DEPRECATED';
    return { success: true };
  }

  deleteFlow(flow: Flow): Json {
    if (flow.status !== 'DRAFT') throw cloudError(139004, `Flow is ${flow.status}; only DRAFT flows can be deleted`);
    this.state.flows.delete(flow.id);
    return { success: true };
  }

  listFlows(wabaId: string): Json {
    const data = [...this.state.flows.values()].filter((f) => f.wabaId === wabaId).map(flowView);
    return { data, paging: { cursors: { before: encodeCursor(0), after: encodeCursor(data.length) } } };
  }
}

export function flowView(f: Flow): Json {
  let jsonVersion: unknown;
  try {
    jsonVersion = f.json ? (JSON.parse(f.json) as Json).version : undefined;
  } catch {
    jsonVersion = undefined;
  }
  return {
    id: f.id,
    name: f.name,
    status: f.status,
    categories: f.categories,
    validation_errors: f.validation_errors,
    ...(typeof jsonVersion === 'string' ? { json_version: jsonVersion } : {}),
    ...(f.endpoint_uri ? { endpoint_uri: f.endpoint_uri } : {}),
  };
}

export function templateView(t: Template): Json {
  return {
    name: t.name,
    parameter_format: t.parameter_format,
    components: t.components,
    language: t.language,
    status: t.status,
    category: t.category,
    id: t.id,
    ...(t.status === 'REJECTED' ? { rejected_reason: t.rejected_reason } : {}),
  };
}

function transientFailure(): GraphError {
  return cloudError(2, undefined, {
    message: 'An unexpected error has occurred. Please retry your request later.',
    transient: true,
  });
}

const encodeCursor = (n: number) => Buffer.from(String(n)).toString('base64url');
function decodeCursor(c: string): number {
  const n = Number(Buffer.from(c, 'base64url').toString());
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

function validateComponents(components: unknown, category: string): TemplateComponent[] {
  if (!Array.isArray(components) || components.length === 0) throw invalidParam('components must be a non-empty array');
  const seen = new Set<string>();
  for (const c of components) {
    if (!isObj(c) || typeof c.type !== 'string' || !COMPONENT_TYPES.includes(c.type.toUpperCase())) {
      throw invalidParam(`each component needs a type among ${COMPONENT_TYPES.join(', ')}`);
    }
    const type = c.type.toUpperCase();
    if (seen.has(type)) throw invalidParam(`component ${type} appears more than once`);
    seen.add(type);
    if (type === 'HEADER') {
      const format = String(c.format ?? 'TEXT').toUpperCase();
      if (!HEADER_FORMATS.includes(format))
        throw invalidParam(`HEADER format must be one of ${HEADER_FORMATS.join(', ')}`);
      if (format === 'TEXT') {
        if (!nonEmpty(c.text) || c.text.length > 60)
          throw invalidParam('HEADER text is required, at most 60 characters');
        const vars = variablesOf(c.text);
        if (vars.length > 1) throw invalidParam('HEADER text may contain at most one variable');
        if (vars.length && !hasExample(c.example, 'header_text'))
          throw invalidParam('HEADER with a variable needs example.header_text');
      }
    }
    if (type === 'BODY') {
      if (!nonEmpty(c.text) || c.text.length > 1024)
        throw invalidParam('BODY text is required, at most 1024 characters');
      const vars = variablesOf(c.text);
      if (vars.length && !hasExample(c.example, 'body_text')) {
        throw invalidParam(
          'BODY with variables needs example.body_text (positional) or example.body_text_named_params (named)',
        );
      }
    }
    if (type === 'FOOTER' && (!nonEmpty(c.text) || c.text.length > 60))
      throw invalidParam('FOOTER text is required, at most 60 characters');
    if (type === 'BUTTONS') {
      if (!Array.isArray(c.buttons) || c.buttons.length === 0 || c.buttons.length > 10)
        throw invalidParam('BUTTONS needs 1 to 10 buttons');
      for (const b of c.buttons) {
        if (!isObj(b) || !BUTTON_TYPES.includes(String(b.type).toUpperCase()))
          throw invalidParam(`button type must be one of ${BUTTON_TYPES.join(', ')}`);
        const bt = String(b.type).toUpperCase();
        if (bt !== 'OTP' && bt !== 'COPY_CODE' && !nonEmpty(b.text)) throw invalidParam(`${bt} button needs text`);
        if (bt === 'URL' && !nonEmpty(b.url)) throw invalidParam('URL button needs url');
        if (bt === 'PHONE_NUMBER' && !nonEmpty(b.phone_number))
          throw invalidParam('PHONE_NUMBER button needs phone_number');
      }
    }
    if (type === 'CAROUSEL' && (!Array.isArray(c.cards) || c.cards.length === 0 || c.cards.length > 10)) {
      throw invalidParam('CAROUSEL needs 1 to 10 cards');
    }
  }
  if (category !== 'AUTHENTICATION' && !seen.has('BODY')) throw invalidParam('a BODY component is required');
  return components as TemplateComponent[];
}

function hasExample(example: unknown, key: string): boolean {
  return isObj(example) && (example[key] !== undefined || example[`${key}_named_params`] !== undefined);
}

/** Validation of an uploaded flow.json, in Meta's validation_errors shape. */
export function validateFlowJson(raw: string): FlowValidationError[] {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (err) {
    return [
      {
        error: 'INVALID_JSON',
        error_type: 'JSON_SCHEMA_ERROR',
        message: `Flow JSON is not valid JSON: ${(err as Error).message}`,
        line_start: 1,
        line_end: 1,
        column_start: 1,
        column_end: 1,
      },
    ];
  }
  const errors: FlowValidationError[] = [];
  const missing = (prop: string, where = '') =>
    errors.push({
      error: 'MISSING_REQUIRED_PROPERTY',
      error_type: 'JSON_SCHEMA_ERROR',
      message: `The property '${prop}' is required${where}.`,
    });
  if (!isObj(doc)) {
    return [
      { error: 'INVALID_PROPERTY_TYPE', error_type: 'JSON_SCHEMA_ERROR', message: 'Flow JSON must be an object.' },
    ];
  }
  if (!nonEmpty(doc.version)) missing('version');
  if (doc.screens === undefined) missing('screens');
  else if (!Array.isArray(doc.screens) || doc.screens.length === 0) {
    errors.push({
      error: 'INVALID_PROPERTY_VALUE',
      error_type: 'JSON_SCHEMA_ERROR',
      message: "The property 'screens' must be a non-empty array.",
    });
  } else {
    const ids = new Set<string>();
    doc.screens.forEach((s, i) => {
      if (!isObj(s)) {
        errors.push({
          error: 'INVALID_PROPERTY_TYPE',
          error_type: 'JSON_SCHEMA_ERROR',
          message: `screens[${i}] must be an object.`,
        });
        return;
      }
      if (!nonEmpty(s.id)) missing('id', ` in screens[${i}]`);
      else if (ids.has(s.id))
        errors.push({
          error: 'DUPLICATE_SCREEN_ID',
          error_type: 'FLOW_JSON_ERROR',
          message: `Duplicate screen id '${s.id}'.`,
        });
      else ids.add(s.id);
      if (!isObj(s.layout)) missing('layout', ` in screens[${i}]`);
    });
  }
  return errors;
}
