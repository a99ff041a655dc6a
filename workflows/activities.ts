/**
 * The activities the automation workflow calls: TYPES ONLY (plus two constant lists), so this module is safe in
 * Temporal's workflow sandbox. The implementations live in the worker (`apps/worker`), bound to Nest services,
 * and are registered under these exact names: `performEffect` and `recordRunState`.
 *
 * Both are executed at least once (a retry after a worker crash or a start-to-close timeout runs them again),
 * so both implementations MUST be idempotent:
 * - `performEffect` dedupes on `idempotencyKey` (= `effectIdempotencyKey(runId, seq)` = `run:<runId>:step:<seq>`,
 *   the same key the embedded driver uses): store it with the side effect (e.g. a unique index on the message
 *   row) and, when it is seen again, return the first outcome instead of acting twice.
 * - `recordRunState` is an upsert keyed by `runId` that never moves backwards: ignore a state whose `seq` is
 *   lower than the stored one, or equal to it when the stored state is already finished.
 */
import type {
  ActionEffect,
  Effect,
  EngineEvent,
  HttpRequestEffect,
  RunState,
  WaitingFor,
  SendSessionMessageEffect,
  SendTemplateEffect,
  TriggerCampaignEffect,
  UpdateContactEffect,
} from '@switchboard/engine';

/** The engine's I/O effects: the ones `performEffect` executes. */
export type PerformableEffect =
  SendTemplateEffect | SendSessionMessageEffect | TriggerCampaignEffect | HttpRequestEffect | UpdateContactEffect;

// Compile-time guard: PerformableEffect is exactly the engine's ActionEffect union.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const performableIsAction: Same<PerformableEffect, ActionEffect> = true;
void performableIsAction;

export interface PerformEffectInput {
  runId: string;
  accountId: string;
  /** The engine step the effect belongs to (`effect.seq`). */
  seq: number;
  /** `effectIdempotencyKey(runId, seq)`: the implementation dedupes on it. */
  idempotencyKey: string;
  /** The connected number the run is bound to (keyword-triggered runs); absent/null: the account's default. */
  messagingPhoneId?: string | null;
  effect: PerformableEffect;
}

/**
 * The outcome of an effect that reached a definite answer.
 * - `{ ok: true, result }`: fed back as `effect_completed` (for `http_request` the result is the engine's
 *   `HttpResult` `{ status, body, headers? }`; a non-2xx status is a completed effect).
 * - `{ ok: false, error }`: a permanent, expected failure (template rejected, invalid recipient, URL blocked by
 *   the SSRF guard, network error of an http_request...): fed back as `effect_failed` at once, no retry; the run
 *   takes the node's `onError` edge or fails.
 *
 * Transient failures (database or platform unavailable, rate limited, 5xx) are THROWN: Temporal retries them
 * with backoff (see PERFORM_EFFECT_RETRY in automation.workflow.ts). An error whose `name` (or
 * `ApplicationFailure` type) is in NON_RETRYABLE_EFFECT_ERRORS is not retried. When retries are exhausted or the
 * error is non-retryable, the workflow feeds `effect_failed` with the error's message and its type as `code`.
 */
export type PerformEffectResult =
  { ok: true; result?: unknown } | { ok: false; error: { message: string; code?: string } };

export interface RecordRunStateInput {
  runId: string;
  accountId: string;
  /** The engine state after the step: status, current node, waitingFor, history, error. */
  state: RunState;
  /** The effects that step returned (what the run is about to do, or `complete`/`fail`), for progress display. */
  effects?: Effect[];
  /**
   * What made the step, for the run's history (the time and what the effect did or which reply resumed it, as the
   * embedded driver records them): `at` is the workflow clock when the step was taken, `before` what the run waited
   * for, `event` the engine event it was fed (both null for the first step). Absent in histories recorded before.
   */
  step?: { at: string; before: WaitingFor | null; event: EngineEvent | null };
}

export interface AutomationActivities {
  /** Performs one I/O effect, idempotently by `idempotencyKey`. */
  performEffect(input: PerformEffectInput): Promise<PerformEffectResult>;
  /** Persists the run row (status, state) so the API can show progress. Idempotent upsert by `runId`. */
  recordRunState(input: RecordRunStateInput): Promise<void>;
}

/**
 * Error types (an Error's `name`, or an `ApplicationFailure`'s `type`) that `performEffect` may throw for a
 * permanent failure: Temporal does not retry them and the workflow feeds `effect_failed` at once.
 * Returning `{ ok: false }` is the preferred way; these exist so an implementation that throws domain errors
 * (e.g. libs/automations' `ActivityNotAvailableError`) does not burn retries on them.
 */
export const NON_RETRYABLE_EFFECT_ERRORS = [
  'PermanentEffectError',
  'ActivityNotAvailableError',
  'InvalidEffectError',
  'BlockedUrlError',
] as const;

/** Activity names, as registered on the worker. */
export const ACTIVITY_NAMES = [
  'performEffect',
  'recordRunState',
] as const satisfies readonly (keyof AutomationActivities)[];
