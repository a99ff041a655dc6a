/**
 * The deterministic interpreter. `start` and `advance` never mutate their arguments, never read a
 * clock, never use randomness and never do I/O: they return the next state and the effects the driver
 * must perform. See README.md for the protocol.
 */
import { firstMatchingRule } from './conditions';
import { DEFAULT_RECIPIENT_TEMPLATE, type EffectNode, type WorkflowDefinition, type WorkflowNode } from './definition';
import { parseDuration } from './duration';
import {
  CONSUMED_REPLY_IDS_LIMIT,
  DEFAULT_MAX_INLINE_STEPS,
  HISTORY_LIMIT,
  STATE_VERSION,
  type ActionEffect,
  type Effect,
  type EngineEvent,
  type InterpreterOptions,
  type RunContext,
  type RunError,
  type RunState,
  type StartInput,
  type StepResult,
} from './protocol';
import { matchReplyBranch, type InboundReply } from './reply-matching';
import {
  FORBIDDEN_SEGMENTS,
  renderJson,
  renderTemplateDetailed,
  renderUrlDetailed,
  type TemplateScope,
} from './template-binding';
import { CONTACT_BINDING_KEYS, formatValidationErrors, validateDefinition } from './validate';

/** Thrown while building an effect; turned into a failed run. */
class RunFailure extends Error {
  constructor(readonly error: RunError) {
    super(error.message);
  }
}

function cloneJson<T>(value: T): T {
  if (value === undefined) return null as T;
  return JSON.parse(JSON.stringify(value)) as T;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function scopeOf(context: RunContext): TemplateScope {
  return { payload: context.payload, contact: context.contact, reply: context.reply, vars: context.vars };
}

function pushHistory(state: RunState, node: WorkflowNode, seq: number, outcome: string): void {
  state.history.push({ seq, nodeId: node.id, type: node.type, outcome });
  state.historyCount++;
  if (state.history.length > HISTORY_LIMIT) state.history.splice(0, state.history.length - HISTORY_LIMIT);
}

function failRun(state: RunState, error: RunError, effects: Effect[]): void {
  state.status = 'failed';
  state.waitingFor = null;
  state.error = error;
  effects.push({ type: 'fail', seq: state.seq, error });
}

/** An http_request's URL: values encoded as data (renderUrlDetailed); one that would move the request fails the step. */
function bindUrl(node: WorkflowNode, template: string, scope: TemplateScope): string {
  const { text, missing, refused } = renderUrlDetailed(template, scope);
  if (refused.length)
    throw new RunFailure({
      code: 'binding_error',
      message: `Binding error in node "${node.id}" (${node.type}): field "url": ${refused.map((r) => `{{${r.path}}} ${r.why}`).join('; ')}`,
      nodeId: node.id,
      field: 'url',
      paths: refused.map((r) => r.path),
    });
  return requiredText(node, 'url', template, text, missing);
}

/** Renders a template that must not come out empty; a binding error names the node, field and paths. */
function bindRequired(node: WorkflowNode, field: string, template: string, scope: TemplateScope): string {
  const { text, missing } = renderTemplateDetailed(template, scope);
  return requiredText(node, field, template, text, missing);
}

function requiredText(node: WorkflowNode, field: string, template: string, text: string, missing: string[]): string {
  if (text.trim() === '') {
    const detail =
      missing.length > 0
        ? `unresolved path(s) ${missing.map((p) => `{{${p}}}`).join(', ')}`
        : `template ${JSON.stringify(template)} rendered empty`;
    throw new RunFailure({
      code: 'binding_error',
      message: `Binding error in node "${node.id}" (${node.type}): required field "${field}" resolved to an empty value: ${detail}`,
      nodeId: node.id,
      field,
      paths: missing,
    });
  }
  return text;
}

function bindOptional(template: string, scope: TemplateScope): string {
  return renderTemplateDetailed(template, scope).text;
}

function bindMap(
  map: Record<string, string> | undefined,
  scope: TemplateScope,
  dropEmpty = false,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!map) return out;
  for (const key of Object.keys(map)) {
    if (FORBIDDEN_SEGMENTS.includes(key)) continue;
    const value = bindOptional(map[key], scope);
    if (dropEmpty && value === '') continue;
    out[key] = value;
  }
  return out;
}

