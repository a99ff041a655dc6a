/**
 * Hand-written validation of a workflow definition. Every error names the node (when there is one)
 * and the field at fault. Validation collects all errors rather than stopping at the first.
 */
import {
  CONDITION_OPERATORS,
  HTTP_METHODS,
  MAX_NODES,
  NODE_TYPES,
  outgoingEdges,
  type WorkflowDefinition,
  type WorkflowNode,
} from './definition';
import { tryParseDuration } from './duration';
import { FORBIDDEN_SEGMENTS, jsonStringLeaves, templateSyntaxError } from './template-binding';

export interface ValidationError {
  nodeId?: string;
  field: string;
  message: string;
}

export type ValidationResult = { ok: true; definition: WorkflowDefinition } | { ok: false; errors: ValidationError[] };

type Obj = Record<string, unknown>;

const COMMON_NODE_FIELDS = ['id', 'type', 'label', 'description', 'position'];
const EFFECT_EDGE_FIELDS = ['next', 'onError'];

/** Fields each node kind may have (beyond id, type, label, description, position). */
const NODE_FIELDS: Record<string, string[]> = {
  send_template: ['templateName', 'to', 'variables', 'mediaUrl', ...EFFECT_EDGE_FIELDS],
  send_session_message: ['to', 'text', 'buttons', ...EFFECT_EDGE_FIELDS],
  delay: ['duration', 'next'],
  wait_for_reply: ['timeout', 'branches', 'onTimeout'],
  condition: ['rules', 'else'],
  trigger_campaign: ['campaignId', 'contact', ...EFFECT_EDGE_FIELDS],
  http_request: ['method', 'url', 'headers', 'body', 'saveAs', ...EFFECT_EDGE_FIELDS],
  update_contact: ['fields', ...EFFECT_EDGE_FIELDS],
  end: [],
};

const MAX_QUICK_REPLY_BUTTONS = 3;
const MAX_BUTTON_TITLE = 20;
/** `contact.id` and `contact.phone` bind a run to its contact (sends, replies, update_contact). */
export const CONTACT_BINDING_KEYS = ['id', 'phone'];
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Keys JavaScript (and JSON.parse) move to the front of an object: they would break key order. */
const INTEGER_KEY = /^(0|[1-9][0-9]*)$/;
/** Names the interpreter writes itself. */
const RESERVED_VARS = ['lastError'];

function isObject(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

class Collector {
  readonly errors: ValidationError[] = [];

  /**
   * False when a run starts (`start()` validates its version again, and a Temporal run on every replay): rules added
   * after versions were published are checked only when publishing (`if (c.publishing)`), so a version already live
   * keeps running as it did (a new rule there would fail its new runs, and stop a replaying run as non-deterministic).
   */
  constructor(readonly publishing: boolean) {}

  add(nodeId: string | undefined, field: string, message: string): void {
    this.errors.push(nodeId === undefined ? { field, message } : { nodeId, field, message });
  }

  /** A template string: must be a string and parse. */
  template(nodeId: string, field: string, value: unknown, opts: { required?: boolean; nonEmpty?: boolean } = {}): void {
    if (value === undefined) {
      if (opts.required) this.add(nodeId, field, 'is required');
      return;
    }
    if (typeof value !== 'string') {
      this.add(nodeId, field, 'must be a string');
      return;
    }
    if (opts.nonEmpty && value.trim() === '') {
      this.add(nodeId, field, 'must not be empty');
      return;
    }
    const error = templateSyntaxError(value);
    if (error) this.add(nodeId, field, `invalid template: ${error}`);
  }

  /** An object whose values are templates. */
  templateMap(nodeId: string, field: string, value: unknown, opts: { orderedKeys?: boolean } = {}): void {
    if (value === undefined) return;
    if (!isObject(value)) {
      this.add(nodeId, field, 'must be an object of template strings');
      return;
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_SEGMENTS.includes(key)) {
        this.add(nodeId, `${field}.${key}`, 'forbidden key');
        continue;
      }
      if (opts.orderedKeys && INTEGER_KEY.test(key)) {
        this.add(
          nodeId,
          `${field}.${key}`,
          'integer-like keys are reordered by JSON and JavaScript, which breaks variable order; use a name such as "custom1"',
        );
      }
      this.template(nodeId, `${field}.${key}`, value[key]);
    }
  }

  duration(nodeId: string, field: string, value: unknown): void {
    if (value === undefined) {
      this.add(nodeId, field, 'is required');
      return;
    }
    const parsed = tryParseDuration(value);
    if (!parsed.ok) this.add(nodeId, field, parsed.error);
  }

  edge(nodeId: string, field: string, value: unknown, required = true): void {
    if (value === undefined) {
      if (required) this.add(nodeId, field, 'is required (id of the next node)');
      return;
    }
    if (!isNonEmptyString(value)) this.add(nodeId, field, 'must be a node id (non-empty string)');
  }
}

