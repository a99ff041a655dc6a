/**
 * The driver protocol: run state, effects (what the driver must do) and events (what it feeds back).
 * Everything here is plain JSON: a RunState survives `JSON.parse(JSON.stringify(state))`.
 */
import type { HttpMethod } from './definition';
import type { InboundReply } from './reply-matching';

export type RunStatus = 'running' | 'waiting' | 'completed' | 'failed';

export interface RunContact {
  id?: string;
  phone?: string;
  name?: string;
  email?: string;
  [field: string]: unknown;
}

export interface RunContext {
  /** The trigger payload (webhook body, or the inbound message for keyword triggers). */
  payload: unknown;
  contact: RunContact;
  /** The reply that resumed the last wait_for_reply; null before any reply and after a timeout. */
  reply: InboundReply | null;
  /** Variables: http_request results under their saveAs name, `lastError` after an onError edge. */
  vars: Record<string, unknown>;
}

export type RunErrorCode =
  | 'invalid_definition'
  | 'binding_error'
  | 'effect_failed'
  | 'node_not_found'
  | 'step_limit_exceeded'
  /** Temporal driver: the run's execution was closed outside the workflow (terminated, cancelled, timed out) */
  | 'execution_closed';

export interface RunError {
  code: RunErrorCode;
  message: string;
  nodeId?: string;
  /** For binding errors: the node field at fault and the template paths that resolved to nothing. */
  field?: string;
  paths?: string[];
}

/** What would resume a waiting run. */
export type WaitingFor =
  | { kind: 'effect'; seq: number; nodeId: string; effect: ActionEffect }
  | { kind: 'timer'; seq: number; nodeId: string; durationMs: number }
  | { kind: 'reply'; seq: number; nodeId: string; timeoutMs: number };

export interface HistoryEntry {
  seq: number;
  nodeId: string;
  type: string;
  /** e.g. `completed`, `failed`, `on_error`, `timer_fired`, `branch:0`, `timeout`, `rule:1`, `else`, `end`. */
  outcome: string;
}

export const HISTORY_LIMIT = 100;
export const CONSUMED_REPLY_IDS_LIMIT = 20;
export const STATE_VERSION = 1;

export interface RunState {
  version: number;
  status: RunStatus;
  /** The node being executed or waited on; the last node for finished runs. */
  currentNodeId: string | null;
  /** Step counter: incremented for every node executed; effects and waits carry the seq of their step. */
  seq: number;
  context: RunContext;
  waitingFor: WaitingFor | null;
  /** The last HISTORY_LIMIT steps, oldest first. */
  history: HistoryEntry[];
  /** Total number of steps ever recorded (history may be truncated). */
  historyCount: number;
  /** messageIds of replies already consumed (bounded), so a redelivered reply is ignored. */
  consumedReplyIds: string[];
  error?: RunError;
}

export interface SendTemplateEffect {
  type: 'send_template';
  seq: number;
  nodeId: string;
  to: string;
  templateName: string;
  /** Key order is the definition's order (body variables are filled in key order). */
  variables: Record<string, string>;
  mediaUrl?: string;
}

export interface SendSessionMessageEffect {
  type: 'send_session_message';
  seq: number;
  nodeId: string;
  to: string;
  text: string;
  buttons?: { text: string; payload: string }[];
}

export interface TriggerCampaignEffect {
  type: 'trigger_campaign';
  seq: number;
  nodeId: string;
  campaignId: string;
  contact: { phoneNumber: string; name?: string; email?: string; variables?: Record<string, string> };
}

export interface HttpRequestEffect {
  type: 'http_request';
  seq: number;
  nodeId: string;
  method: HttpMethod;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  saveAs?: string;
}

export interface UpdateContactEffect {
  type: 'update_contact';
  seq: number;
  nodeId: string;
  /** The run's contact id when known (context.contact.id), else the phone below identifies the contact. */
  contactId?: string;
  phone?: string;
  fields: Record<string, string>;
}

/** Effects after which the run waits for effect_completed / effect_failed with the same seq. */
export type ActionEffect =
  SendTemplateEffect | SendSessionMessageEffect | TriggerCampaignEffect | HttpRequestEffect | UpdateContactEffect;

export interface StartTimerEffect {
  type: 'start_timer';
  seq: number;
  nodeId: string;
  durationMs: number;
}

export interface WaitForReplyEffect {
  type: 'wait_for_reply';
  seq: number;
  nodeId: string;
  timeoutMs: number;
}

export interface CompleteEffect {
  type: 'complete';
  seq: number;
}

export interface FailEffect {
  type: 'fail';
  seq: number;
  error: RunError;
}

export type Effect = ActionEffect | StartTimerEffect | WaitForReplyEffect | CompleteEffect | FailEffect;

/** The outcome of an http_request, as the driver reports it (non-2xx statuses are results, not failures). */
export interface HttpResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type EngineEvent =
  | { type: 'effect_completed'; seq: number; result?: unknown }
  | { type: 'effect_failed'; seq: number; error: string | { message: string; code?: string } }
  | { type: 'timer_fired'; seq: number }
  /** `seq` is optional: when given it must equal the waiting step's seq. */
  | { type: 'reply_received'; reply: InboundReply; seq?: number };

export interface StepResult {
  state: RunState;
  effects: Effect[];
}

export interface StartInput {
  payload?: unknown;
  contact?: RunContact;
}

export interface InterpreterOptions {
  /** Maximum nodes executed in one start/advance call before the run fails (default 1000). */
  maxInlineSteps?: number;
}

export const DEFAULT_MAX_INLINE_STEPS = 1000;
