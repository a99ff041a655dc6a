import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  advance,
  effectIdempotencyKey,
  isFinished,
  start,
  type ActionEffect,
  type EngineEvent,
  type InboundReply,
  type RunState,
  type StepResult,
  type WorkflowDefinition,
} from '@switchboard/engine';
import { BatchItemFailure, MicroBatcher, writeTogetherOrEachAlone } from '@switchboard/core';
import { namedQuery } from '@switchboard/core/database';
import { DataSource, type EntityManager } from 'typeorm';
import {
  ACTIVITY_METHOD,
  AUTOMATION_ACTIVITIES,
  type ActivityContext,
  type AutomationActivities,
} from '../activities/activities';
import { startContactOf } from '../contact-binding';
import { RunEvents } from '../run-events';
import { annotateHistory } from '../run-history';
import { recordRunFailedEvent, RUN_ROW_SET, runRowValues } from '../run-row';
import { AutomationQueue } from './automation-queue';

/**
 * What a job asks the driver to do with a run. `early-reply`: a customer reply (`reply_received`) that came while the
 * run performed step `event.seq`; kept for its next reply wait.
 */
export type DriverInput =
  | { kind: 'start' }
  | { kind: 'resume' }
  | { kind: 'event'; event: EngineEvent }
  | { kind: 'early-reply'; event: EngineEvent };

/** One run and what to do with it: the unit of `driveMany`. */
export interface DriveItem {
  runId: string;
  input: DriverInput;
}

interface LockedRun {
  id: string;
  account_id: string;
  workflow_id: string;
  workflow_version: number;
  status: string;
  payload: unknown;
  state: RunState | null;
  contact_id: string | null;
  contact_phone: string | null;
  messaging_phone_id: string | null;
  wake_at: Date | null;
  /** replies that came while the run performed its steps, for its next reply wait */
  pending_replies: InboundReply[] | null;
  definition: WorkflowDefinition;
}

interface StepOutcome {
  run: LockedRun;
  /** An effect to perform now (outside the lock), whose outcome is fed back as the next event. */
  action?: ActionEffect;
}

/** What one run's step decided, before anything is written. */
interface StepDecision {
  outcome: StepOutcome | null;
  /** the new state to write (absent: nothing changes in the database), with the replies kept for the next wait */
  state?: RunState;
  pendingReplies?: InboundReply[];
  timers: Array<{ runId: string; seq: number; delayMs: number }>;
  /** the timeout job of a wait the reply ended: removed, not left delayed until it fires (it may wait for days) */
  timeoutLeft?: number;
}

/**
 * A step's statements for many runs at once, prepared once per connection (PostgreSQL planned them longer than it
 * ran them). The rows are locked in id order, so two steps locking overlapping runs cannot deadlock. The UPDATE
 * writes RUN_ROW_SET (the same SET as one run's) from one array per column.
 */
const LOCK_RUNS_SQL = `SELECT id, account_id, workflow_id, workflow_version, status, payload, state, contact_id, contact_phone, messaging_phone_id, wake_at, pending_replies
   FROM workflow_runs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`;
const DEFINITIONS_SQL = `SELECT workflow_id, version AS workflow_version, definition FROM workflow_versions
  WHERE (workflow_id, version) IN (SELECT * FROM unnest($1::bigint[], $2::int[]))`;
const PERSIST_RUNS_SQL = `UPDATE workflow_runs SET ${RUN_ROW_SET.replace(/\$(\d+)/g, 'u.c$1')}, pending_replies = u.c12
   FROM unnest($1::uuid[], $2::text[], $3::json[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::text[],
               $9::text[], $10::bool[], $11::text[], $12::jsonb[])
        AS u(id, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12)
  WHERE workflow_runs.id = u.id`;

/** the most replies kept for a run's next wait (the oldest are dropped; the Temporal workflow keeps as many) */
export const MAX_PENDING_REPLIES = 20;

/** published versions kept parsed per process (a version never changes once published); all dropped when full */
const DEFINITIONS_KEPT = 500;