function buildEffect(node: EffectNode, seq: number, context: RunContext): ActionEffect {
  const scope = scopeOf(context);
  const base = { seq, nodeId: node.id };
  switch (node.type) {
    case 'send_template': {
      const effect: ActionEffect = {
        type: 'send_template',
        ...base,
        to: bindRequired(node, 'to', node.to ?? DEFAULT_RECIPIENT_TEMPLATE, scope),
        templateName: node.templateName,
        variables: bindMap(node.variables, scope),
      };
      if (node.mediaUrl !== undefined) effect.mediaUrl = bindRequired(node, 'mediaUrl', node.mediaUrl, scope);
      return effect;
    }
    case 'send_session_message': {
      const effect: ActionEffect = {
        type: 'send_session_message',
        ...base,
        to: bindRequired(node, 'to', node.to ?? DEFAULT_RECIPIENT_TEMPLATE, scope),
        text: bindRequired(node, 'text', node.text, scope),
      };
      if (node.buttons) {
        effect.buttons = node.buttons.map((b, i) => {
          const text = bindRequired(node, `buttons[${i}].text`, b.text, scope);
          const payload =
            b.payload !== undefined ? bindRequired(node, `buttons[${i}].payload`, b.payload, scope) : text;
          return { text, payload };
        });
      }
      return effect;
    }
    case 'trigger_campaign': {
      const c = node.contact ?? {};
      const contact: { phoneNumber: string; name?: string; email?: string; variables?: Record<string, string> } = {
        phoneNumber: bindRequired(node, 'contact.phoneNumber', c.phoneNumber ?? DEFAULT_RECIPIENT_TEMPLATE, scope),
      };
      if (c.name !== undefined) contact.name = bindOptional(c.name, scope);
      if (c.email !== undefined) contact.email = bindOptional(c.email, scope);
      if (c.variables !== undefined) contact.variables = bindMap(c.variables, scope);
      return { type: 'trigger_campaign', ...base, campaignId: String(node.campaignId), contact };
    }
    case 'http_request': {
      const effect: ActionEffect = {
        type: 'http_request',
        ...base,
        method: node.method,
        url: bindUrl(node, node.url, scope),
        headers: bindMap(node.headers, scope),
      };
      if (node.body !== undefined) effect.body = renderJson(node.body, scope);
      if (node.saveAs !== undefined) effect.saveAs = node.saveAs;
      return effect;
    }
    case 'update_contact': {
      const effect: ActionEffect = { type: 'update_contact', ...base, fields: bindMap(node.fields, scope, true) };
      const { id, phone } = context.contact;
      if (typeof id === 'string' && id !== '') effect.contactId = id;
      if (typeof phone === 'string' && phone !== '') effect.phone = phone;
      return effect;
    }
  }
}

interface Run {
  nodes: Map<string, WorkflowNode>;
  state: RunState;
  effects: Effect[];
  maxInlineSteps: number;
}

/** Executes nodes from `nodeId` until the run waits, completes or fails. */
function runFrom(run: Run, nodeId: string): void {
  const { state, effects } = run;
  state.status = 'running';
  state.waitingFor = null;
  let id = nodeId;
  for (let steps = 0; ; steps++) {
    state.seq++;
    if (steps >= run.maxInlineSteps) {
      failRun(
        state,
        {
          code: 'step_limit_exceeded',
          message: `more than ${run.maxInlineSteps} steps without waiting (a loop without delay or wait_for_reply?) at node "${id}"`,
          nodeId: id,
        },
        effects,
      );
      return;
    }
    const node = run.nodes.get(id);
    if (!node) {
      failRun(state, { code: 'node_not_found', message: `node "${id}" is not in the definition`, nodeId: id }, effects);
      return;
    }
    state.currentNodeId = id;
    const seq = state.seq;
    switch (node.type) {
      case 'end':
        pushHistory(state, node, seq, 'end');
        state.status = 'completed';
        effects.push({ type: 'complete', seq });
        return;
      case 'condition': {
        const index = firstMatchingRule(node.rules, scopeOf(state.context));
        pushHistory(state, node, seq, index === -1 ? 'else' : `rule:${index}`);
        id = index === -1 ? node.else : node.rules[index].next;
        continue;
      }
      case 'delay': {
        const durationMs = parseDuration(node.duration);
        state.status = 'waiting';
        state.waitingFor = { kind: 'timer', seq, nodeId: node.id, durationMs };
        effects.push({ type: 'start_timer', seq, nodeId: node.id, durationMs });
        return;
      }
      case 'wait_for_reply': {
        const timeoutMs = parseDuration(node.timeout);
        state.status = 'waiting';
        state.waitingFor = { kind: 'reply', seq, nodeId: node.id, timeoutMs };
        effects.push({ type: 'wait_for_reply', seq, nodeId: node.id, timeoutMs });
        return;
      }
      default: {
        let effect: ActionEffect;
        try {
          effect = buildEffect(node, seq, state.context);
        } catch (e) {
          if (!(e instanceof RunFailure)) throw e;
          pushHistory(state, node, seq, 'binding_error');
          failRun(state, e.error, effects);
          return;
        }
        state.status = 'waiting';
        state.waitingFor = { kind: 'effect', seq, nodeId: node.id, effect: cloneJson(effect) };
        effects.push(effect);
        return;
      }
    }
  }
}