function validateTrigger(trigger: unknown, c: Collector): void {
  if (!isObject(trigger)) {
    c.add(undefined, 'trigger', 'is required: { "type": "webhook" } or { "type": "keyword", "keywords": [...] }');
    return;
  }
  if (trigger.type === 'webhook') {
    for (const key of Object.keys(trigger)) if (key !== 'type') c.add(undefined, `trigger.${key}`, 'unknown field');
    return;
  }
  if (trigger.type === 'keyword') {
    const keywords = trigger.keywords;
    if (!Array.isArray(keywords) || keywords.length === 0) {
      c.add(undefined, 'trigger.keywords', 'must be a non-empty array of strings');
    } else {
      keywords.forEach((k, i) => {
        if (!isNonEmptyString(k)) c.add(undefined, `trigger.keywords[${i}]`, 'must be a non-empty string');
      });
    }
    for (const key of Object.keys(trigger)) {
      if (key !== 'type' && key !== 'keywords') c.add(undefined, `trigger.${key}`, 'unknown field');
    }
    return;
  }
  c.add(
    undefined,
    'trigger.type',
    trigger.type === undefined
      ? 'is required ("webhook" or "keyword")'
      : `unknown trigger type ${JSON.stringify(trigger.type)}: expected "webhook" or "keyword"`,
  );
}

function validateKeywords(nodeId: string, field: string, value: unknown, c: Collector): void {
  if (!Array.isArray(value) || value.length === 0) {
    c.add(nodeId, field, 'must be a non-empty array of strings');
    return;
  }
  value.forEach((k, i) => {
    if (!isNonEmptyString(k)) c.add(nodeId, `${field}[${i}]`, 'must be a non-empty string');
  });
}