/** the most run steps locked and written by one transaction */
const STEPS_PER_TRANSACTION = 50;

/** Tries at recording a performed effect's outcome (250, 500, 1,000 ms apart) before the job fails. */
const OUTCOME_ATTEMPTS = 4;

/** Runs still `running` (waiting for an effect) after this long are re-driven by the recovery sweep. */
export const STALE_RUNNING_MS = 2 * 60_000;
const SWEEP_BATCH = 500;
/** A timer this late, or a run pending this long, has lost its job (periodic sweep). */
export const OVERDUE_MS = 5_000;

/**
 * The embedded driver: executes runs with the engine, state in Postgres, events through BullMQ.
 *
 * One step = lock the run row (`SELECT ... FOR UPDATE`, so concurrent events of one run serialise), feed the
 * event to the engine, persist the new state, commit; then schedule timers (delayed jobs with deterministic ids)
 * and perform the action effect, if any, outside the lock, and feed its outcome back as the next step. An effect
 * is performed only after the state that asks for it is committed, with `effectIdempotencyKey(runId, seq)`, so a
 * crash at any point re-performs at most the pending effect, with the same key.
 *
 * Each run goes its own way (a slow effect of one run holds back no other), but the steps of one moment are taken
 * together: one transaction locks and writes the runs of every job in flight (a batch job of starts from a busy
 * webhook, replies of one moment, concurrent jobs), so 50 runs' send steps cost one lock, one write and one stored
 * batch of messages instead of 50 of each.
 */
@Injectable()
export class EmbeddedDriver {
  private readonly logger = new Logger('EmbeddedDriver');
  /**
   * Steps of one moment, of any runs and jobs of this process, taken together: one transaction locks and writes them
   * all (STEPS_PER_TRANSACTION at most, two transactions at a time).
   */
  private readonly steps = new MicroBatcher((items: DriveItem[]) => this.stepMany(items), {
    maxItems: STEPS_PER_TRANSACTION,
    maxConcurrent: 2,
  });

