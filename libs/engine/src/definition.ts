/**
 * Workflow definition format (the data saved by `POST /v1/workflows`).
 *
 * A workflow is `{ trigger, startNodeId, nodes }`. Every node has a unique `id` and a `type`.
 * Fields documented as "template" are strings that may contain `{{path}}` bindings
 * (see template-binding.ts); everything else is literal.
 *
 * Every node may also carry the editor-only fields `label`, `description` and `position`;
 * the interpreter ignores them.
 */

export type Trigger = WebhookTrigger | KeywordTrigger;

/** Started by a POST to the workflow's inbound webhook URL; the JSON body becomes `payload`. */
export interface WebhookTrigger {
  type: 'webhook';
}

/** Started by an inbound customer message whose text matches one of the keywords (case-insensitive, trimmed). */
export interface KeywordTrigger {
  type: 'keyword';
  keywords: string[];
}

/** A duration: a positive integer number of seconds, or a string `30s`, `15m`, `2h`, `1d`. */
export type Duration = number | string;

/** A string that may contain `{{path}}` bindings. */
export type TemplateString = string;

interface NodeBase {
  id: string;
  label?: string;
  description?: string;
  position?: { x: number; y: number };
}

/**
 * Effect nodes (send_template, send_session_message, trigger_campaign, http_request, update_contact)
 * wait for the driver to report the effect's outcome. If the effect fails and `onError` is set the run
 * continues there (with `vars.lastError` = { nodeId, message, code? }); without `onError` the run fails.
 */
interface EffectNodeBase extends NodeBase {
  next: string;
  onError?: string;
}

export interface SendTemplateNode extends EffectNodeBase {
  type: 'send_template';
  /** Name of an approved template of the account (checked by the service, see templateNamesUsed). Not a template string. */
  templateName: string;
  /** Recipient, template. Default `{{contact.phone}}`. Required at run time (a binding error fails the run). */
  to?: TemplateString;
  /** Template variables, values are templates. KEY ORDER IS PRESERVED (body variables are filled in key order). */
  variables?: Record<string, TemplateString>;
  /** Media header URL, template. When present it must resolve to a non-empty value. */
  mediaUrl?: TemplateString;
}

export interface QuickReplyButton {
  /** Button label, template. */
  text: TemplateString;
  /** Payload the platform returns when the customer taps it; defaults to the rendered text. Template. */
  payload?: TemplateString;
}

export interface SendSessionMessageNode extends EffectNodeBase {
  type: 'send_session_message';
  /** Recipient, template. Default `{{contact.phone}}`. */
  to?: TemplateString;
  /** Message text, template. Required at run time. */
  text: TemplateString;
  /** Quick-reply buttons (1 to 3). */
  buttons?: QuickReplyButton[];
}

export interface DelayNode extends NodeBase {
  type: 'delay';
  duration: Duration;
  next: string;
}

export type ReplyMatch =
  { type: 'any' } | { type: 'button'; payload: string } | { type: 'keyword'; keywords: string[] };

export interface ReplyBranch {
  match: ReplyMatch;
  next: string;
}

export interface WaitForReplyNode extends NodeBase {
  type: 'wait_for_reply';
  /** Required. How long to wait before following `onTimeout`. */
  timeout: Duration;
  /** Checked in order; the first match wins. A reply that matches none is ignored (the run keeps waiting). */
  branches: ReplyBranch[];
  /** Node to go to when the timeout expires. */
  onTimeout: string;
}

export const CONDITION_OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'starts_with',
  'exists',
  'not_exists',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export interface ConditionRule {
  /** Template. A template that is exactly one `{{path}}` yields the raw value (number, array...). */
  left: TemplateString;
  operator: ConditionOperator;
  /** Template (or an array of templates for `in`). Not used by `exists` / `not_exists`. */
  right?: TemplateString | TemplateString[];
  /** String comparisons are case-insensitive unless this is true. */
  caseSensitive?: boolean;
  next: string;
}

export interface ConditionNode extends NodeBase {
  type: 'condition';
  /** Evaluated in order; the first rule that holds wins. */
  rules: ConditionRule[];
  /** Node to go to when no rule holds. */
  else: string;
}