/** Runs `body`, turning an unexpected exception (e.g. a malformed definition passed without validation) into a failed run. */
function guarded(run: Run, body: () => void): StepResult {
  try {
    body();
  } catch (e) {
    run.effects.length = 0;
    failRun(
      run.state,
      {
        code: 'invalid_definition',
        message: `cannot execute node "${run.state.currentNodeId}": ${(e as Error)?.message ?? String(e)}`,
        ...(run.state.currentNodeId ? { nodeId: run.state.currentNodeId } : {}),
      },
      run.effects,
    );
  }
  return { state: run.state, effects: run.effects };
}

/**
 * What the engine derives from a definition, kept per definition object: a driver that reuses one object for every run
 * of a published version (the embedded driver does) validates it and indexes its nodes once, not at every step (a
 * 300-node definition takes ~0.5 ms to validate). Definitions are never changed once handed to the engine.
 */
const validations = new WeakMap<object, ReturnType<typeof validateDefinition>>();
const nodeMaps = new WeakMap<object, Map<string, WorkflowNode>>();

function validated(definition: WorkflowDefinition): ReturnType<typeof validateDefinition> {
  if (!isObject(definition)) return validateDefinition(definition, { atRunStart: true });
  let validation = validations.get(definition);
  if (!validation) validations.set(definition, (validation = validateDefinition(definition, { atRunStart: true })));
  return validation;
}

/** An update_contact step's fields as the run's contact sees them: never its id or number (versions published before
 * publishing refused them stored them as custom fields, and moved the run to another contact). */
function withoutBinding(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  const rest = { ...fields };
  for (const key of CONTACT_BINDING_KEYS) delete rest[key];
  return rest;
}

function nodeMap(definition: WorkflowDefinition): Map<string, WorkflowNode> {
  let nodes = nodeMaps.get(definition);
  if (!nodes) nodeMaps.set(definition, (nodes = new Map(definition.nodes.map((n) => [n.id, n]))));
  return nodes;
}

/** Starts a run: validates the definition, then executes from startNodeId until the first wait. */
export function start(
  definition: WorkflowDefinition,
  input: StartInput = {},
  options: InterpreterOptions = {},
): StepResult {
  const state: RunState = {
    version: STATE_VERSION,
    status: 'running',
    currentNodeId: null,
    seq: 0,
    context: {
      payload: cloneJson(input.payload ?? null),
      contact: isObject(input.contact) ? cloneJson(input.contact) : {},
      reply: null,
      vars: {},
    },
    waitingFor: null,
    history: [],
    historyCount: 0,
    consumedReplyIds: [],
  };
  const effects: Effect[] = [];
  const validation = validated(definition);
  if (!validation.ok) {
    failRun(
      state,
      {
        code: 'invalid_definition',
        message: `invalid workflow definition: ${formatValidationErrors(validation.errors)}`,
      },
      effects,
    );
    return { state, effects };
  }
  const run: Run = {
    nodes: nodeMap(definition),
    state,
    effects,
    maxInlineSteps: options.maxInlineSteps ?? DEFAULT_MAX_INLINE_STEPS,
  };
  return guarded(run, () => runFrom(run, definition.startNodeId));
}

function unchanged(state: RunState): StepResult {
  return { state, effects: [] };
}

function effectErrorOf(error: unknown): { message: string; code?: string } {
  if (typeof error === 'string') return { message: error };
  if (isObject(error) && typeof error.message === 'string') {
    return typeof error.code === 'string' ? { message: error.message, code: error.code } : { message: error.message };
  }
  return { message: 'effect failed' };
}

function httpResultOf(result: unknown): Record<string, unknown> {
  if (!isObject(result)) return { status: null, body: cloneJson(result ?? null) };
  const saved: Record<string, unknown> = {
    status: typeof result.status === 'number' ? result.status : null,
    body: cloneJson(result.body ?? null),
  };
  if (isObject(result.headers)) saved.headers = cloneJson(result.headers);
  return saved;
}

/**
 * Feeds one event to a run. Events the run is not waiting for (finished run, stale or duplicate seq,
 * a reply during a delay, a reply that matches no branch, an already consumed reply messageId) are
 * ignored: the same state object is returned with no effects.
 */