  /**
   * Published definitions by `workflowId:version`, read once per process instead of with every locked run: a step
   * of a 300-node workflow would otherwise fetch and parse its whole definition for each run it moves.
   */
  private readonly definitions = new Map<string, WorkflowDefinition>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: AutomationQueue,
    @Inject(AUTOMATION_ACTIVITIES) private readonly activities: AutomationActivities,
    @Optional() private readonly events?: RunEvents,
  ) {}

  /**
   * Drives a run from one input until it waits (timer, reply) or finishes. The outcome of a performed effect exists
   * only here: when the step that records it fails (the database is briefly away), that step is tried again a few
   * times before the job fails (a retried job's input no longer applies; the recovery sweep would then perform the
   * effect again, with the same idempotency key, minutes later).
   */
  async drive(runId: string, input: DriverInput): Promise<void> {
    let next: DriverInput = input;
    for (let round = 0; round < 1000; round++) {
      const outcome =
        round === 0 ? await this.steps.add({ runId, input: next }) : await this.recordOutcome(runId, next);
      if (!outcome?.action) return;
      next = { kind: 'event', event: await this.perform(outcome.run, outcome.action) };
    }
    this.logger.error({ msg: 'run still busy after 1000 effects in one job', runId });
  }

  private async recordOutcome(runId: string, input: DriverInput): Promise<StepOutcome | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.steps.add({ runId, input });
      } catch (error) {
        if (attempt === OUTCOME_ATTEMPTS) throw error;
        this.logger.warn({
          msg: 'recording an effect outcome failed; trying again',
          runId,
          attempt,
          error: String(error),
        });
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (attempt - 1)));
      }
    }
  }

  /**
   * Drives each run as `drive`, side by side; a run named twice (two replies) takes its inputs one after the other.
   * Rejects, once all are done, with the first failure.
   */
  async driveMany(items: DriveItem[]): Promise<void> {
    const inputsOf = new Map<string, DriverInput[]>();
    for (const { runId, input } of items) inputsOf.set(runId, [...(inputsOf.get(runId) ?? []), input]);
    const results = await Promise.allSettled(
      [...inputsOf].map(async ([runId, inputs]) => {
        for (const input of inputs) await this.drive(runId, input);
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** One step of each item, in one transaction; a run named twice takes its second input in a second transaction. */
  private async stepMany(items: DriveItem[]): Promise<Array<StepOutcome | null | BatchItemFailure>> {
    const seen = new Set<string>();
    const first = items.map((item) => !seen.has(item.runId) && !!seen.add(item.runId));
    const outcomes = await this.stepEach(items.filter((_, i) => first[i]));
    const again = items.filter((_, i) => !first[i]);
    const later = again.length ? await this.stepMany(again) : [];
    let [f, l] = [0, 0];
    return first.map((isFirst) => (isFirst ? outcomes[f++] : later[l++]));
  }

  /**
   * One step of each run (each named once), in one transaction; the outcomes in the items' order. When that
   * transaction fails (it left nothing behind), each run's step is taken again alone: one run whose step cannot be
   * taken (a statement error, a state the engine refuses) fails only its own job, not the 49 others of its moment.
   */
  private async stepEach(items: DriveItem[]): Promise<Array<StepOutcome | null | BatchItemFailure>> {
    // distinct runs: taken alone side by side, they wait for no lock of each other
    const decisions = await writeTogetherOrEachAlone(items, (some) => this.decideAndPersist(some));
    const done = decisions.filter((d): d is StepDecision => !!d && !(d instanceof BatchItemFailure));
    await this.afterCommit(done);
    return decisions.map((d) => (d instanceof BatchItemFailure ? d : (d?.outcome ?? null)));
  }

  /**
   * After the commit (a timer job never fires for a state that was rolled back): the timers, the removal of a
   * timeout a reply made useless, the live events. The steps are committed, so a failure here fails no job: a timer
   * that could not be added is added by the recovery sweep once overdue, a timeout left in place fires and is ignored.
   */
  private async afterCommit(done: StepDecision[]): Promise<void> {
    const timers = done.flatMap((d) => d.timers);
    if (timers.length)
      await this.queue.timers(timers).catch((error) =>
        this.logger.warn({
          msg: 'timers not queued; the recovery sweep will',
          count: timers.length,
          error: String(error),
        }),
      );
    await Promise.all(
      done.flatMap((d) =>
        d.timeoutLeft !== undefined && d.outcome ? [this.queue.cancelTimer(d.outcome.run.id, d.timeoutLeft)] : [],
      ),
    );
    if (this.events)
      await Promise.all(done.flatMap((d) => (d.outcome ? [this.events!.publish(d.outcome.run.id)] : [])));
  }

  /** Locks the runs, decides each one's step and writes the new states, in one transaction. */
  private async decideAndPersist(items: DriveItem[]): Promise<Array<StepDecision | null>> {
    return this.dataSource.transaction(async (tx) => {
      const locked = await namedQuery<Omit<LockedRun, 'definition'>>(tx, 'run_step_lock_many', LOCK_RUNS_SQL, [
        items.map((i) => i.runId),
      ]);
      const runs = await this.withDefinitions(tx, locked);
      const byId = new Map(runs.map((run) => [run.id, run]));
      const decided = items.map((item) => {
        const run = byId.get(item.runId);
        return run ? { run, decision: this.decide(run, item.input) } : null;
      });
      const written = decided.filter((d): d is NonNullable<typeof d> => !!d?.decision.state);
      if (written.length)
        await this.persist(
          tx,
          written.map(({ run, decision }) => [run.id, decision.state!, decision.pendingReplies ?? []]),
        );
      for (const { run, decision } of written)
        if (decision.state!.status === 'failed' && run.status !== 'failed')
          await recordRunFailedEvent(tx, run, decision.state!);
      return decided.map((d) => d?.decision ?? null);
    });
  }

  /** The locked runs with their pinned definitions: those not read yet by this process in one query. */
  private async withDefinitions(tx: EntityManager, runs: Array<Omit<LockedRun, 'definition'>>): Promise<LockedRun[]> {
    const keyOf = (run: { workflow_id: string; workflow_version: number }) =>
      `${run.workflow_id}:${run.workflow_version}`;
    const missing = [
      ...new Map(runs.filter((r) => !this.definitions.has(keyOf(r))).map((r) => [keyOf(r), r])).values(),
    ];
    const read = new Map<string, WorkflowDefinition>();
    if (missing.length) {
      const rows = await namedQuery<{ workflow_id: string; workflow_version: number; definition: WorkflowDefinition }>(
        tx,
        'run_step_definitions',
        DEFINITIONS_SQL,
        [missing.map((r) => r.workflow_id), missing.map((r) => r.workflow_version)],
      );
      for (const row of rows) read.set(keyOf(row), row.definition);
    }
    // a run's version always exists (foreign key); the engine only reads a definition, so runs can share one
    const withDefinition = runs.map((run) => ({
      ...run,
      definition: this.definitions.get(keyOf(run)) ?? read.get(keyOf(run))!,
    }));
    // kept for the next steps only once this step's runs have theirs: a full cache is emptied first
    if (this.definitions.size + read.size > DEFINITIONS_KEPT) this.definitions.clear();
    for (const [key, definition] of read) this.definitions.set(key, definition);
    return withDefinition;
  }

  /** What the engine makes of one input for one locked run; writes nothing. */
  private decide(run: LockedRun, input: DriverInput): StepDecision {
    const timers: StepDecision['timers'] = [];
    let result: StepResult;
    let timeoutLeft: number | undefined;
    if (input.kind === 'early-reply') return this.earlyReply(run, input.event);
    if (input.kind === 'start' && run.status === 'pending') {
      result = start(run.definition, { payload: run.payload, contact: this.startContact(run) });
      annotateHistory(result.state, null, null);
    } else if (input.kind === 'event' && run.state) {
      result = advance(run.definition, run.state, input.event);
      if (result.effects.length === 0) {
        // A reply for a wait the run has left since: two replies came together and the first answered it. It is kept
        // as a reply that came during a step is (for the next reply wait, unless a delay or timeout comes first), as
        // the Temporal workflow buffers it.
        if (answersAnEarlierWait(run.state, input.event)) return this.earlyReply(run, input.event);
        return { outcome: null, timers }; // ignored: stale, duplicate, unmatched or finished
      }
      annotateHistory(result.state, run.state.waitingFor, input.event);
      if (run.state.waitingFor?.kind === 'reply' && input.event.type !== 'timer_fired')
        timeoutLeft = run.state.waitingFor.seq;
    } else {
      // A resume (the recovery sweep's, for a run left `running` too long): re-perform the pending effect (it was
      // committed, maybe not performed). A start of an already started run (a webhook retried, a keyword message
      // redelivered, a start job queued twice) leaves an effect to the step performing it now: performed twice at
      // once, an http_request reached the shop's CRM twice. Either makes sure a wait's timer exists. Nothing changes
      // in the database.
      const waiting = run.state?.waitingFor;
      if (!run.state || isFinished(run.state) || !waiting) return { outcome: null, timers };
      if (waiting.kind === 'effect')
        return { outcome: input.kind === 'resume' ? { run, action: waiting.effect } : null, timers };
      // Waiting on a timer or a reply: the step that scheduled its timer may have failed before enqueueing it.
      timers.push({
        runId: run.id,
        seq: waiting.seq,
        delayMs: Math.max(0, new Date(run.wake_at ?? Date.now()).getTime() - Date.now()),
      });
      return { outcome: null, timers };
    }
    const offered = offerPendingReplies(run.definition, result, run.pending_replies ?? []);
    result = offered.result;

    let action: ActionEffect | undefined;
    for (const effect of result.effects) {
      if (effect.type === 'start_timer') timers.push({ runId: run.id, seq: effect.seq, delayMs: effect.durationMs });
      else if (effect.type === 'wait_for_reply')
        timers.push({ runId: run.id, seq: effect.seq, delayMs: effect.timeoutMs });
      else if (effect.type === 'complete') continue;
      else if (effect.type === 'fail')
        this.logger.warn({ msg: 'run failed', runId: run.id, error: effect.error.message });
      else action = effect;
    }
    return {
      outcome: { run: { ...run, state: result.state }, action },
      state: result.state,
      pendingReplies: offered.pending,
      timers,
      timeoutLeft,
    };
  }

  /**
   * A reply that came while the run performed step `event.seq`. Still performing a step: kept for the next reply
   * wait. Already waiting for a reply it had not reached then: that wait takes it (no delay came in between). A run
   * that has since waited on a delay, or finished, drops it, as the engine ignores replies during a delay.
   */
  private earlyReply(run: LockedRun, event: EngineEvent): StepDecision {
    const ignored: StepDecision = { outcome: null, timers: [] };
    const waiting = run.state?.waitingFor;
    if (!run.state || isFinished(run.state) || !waiting || event.type !== 'reply_received') return ignored;
    if (event.seq === undefined || waiting.seq < event.seq) return ignored;
    const since = event.seq;
    if (run.state.history.some((h) => h.seq >= since && ['timer_fired', 'timeout'].includes(h.outcome))) return ignored;
    if (waiting.kind === 'effect') {
      const pending = [...(run.pending_replies ?? []), event.reply].slice(-MAX_PENDING_REPLIES);
      return { outcome: null, state: run.state, pendingReplies: pending, timers: [] };
    }
    if (waiting.kind !== 'reply') return ignored;
    return this.decide(run, { kind: 'event', event: { type: 'reply_received', reply: event.reply, seq: waiting.seq } });
  }

  private startContact(run: LockedRun) {
    return startContactOf(run);
  }

  private async persist(tx: EntityManager, states: Array<[string, RunState, InboundReply[]]>): Promise<void> {
    const rows = states.map(([id, state, pending]) => [
      id,
      ...runRowValues(state),
      pending.length ? JSON.stringify(pending) : null,
    ]);
    const columns = rows[0].map((_, c) => rows.map((row) => row[c]));
    await namedQuery(tx, 'run_step_persist_many', PERSIST_RUNS_SQL, columns);
  }

  /** Performs one action effect; never throws (an activity error is the step's failure). */
  private async perform(run: LockedRun, effect: ActionEffect): Promise<EngineEvent> {
    const { type: _type, ...fields } = effect;
    const context: ActivityContext = {
      accountId: String(run.account_id),
      runId: run.id,
      seq: effect.seq,
      idempotencyKey: effectIdempotencyKey(run.id, effect.seq),
      messagingPhoneId: run.messaging_phone_id,
    };
    try {
      const method = this.activities[ACTIVITY_METHOD[effect.type]] as (input: unknown) => Promise<unknown>;
      const result = await method.call(this.activities, { ...context, ...fields });
      return {
        type: 'effect_completed',
        seq: effect.seq,
        result: result === undefined ? undefined : JSON.parse(JSON.stringify(result)),
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const code = (error as { code?: unknown })?.code;
      this.logger.log({ msg: 'step failed', runId: run.id, seq: effect.seq, effect: effect.type, error: message });
      return {
        type: 'effect_failed',
        seq: effect.seq,
        error: typeof code === 'string' ? { message, code } : { message },
      };
    }
  }

  /**
   * Recovery: re-enqueues what a lost job would have done. Pending runs get their start job; runs waiting for an
   * effect for longer than `staleRunningMs` get a resume job (a live job for them would have updated the row or
   * been re-delivered by BullMQ's stalled-job check); waiting runs get their timer job again, due now when
   * `wake_at` has passed. Deterministic job ids make every add a no-op when the job still exists.
   *
   * `full` (at worker start) re-adds the timer of every waiting run; the periodic sweep only looks at runs that
   * are overdue by more than OVERDUE_MS (their job is lost) and pending runs older than that.
   */
  async recover(
    options: { full?: boolean; staleRunningMs?: number } = {},
  ): Promise<{ started: number; resumed: number; timers: number }> {
    const full = options.full ?? true;
    const staleRunningMs = options.staleRunningMs ?? STALE_RUNNING_MS;
    const counts = { started: 0, resumed: 0, timers: 0 };
    const scope = full
      ? `status IN ('pending', 'running', 'waiting')`
      : `((status = 'pending' AND created_at < now() - interval '${OVERDUE_MS} milliseconds')
          OR status = 'running'
          OR (status = 'waiting' AND wake_at < clock_timestamp() - interval '${OVERDUE_MS} milliseconds'))`;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows: Array<{
        id: string;
        status: string;
        waiting_kind: string | null;
        waiting_seq: number | null;
        wake_in_ms: string | null;
        stale: boolean;
      }> = await this.dataSource.query(
        `SELECT id, status, waiting_kind, waiting_seq,
                  (EXTRACT(EPOCH FROM (wake_at - clock_timestamp())) * 1000)::bigint AS wake_in_ms,
                  updated_at < now() - make_interval(secs => $2 / 1000.0) AS stale
             FROM workflow_runs
            WHERE ${scope} AND id > $1
            ORDER BY id LIMIT ${SWEEP_BATCH}`,
        [after, staleRunningMs],
      );
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      const pending = rows.filter((r) => r.status === 'pending').map((r) => r.id);
      await this.queue.startMany(pending);
      counts.started += pending.length;
      for (const row of rows) {
        if (row.status === 'running' && row.waiting_kind === 'effect' && row.stale && row.waiting_seq !== null) {
          await this.queue.resume(row.id, row.waiting_seq);
          counts.resumed++;
        } else if (row.status === 'waiting' && row.waiting_seq !== null && row.wake_in_ms !== null) {
          await this.queue.timer(row.id, row.waiting_seq, Math.max(0, Number(row.wake_in_ms)));
          counts.timers++;
        }
      }
      if (rows.length < SWEEP_BATCH) break;
    }
    return counts;
  }
}

/**
 * Offers the replies kept while the run performed its steps to the reply wait this step reached, in arrival order, as
 * the Temporal workflow does with the replies it buffered: the first one the engine takes resumes the run (in the same
 * step); those it ignores (no branch matches, a message already consumed) are dropped; the others stay for a later
 * wait. A delay or the end of the run drops them all.
 */
export function offerPendingReplies(
  definition: WorkflowDefinition,
  result: StepResult,
  pending: InboundReply[],
): { result: StepResult; pending: InboundReply[] } {
  let current = result;
  const left = [...pending];
  for (;;) {
    const waiting = current.state.waitingFor;
    if (!waiting || isFinished(current.state) || waiting.kind === 'timer') return { result: current, pending: [] };
    if (waiting.kind === 'effect' || left.length === 0) return { result: current, pending: left };
    const event: EngineEvent = { type: 'reply_received', reply: left.shift()!, seq: waiting.seq };
    const next = advance(definition, current.state, event);
    if (next.state === current.state) continue;
    annotateHistory(next.state, waiting, event);
    const timeout = (e: StepResult['effects'][number]) => e.type === 'wait_for_reply' && e.seq === waiting.seq;
    current = { ...next, effects: [...current.effects.filter((e) => !timeout(e)), ...next.effects] };
  }
}

/** A customer reply meant for a reply wait the run has moved past, and not the one that answered it. */
function answersAnEarlierWait(state: RunState, event: EngineEvent): boolean {
  if (event.type !== 'reply_received' || event.seq === undefined || !state.waitingFor) return false;
  const messageId = (event.reply as { messageId?: unknown } | undefined)?.messageId;
  if (typeof messageId === 'string' && (state.consumedReplyIds ?? []).includes(messageId)) return false;
  return state.waitingFor.seq > event.seq;
}