export interface CampaignContact {
  /** Template. Default `{{contact.phone}}`. Required at run time. */
  phoneNumber?: TemplateString;
  name?: TemplateString;
  email?: TemplateString;
  variables?: Record<string, TemplateString>;
}

export interface TriggerCampaignNode extends EffectNodeBase {
  type: 'trigger_campaign';
  campaignId: string | number;
  contact?: CampaignContact;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface HttpRequestNode extends EffectNodeBase {
  type: 'http_request';
  method: HttpMethod;
  /** Template. Required at run time. The SSRF guard is the driver's job. */
  url: TemplateString;
  /** Header values are templates. */
  headers?: Record<string, TemplateString>;
  /** Any JSON; string leaves are templates (a leaf that is exactly one `{{path}}` keeps the raw value). */
  body?: unknown;
  /** Variable name: the result `{ status, body }` is saved under `vars[saveAs]`. */
  saveAs?: string;
}

export interface UpdateContactNode extends EffectNodeBase {
  type: 'update_contact';
  /** `name`, `email` and custom fields; values are templates. Keys that render empty are left out. */
  fields: Record<string, TemplateString>;
}

export interface EndNode extends NodeBase {
  type: 'end';
}

export type WorkflowNode =
  | SendTemplateNode
  | SendSessionMessageNode
  | DelayNode
  | WaitForReplyNode
  | ConditionNode
  | TriggerCampaignNode
  | HttpRequestNode
  | UpdateContactNode
  | EndNode;

export type NodeType = WorkflowNode['type'];

export const NODE_TYPES: readonly NodeType[] = [
  'send_template',
  'send_session_message',
  'delay',
  'wait_for_reply',
  'condition',
  'trigger_campaign',
  'http_request',
  'update_contact',
  'end',
];

/** Node kinds whose execution asks the driver to perform an effect and wait for its outcome. */
export const EFFECT_NODE_TYPES = [
  'send_template',
  'send_session_message',
  'trigger_campaign',
  'http_request',
  'update_contact',
] as const;
export type EffectNodeType = (typeof EFFECT_NODE_TYPES)[number];
export type EffectNode = Extract<WorkflowNode, { type: EffectNodeType }>;

export interface WorkflowDefinition {
  trigger: Trigger;
  startNodeId: string;
  nodes: WorkflowNode[];
}

export const DEFAULT_RECIPIENT_TEMPLATE = '{{contact.phone}}';

/** Upper bound on the size of a definition (validation rejects larger ones). */
export const MAX_NODES = 500;

export function isEffectNode(node: WorkflowNode): node is EffectNode {
  return (EFFECT_NODE_TYPES as readonly string[]).includes(node.type);
}

/** Every node id a node can go to, with the field naming the edge. */
export function outgoingEdges(node: WorkflowNode): { field: string; target: string }[] {
  const edges: { field: string; target: string }[] = [];
  switch (node.type) {
    case 'end':
      break;
    case 'wait_for_reply':
      (Array.isArray(node.branches) ? node.branches : []).forEach((b, i) =>
        edges.push({ field: `branches[${i}].next`, target: b?.next }),
      );
      edges.push({ field: 'onTimeout', target: node.onTimeout });
      break;
    case 'condition':
      (Array.isArray(node.rules) ? node.rules : []).forEach((r, i) =>
        edges.push({ field: `rules[${i}].next`, target: r?.next }),
      );
      edges.push({ field: 'else', target: node.else });
      break;
    case 'delay':
      edges.push({ field: 'next', target: node.next });
      break;
    default:
      edges.push({ field: 'next', target: node.next });
      if (node.onError !== undefined) edges.push({ field: 'onError', target: node.onError });
  }
  return edges;
}

/** Unique template names used by send_template nodes, in node order (the service checks they exist). */
export function templateNamesUsed(definition: WorkflowDefinition): string[] {
  const names: string[] = [];
  for (const node of definition.nodes) {
    if (node.type === 'send_template' && !names.includes(node.templateName)) names.push(node.templateName);
  }
  return names;
}