function validateNodeFields(node: Obj, id: string, c: Collector): void {
  const type = node.type as string;
  const allowed = [...COMMON_NODE_FIELDS, ...NODE_FIELDS[type]];
  for (const key of Object.keys(node)) {
    if (!allowed.includes(key)) c.add(id, key, `unknown field for a ${type} node`);
  }
  if (EFFECT_EDGE_FIELDS.every((f) => NODE_FIELDS[type].includes(f))) {
    c.edge(id, 'next', node.next);
    c.edge(id, 'onError', node.onError, false);
  }

  switch (type) {
    case 'send_template':
      if (!isNonEmptyString(node.templateName)) c.add(id, 'templateName', 'is required (name of an approved template)');
      c.template(id, 'to', node.to, { nonEmpty: true });
      c.templateMap(id, 'variables', node.variables, { orderedKeys: true });
      c.template(id, 'mediaUrl', node.mediaUrl, { nonEmpty: true });
      break;
    case 'send_session_message':
      c.template(id, 'to', node.to, { nonEmpty: true });
      c.template(id, 'text', node.text, { required: true, nonEmpty: true });
      if (node.buttons !== undefined) {
        if (
          !Array.isArray(node.buttons) ||
          node.buttons.length === 0 ||
          node.buttons.length > MAX_QUICK_REPLY_BUTTONS
        ) {
          c.add(id, 'buttons', `must be an array of 1 to ${MAX_QUICK_REPLY_BUTTONS} quick-reply buttons`);
        } else {
          node.buttons.forEach((b, i) => {
            if (!isObject(b)) {
              c.add(id, `buttons[${i}]`, 'must be an object { text, payload? }');
              return;
            }
            c.template(id, `buttons[${i}].text`, b.text, { required: true, nonEmpty: true });
            c.template(id, `buttons[${i}].payload`, b.payload, { nonEmpty: true });
            // WhatsApp's limit for a button's title, known now when the text is written out (no {{…}})
            if (
              c.publishing &&
              typeof b.text === 'string' &&
              !b.text.includes('{{') &&
              b.text.length > MAX_BUTTON_TITLE
            )
              c.add(id, `buttons[${i}].text`, `must be at most ${MAX_BUTTON_TITLE} characters (WhatsApp's limit)`);
            for (const key of Object.keys(b)) {
              if (key !== 'text' && key !== 'payload') c.add(id, `buttons[${i}].${key}`, 'unknown field');
            }
          });
        }
      }
      break;
    case 'delay':
      c.duration(id, 'duration', node.duration);
      c.edge(id, 'next', node.next);
      break;
    case 'wait_for_reply':
      c.duration(id, 'timeout', node.timeout);
      c.edge(id, 'onTimeout', node.onTimeout);
      if (!Array.isArray(node.branches) || node.branches.length === 0) {
        c.add(
          id,
          'branches',
          'must be a non-empty array of { match, next } (use match { "type": "any" } to accept every reply)',
        );
      } else {
        node.branches.forEach((b, i) => {
          const f = `branches[${i}]`;
          if (!isObject(b)) {
            c.add(id, f, 'must be an object { match, next }');
            return;
          }
          c.edge(id, `${f}.next`, b.next);
          const m = b.match;
          if (!isObject(m)) {
            c.add(id, `${f}.match`, 'is required: { type: "any" | "button" | "keyword" }');
          } else if (m.type === 'any') {
            // nothing else
          } else if (m.type === 'button') {
            if (!isNonEmptyString(m.payload)) c.add(id, `${f}.match.payload`, 'is required for a button match');
          } else if (m.type === 'keyword') {
            validateKeywords(id, `${f}.match.keywords`, m.keywords, c);
          } else {
            c.add(
              id,
              `${f}.match.type`,
              `unknown match type ${JSON.stringify(m.type)}: expected any, button or keyword`,
            );
          }
        });
      }
      break;
    case 'condition':
      c.edge(id, 'else', node.else);
      if (!Array.isArray(node.rules) || node.rules.length === 0) {
        c.add(id, 'rules', 'must be a non-empty array of { left, operator, right?, next }');
      } else {
        node.rules.forEach((r, i) => {
          const f = `rules[${i}]`;
          if (!isObject(r)) {
            c.add(id, f, 'must be an object { left, operator, right?, next }');
            return;
          }
          c.edge(id, `${f}.next`, r.next);
          c.template(id, `${f}.left`, r.left, { required: true });
          if (r.caseSensitive !== undefined && typeof r.caseSensitive !== 'boolean') {
            c.add(id, `${f}.caseSensitive`, 'must be a boolean');
          }
          const op = r.operator;
          if (typeof op !== 'string' || !(CONDITION_OPERATORS as readonly string[]).includes(op)) {
            c.add(
              id,
              `${f}.operator`,
              op === undefined
                ? `is required (one of ${CONDITION_OPERATORS.join(', ')})`
                : `unknown operator ${JSON.stringify(op)}: expected one of ${CONDITION_OPERATORS.join(', ')}`,
            );
          } else if (op === 'exists' || op === 'not_exists') {
            if (r.right !== undefined) c.add(id, `${f}.right`, `must be omitted for ${op}`);
          } else if (op === 'in') {
            if (!Array.isArray(r.right) || r.right.length === 0) {
              c.add(id, `${f}.right`, 'must be a non-empty array of template strings for in');
            } else {
              r.right.forEach((t, j) => c.template(id, `${f}.right[${j}]`, t));
            }
          } else {
            c.template(id, `${f}.right`, r.right, { required: true });
          }
          for (const key of Object.keys(r)) {
            if (!['left', 'operator', 'right', 'caseSensitive', 'next'].includes(key))
              c.add(id, `${f}.${key}`, 'unknown field');
          }
        });
      }
      break;
    case 'trigger_campaign': {
      const cid = node.campaignId;
      if (!(isNonEmptyString(cid) || (typeof cid === 'number' && Number.isSafeInteger(cid) && cid > 0))) {
        c.add(id, 'campaignId', 'is required (non-empty string or positive integer)');
      }
      if (node.contact !== undefined) {
        if (!isObject(node.contact)) {
          c.add(id, 'contact', 'must be an object { phoneNumber?, name?, email?, variables? }');
        } else {
          const contact = node.contact;
          c.template(id, 'contact.phoneNumber', contact.phoneNumber, { nonEmpty: true });
          c.template(id, 'contact.name', contact.name);
          c.template(id, 'contact.email', contact.email);
          c.templateMap(id, 'contact.variables', contact.variables, { orderedKeys: true });
          for (const key of Object.keys(contact)) {
            if (!['phoneNumber', 'name', 'email', 'variables'].includes(key))
              c.add(id, `contact.${key}`, 'unknown field');
          }
        }
      }
      break;
    }
    case 'http_request':
      if (typeof node.method !== 'string' || !(HTTP_METHODS as readonly string[]).includes(node.method)) {
        c.add(id, 'method', `must be one of ${HTTP_METHODS.join(', ')}`);
      }
      c.template(id, 'url', node.url, { required: true, nonEmpty: true });
      c.templateMap(id, 'headers', node.headers);
      if (node.body !== undefined) {
        for (const leaf of jsonStringLeaves(node.body, 'body')) c.template(id, leaf.path, leaf.value);
      }
      if (node.saveAs !== undefined) {
        if (
          typeof node.saveAs !== 'string' ||
          !VARIABLE_NAME.test(node.saveAs) ||
          FORBIDDEN_SEGMENTS.includes(node.saveAs)
        ) {
          c.add(id, 'saveAs', 'must be a variable name (letters, digits and _, not starting with a digit)');
        } else if (RESERVED_VARS.includes(node.saveAs)) {
          c.add(id, 'saveAs', `"${node.saveAs}" is reserved by the engine`);
        }
      }
      break;
    case 'update_contact':
      if (!isObject(node.fields) || Object.keys(node.fields).length === 0) {
        c.add(id, 'fields', 'must be a non-empty object of template strings (name, email, custom fields)');
      } else {
        c.templateMap(id, 'fields', node.fields);
        // the run's own contact binding, not fields of the contact: a step cannot move the run to another contact
        if (c.publishing)
          for (const key of CONTACT_BINDING_KEYS)
            if (key in node.fields)
              c.add(id, `fields.${key}`, `cannot be set: the run's contact is not changed by a step`);
      }
      break;
    case 'end':
      break;
  }
}