export function advance(
  definition: WorkflowDefinition,
  current: RunState,
  event: EngineEvent,
  options: InterpreterOptions = {},
): StepResult {
  if (!current || current.status === 'completed' || current.status === 'failed') return unchanged(current);
  const waiting = current.waitingFor;
  if (!waiting || !isObject(event)) return unchanged(current);

  // Decide first whether the event applies, without touching the state.
  let apply: (run: Run, node: WorkflowNode) => void;
  switch (event.type) {
    case 'effect_completed':
      if (waiting.kind !== 'effect' || event.seq !== waiting.seq) return unchanged(current);
      apply = (run, node) => {
        const effect = (run.state.waitingFor as Extract<typeof waiting, { kind: 'effect' }>).effect;
        const ctx = run.state.context;
        if (effect.type === 'http_request' && effect.saveAs && !FORBIDDEN_SEGMENTS.includes(effect.saveAs)) {
          ctx.vars[effect.saveAs] = httpResultOf(event.result);
        }
        if (effect.type === 'update_contact') ctx.contact = { ...ctx.contact, ...withoutBinding(effect.fields) };
        pushHistory(run.state, node, waiting.seq, 'completed');
        runFrom(run, (node as EffectNode).next);
      };
      break;
    case 'effect_failed':
      if (waiting.kind !== 'effect' || event.seq !== waiting.seq) return unchanged(current);
      apply = (run, node) => {
        const { message, code } = effectErrorOf(event.error);
        const effectNode = node as EffectNode;
        if (effectNode.onError !== undefined) {
          run.state.context.vars.lastError = { nodeId: node.id, message, ...(code ? { code } : {}) };
          pushHistory(run.state, node, waiting.seq, 'on_error');
          runFrom(run, effectNode.onError);
          return;
        }
        pushHistory(run.state, node, waiting.seq, 'failed');
        failRun(
          run.state,
          {
            code: 'effect_failed',
            message: `node "${node.id}" (${node.type}) failed: ${message}`,
            nodeId: node.id,
          },
          run.effects,
        );
      };
      break;
    case 'timer_fired':
      if ((waiting.kind !== 'timer' && waiting.kind !== 'reply') || event.seq !== waiting.seq)
        return unchanged(current);
      apply = (run, node) => {
        if (node.type === 'delay') {
          pushHistory(run.state, node, waiting.seq, 'timer_fired');
          runFrom(run, node.next);
        } else if (node.type === 'wait_for_reply') {
          run.state.context.reply = null;
          pushHistory(run.state, node, waiting.seq, 'timeout');
          runFrom(run, node.onTimeout);
        } else {
          throw new Error(`node type ${node.type} does not wait for a timer`);
        }
      };
      break;
    case 'reply_received': {
      if (waiting.kind !== 'reply' || !isObject(event.reply)) return unchanged(current);
      if (event.seq !== undefined && event.seq !== waiting.seq) return unchanged(current);
      const reply = event.reply;
      const messageId = typeof reply.messageId === 'string' && reply.messageId !== '' ? reply.messageId : undefined;
      if (messageId && (current.consumedReplyIds ?? []).includes(messageId)) return unchanged(current);
      const node = definition.nodes.find((n) => n.id === waiting.nodeId);
      if (!node || node.type !== 'wait_for_reply') {
        apply = () => {
          throw new Error(`node "${waiting.nodeId}" is not a wait_for_reply node`);
        };
        break;
      }
      const index = matchReplyBranch(node.branches, reply as InboundReply);
      if (index === -1) return unchanged(current);
      apply = (run) => {
        run.state.context.reply = cloneJson(reply as InboundReply);
        if (messageId) {
          const ids = (run.state.consumedReplyIds ??= []);
          ids.push(messageId);
          if (ids.length > CONSUMED_REPLY_IDS_LIMIT) ids.splice(0, ids.length - CONSUMED_REPLY_IDS_LIMIT);
        }
        pushHistory(run.state, node, waiting.seq, `branch:${index}`);
        runFrom(run, node.branches[index].next);
      };
      break;
    }
    default:
      return unchanged(current);
  }

  const state = cloneJson(current);
  const run: Run = {
    nodes: nodeMap(definition),
    state,
    effects: [],
    maxInlineSteps: options.maxInlineSteps ?? DEFAULT_MAX_INLINE_STEPS,
  };
  return guarded(run, () => {
    const node = run.nodes.get(waiting.nodeId);
    if (!node) {
      failRun(
        state,
        {
          code: 'node_not_found',
          message: `node "${waiting.nodeId}" is not in the definition`,
          nodeId: waiting.nodeId,
        },
        run.effects,
      );
      return;
    }
    apply(run, node);
  });
}

/** True when the run will not change any more. */
export function isFinished(state: RunState): boolean {
  return state.status === 'completed' || state.status === 'failed';
}

/**
 * The idempotency key of a step's effect. Both drivers (Temporal and embedded) must use this so a run
 * moved between them, or re-executed after a crash, never performs an effect twice.
 */
export function effectIdempotencyKey(runId: string, seq: number): string {
  return `run:${runId}:step:${seq}`;
}
