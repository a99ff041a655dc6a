/**
 * The Temporal driver of the automation engine: one workflow execution per run (id `automation-run-<runId>`).
 *
 * The workflow is a deterministic loop around the engine's `start` / `advance`, driven by `state.waitingFor`
 * (which always holds what the step's effect asks for):
 * - an I/O effect (send_template, send_session_message, trigger_campaign, http_request, update_contact)
 *   → the `performEffect` activity → `effect_completed` / `effect_failed`;
 * - `start_timer` → `sleep(durationMs)` → `timer_fired`;
 * - `wait_for_reply` → `condition(() => a reply is buffered, timeout)`, fed by the `reply` signal →
 *   `reply_received` (or `timer_fired` on timeout);
 * - `complete` / `fail` → the workflow returns the final RunState (a failed RUN is a completed WORKFLOW).
 * Every state change is persisted with `recordRunState` before the effect it asks for is performed.
 *
 * Sandbox rules: import only @temporalio/workflow, the engine, and activity TYPES. No Date.now() for anything
 * but deadlines (it is the workflow clock here), no Math.random, no I/O. Changing the sequence of commands
 * (activities, timers, continue-as-new) breaks running executions: guard such changes with `patched()`.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
  type RetryPolicy,
} from '@temporalio/workflow';
import {
  advance,
  boundedDetail,
  effectIdempotencyKey,
  isFinished,
  start,
  type ActionEffect,
  type EngineEvent,
  type InboundReply,
  type RunContact,
  type RunState,
  type StepResult,
  type WorkflowDefinition,
} from '@switchboard/engine';
import { NON_RETRYABLE_EFFECT_ERRORS, type AutomationActivities, type PerformEffectResult } from './activities';
import { GET_STATE_QUERY_NAME, REPLY_SIGNAL_NAME } from './ids';

export { workflowIdForRun } from './ids';

/** A customer reply, as the API signals it. Mirrors the engine's `reply_received` event. */
export interface ReplyEvent {
  /** `{ text?, buttonPayload?, buttonText?, messageId? }`: pass `messageId` so a redelivered webhook is ignored. */
  reply: InboundReply;
  /** Optional: pin the reply to one wait (`state.waitingFor.seq`); a reply for another wait is ignored. */
  seq?: number;
}

export interface AutomationWorkflowInput {
  runId: string;
  accountId: string;
  /** The pinned definition (the run's version); never re-read while the run executes. */
  definition: WorkflowDefinition;
  /** The definition's version number (informational: the run row already pins it). */
  version: number;
  /** The trigger payload (webhook body, or the inbound message for keyword triggers). */
  payload?: unknown;
  contact?: RunContact;
  /** The connected number the run is bound to (keyword-triggered runs); passed to performEffect. */
  messagingPhoneId?: string | null;
  /** Continue-as-new only: the state to resume from (its `waitingFor` is performed; it was not yet). */
  state?: RunState;
  /** Continue-as-new only: replies received and not consumed yet. */
  pendingReplies?: ReplyEvent[];
  /** Continue-as-new only: the absolute deadline (workflow clock, ms) of the reply wait in progress. */
  replyDeadline?: { seq: number; at: number };
  /** Continue as new once the history has this many events (default CONTINUE_AS_NEW_AFTER_EVENTS). */
  continueAsNewAfterEvents?: number;
}

export const replySignal = defineSignal<[ReplyEvent]>(REPLY_SIGNAL_NAME);
export const getStateQuery = defineQuery<RunState>(GET_STATE_QUERY_NAME);

/**
 * History length after which a run continues as new (the server's hard limits are 51,200 events / 50 MB;
 * `continueAsNewSuggested` from the server triggers it too). One effect step is about 12 events.
 */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 2000;

/** Replies kept while the run cannot take them yet (oldest dropped beyond this). */
export const MAX_BUFFERED_REPLIES = 20;

/**
 * Retry policy of performEffect: transient failures (thrown errors) are retried with exponential backoff
 * (1 s, 2 s, 4 s ... capped at 1 min, 8 attempts ≈ 4 min); permanent ones are returned as `{ ok: false }` or
 * thrown with a type in NON_RETRYABLE_EFFECT_ERRORS. Exhausted retries become `effect_failed`.
 */