/** Nodes on a cycle that passes through no delay or wait_for_reply node (Tarjan SCC). */
function findBusyCycles(nodes: WorkflowNode[]): string[][] {
  const breaking = new Set(nodes.filter((n) => n.type === 'delay' || n.type === 'wait_for_reply').map((n) => n.id));
  const ids = new Set(nodes.map((n) => n.id));
  const adjacency = new Map<string, string[]>();
  for (const node of nodes) {
    if (breaking.has(node.id)) continue;
    adjacency.set(
      node.id,
      outgoingEdges(node)
        .map((e) => e.target)
        .filter((t) => ids.has(t) && !breaking.has(t)),
    );
  }
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];

  const connect = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of adjacency.get(v) ?? []) {
      if (!indices.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indices.get(w)!));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = component.length === 1 && (adjacency.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) cycles.push(component.reverse());
    }
  };
  for (const id of adjacency.keys()) if (!indices.has(id)) connect(id);
  return cycles;
}

export function validateDefinition(def: unknown, options: { atRunStart?: boolean } = {}): ValidationResult {
  const c = new Collector(!options.atRunStart);
  if (!isObject(def)) {
    return {
      ok: false,
      errors: [{ field: '', message: 'definition must be an object { trigger, startNodeId, nodes }' }],
    };
  }
  for (const key of Object.keys(def)) {
    if (!['trigger', 'startNodeId', 'nodes'].includes(key)) c.add(undefined, key, 'unknown field');
  }
  validateTrigger(def.trigger, c);

  const nodes = def.nodes;
  const validNodes: WorkflowNode[] = [];
  const ids = new Set<string>();
  if (!Array.isArray(nodes) || nodes.length === 0) {
    c.add(undefined, 'nodes', 'must be a non-empty array of nodes');
  } else if (nodes.length > MAX_NODES) {
    c.add(undefined, 'nodes', `too many nodes (${nodes.length}); the maximum is ${MAX_NODES}`);
  } else {
    nodes.forEach((node, i) => {
      if (!isObject(node)) {
        c.add(undefined, `nodes[${i}]`, 'must be an object { id, type, ... }');
        return;
      }
      if (!isNonEmptyString(node.id)) {
        c.add(undefined, `nodes[${i}].id`, 'is required (non-empty string)');
        return;
      }
      const id = node.id;
      if (ids.has(id)) {
        c.add(id, 'id', `duplicate node id "${id}"`);
        return;
      }
      ids.add(id);
      if (node.type === undefined) {
        c.add(id, 'type', `is required (one of ${NODE_TYPES.join(', ')})`);
        return;
      }
      if (typeof node.type !== 'string' || !(NODE_TYPES as readonly string[]).includes(node.type)) {
        c.add(id, 'type', `unknown node type ${JSON.stringify(node.type)}: expected one of ${NODE_TYPES.join(', ')}`);
        return;
      }
      validateNodeFields(node, id, c);
      validNodes.push(node as unknown as WorkflowNode);
    });
  }

  if (!isNonEmptyString(def.startNodeId)) {
    c.add(undefined, 'startNodeId', 'is required (id of the first node)');
  } else if (Array.isArray(nodes) && !ids.has(def.startNodeId)) {
    c.add(undefined, 'startNodeId', `unknown node "${def.startNodeId}"`);
  }

  // Dangling edges (only for edges that are well-formed strings; malformed ones are reported above).
  for (const node of validNodes) {
    for (const edge of outgoingEdges(node)) {
      if (isNonEmptyString(edge.target) && !ids.has(edge.target)) {
        c.add(node.id, edge.field, `points to unknown node "${edge.target}"`);
      }
    }
  }

  for (const cycle of findBusyCycles(validNodes)) {
    const path = [...cycle, cycle[0]].join(' → ');
    c.add(cycle[0], 'next', `cycle without a delay or wait_for_reply would loop forever: ${path}`);
  }

  if (c.errors.length > 0) return { ok: false, errors: c.errors };
  return { ok: true, definition: def as unknown as WorkflowDefinition };
}

/** Formats validation errors into one line, e.g. for an exception message. */
export function formatValidationErrors(errors: readonly ValidationError[]): string {
  return errors.map((e) => `${e.nodeId !== undefined ? `node "${e.nodeId}" ` : ''}${e.field}: ${e.message}`).join('; ');
}