export const PERFORM_EFFECT_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 8,
  nonRetryableErrorTypes: [...NON_RETRYABLE_EFFECT_ERRORS],
};

/** recordRunState is a database upsert: retried until it succeeds (backoff capped at 1 min). */
export const RECORD_RUN_STATE_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
};

const { performEffect } = proxyActivities<AutomationActivities>({
  // A send is a few seconds; http_request nodes are bounded by the safe HTTP client's own timeout (< 1 min).
  startToCloseTimeout: '1 minute',
  retry: PERFORM_EFFECT_RETRY,
});

const { recordRunState } = proxyActivities<AutomationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: RECORD_RUN_STATE_RETRY,
});

function isReplyEvent(value: unknown): value is ReplyEvent {
  if (value === null || typeof value !== 'object') return false;
  const { reply, seq } = value as Record<string, unknown>;
  return (
    reply !== null &&
    typeof reply === 'object' &&
    !Array.isArray(reply) &&
    (seq === undefined || typeof seq === 'number')
  );
}

/** The effect_failed error for an activity that failed after its retries (or with a non-retryable type). */
function effectErrorOf(failure: ActivityFailure): { message: string; code?: string } {
  const cause = failure.cause;
  if (cause instanceof ApplicationFailure) {
    const code = cause.type && cause.type !== 'Error' ? cause.type : undefined;
    return code ? { message: cause.message, code } : { message: cause.message };
  }
  if (cause instanceof TimeoutFailure) return { message: `effect timed out (${cause.timeoutType})`, code: 'timeout' };
  return { message: cause?.message || failure.message, code: 'activity_failed' };
}

function outcomeEvent(seq: number, outcome: PerformEffectResult): EngineEvent {
  if (outcome && typeof outcome === 'object' && outcome.ok === false) {
    return { type: 'effect_failed', seq, error: outcome.error ?? { message: 'effect failed' } };
  }
  return { type: 'effect_completed', seq, result: outcome?.ok === true ? outcome.result : undefined };
}

export async function automationWorkflow(input: AutomationWorkflowInput): Promise<RunState> {
  const { runId, accountId, definition } = input;
  const threshold = input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS;

  // Replies are buffered: one can arrive while the message it answers is still being "sent" (the activity
  // result not recorded yet). They are offered to the engine when the run waits for a reply.
  const inbox: ReplyEvent[] = (input.pendingReplies ?? []).filter(isReplyEvent);
  let replyDeadline = input.replyDeadline;

  const first: StepResult | undefined = input.state
    ? undefined
    : start(definition, { payload: input.payload, contact: input.contact });
  let state: RunState = first ? first.state : (input.state as RunState);

  setHandler(replySignal, (event: ReplyEvent) => {
    if (!isReplyEvent(event)) {
      log.warn('ignoring a malformed reply signal', { runId });
      return;
    }
    if (isFinished(state)) return;
    inbox.push(event);
    if (inbox.length > MAX_BUFFERED_REPLIES) inbox.splice(0, inbox.length - MAX_BUFFERED_REPLIES);
  });
  setHandler(getStateQuery, () => state);

  /**
   * Adopts an engine step that changed the state and persists it (before its effect is performed), with what made the
   * step (`event`, fed while the run waited for `before`) and when (the workflow clock: deterministic on replay).
   */
  const apply = async (next: StepResult, event: EngineEvent | null): Promise<void> => {
    const before = event ? (state?.waitingFor ?? null) : null;
    state = next.state;
    // the event only annotates the history, which keeps a preview of a large result: sent whole, an HTTP answer of
    // 1 MiB went twice into the activity's input (here and in vars) and past Temporal's 2 MB payload limit
    const recorded =
      event?.type === 'effect_completed' ? { ...event, result: boundedDetail(event.result ?? null) } : event;
    const step = { at: new Date(Date.now()).toISOString(), before, event: recorded };
    await recordRunState({ runId, accountId, state, effects: next.effects, step });
  };

  if (first) await apply(first, null);

  for (;;) {
    if (isFinished(state)) return state;
    const waiting = state.waitingFor;
    if (!waiting) throw new Error(`run ${runId}: engine state is ${state.status} but waits for nothing`);

    if (shouldContinueAsNew(threshold)) {
      // Nothing of `waiting` has been performed yet (or, for a reply wait, its deadline is carried).
      await continueAsNew<typeof automationWorkflow>({
        ...input,
        payload: undefined,
        contact: undefined,
        state,
        pendingReplies: inbox,
        replyDeadline: waiting.kind === 'reply' ? replyDeadline : undefined,
      });
    }

    switch (waiting.kind) {
      case 'effect': {
        const outcome = await perform(waiting.effect);
        await apply(advanceOrThrow(state, outcome), outcome);
        break;
      }
      case 'timer':
        // The engine ignores replies during a delay: drop the ones buffered so far and those that arrive meanwhile.
        inbox.length = 0;
        await sleep(waiting.durationMs);
        inbox.length = 0;
        const fired: EngineEvent = { type: 'timer_fired', seq: waiting.seq };
        await apply(advanceOrThrow(state, fired), fired);
        break;
      case 'reply': {
        if (!replyDeadline || replyDeadline.seq !== waiting.seq) {
          replyDeadline = { seq: waiting.seq, at: Date.now() + waiting.timeoutMs };
        }
        const next = await waitForReply(waiting.seq, replyDeadline.at);
        if (next) await apply(next.step, next.event);
        // undefined: only ignored replies so far and history is long: loop to continue as new, deadline kept.
        break;
      }
    }
  }

  function shouldContinueAsNew(limit: number): boolean {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= limit;
  }

  function advanceOrThrow(current: RunState, event: EngineEvent): StepResult {
    const next = advance(definition, current, event);
    if (next.state === current) {
      // Cannot happen for our own effect/timer events (the seq is the waiting one); failing the workflow task
      // (retried, visible in the UI) is better than looping.
      throw new Error(`run ${runId}: the engine ignored ${event.type} for seq ${'seq' in event ? event.seq : '?'}`);
    }
    return next;
  }

  async function perform(effect: ActionEffect): Promise<EngineEvent> {
    let outcome: PerformEffectResult;
    try {
      outcome = await performEffect({
        runId,
        accountId,
        seq: effect.seq,
        idempotencyKey: effectIdempotencyKey(runId, effect.seq),
        ...(input.messagingPhoneId != null ? { messagingPhoneId: input.messagingPhoneId } : {}),
        effect,
      });
    } catch (err) {
      if (err instanceof ActivityFailure && !isCancellation(err)) {
        const error = effectErrorOf(err);
        log.warn('effect failed after retries', { runId, seq: effect.seq, effect: effect.type, error: error.message });
        return { type: 'effect_failed', seq: effect.seq, error };
      }
      throw err;
    }
    return outcomeEvent(effect.seq, outcome);
  }

  /**
   * Waits for a reply the engine takes, or the deadline. Buffered replies are offered first, in arrival order;
   * those the engine ignores (no branch matches, messageId already consumed, pinned to another wait) are dropped.
   * Returns undefined when the run should continue as new while still waiting.
   */
  async function waitForReply(
    seq: number,
    deadline: number,
  ): Promise<{ step: StepResult; event: EngineEvent } | undefined> {
    for (;;) {
      while (inbox.length > 0) {
        const { reply, seq: pinned } = inbox.shift() as ReplyEvent;
        const event: EngineEvent =
          pinned === undefined ? { type: 'reply_received', reply } : { type: 'reply_received', reply, seq: pinned };
        const next = advance(definition, state, event);
        if (next.state !== state) return { step: next, event };
      }
      if (shouldContinueAsNew(threshold)) return undefined;
      const remaining = deadline - Date.now();
      const replied = remaining > 0 && (await condition(() => inbox.length > 0, remaining));
      if (!replied) {
        inbox.length = 0;
        const event: EngineEvent = { type: 'timer_fired', seq };
        return { step: advanceOrThrow(state, event), event };
      }
    }
  }
}
