import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  advance,
  effectIdempotencyKey,
  isFinished,
  start,
  type ActionEffect,
  type EngineEvent,
  type RunState,
  type StepResult,
  type WorkflowDefinition,
} from '@switchboard/engine';
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

/** What a job asks the driver to do with a run. */
export type DriverInput = { kind: 'start' } | { kind: 'resume' } | { kind: 'event'; event: EngineEvent };

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
  definition: WorkflowDefinition;
}

interface StepOutcome {
  run: LockedRun;
  /** An effect to perform now (outside the lock), whose outcome is fed back as the next event. */
  action?: ActionEffect;
}

/** One step's statements, prepared once per connection (PostgreSQL planned them longer than it ran them). */
const LOCK_RUN_SQL = `SELECT r.id, r.account_id, r.workflow_id, r.workflow_version, r.status, r.payload, r.state, r.contact_id, r.contact_phone, r.messaging_phone_id, r.wake_at, v.definition
   FROM workflow_runs r JOIN workflow_versions v ON v.workflow_id = r.workflow_id AND v.version = r.workflow_version
  WHERE r.id = $1 FOR UPDATE OF r`;
const PERSIST_RUN_SQL = `UPDATE workflow_runs SET ${RUN_ROW_SET} WHERE id = $1`;

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
 */
@Injectable()
export class EmbeddedDriver {
  private readonly logger = new Logger('EmbeddedDriver');

  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: AutomationQueue,
    @Inject(AUTOMATION_ACTIVITIES) private readonly activities: AutomationActivities,
    @Optional() private readonly events?: RunEvents,
  ) {}

  /** Drives a run from one input until it waits (timer, reply) or finishes. */
  async drive(runId: string, input: DriverInput): Promise<void> {
    let next: DriverInput = input;
    for (let round = 0; round < 1000; round++) {
      const outcome = await this.step(runId, next);
      if (!outcome?.action) return;
      next = { kind: 'event', event: await this.perform(outcome.run, outcome.action) };
    }
    this.logger.error({ msg: 'run still busy after 1000 effects in one job', runId });
  }

  private async step(runId: string, input: DriverInput): Promise<StepOutcome | null> {
    const timers: Array<{ seq: number; delayMs: number }> = [];
    /** the timeout job of a wait the reply ended: removed, not left delayed until it fires (it may wait for days) */
    let timeoutLeft: number | undefined;
    const outcome = await this.dataSource.transaction(async (tx) => {
      const [run] = await namedQuery<LockedRun>(tx, 'run_step_lock', LOCK_RUN_SQL, [runId]);
      if (!run) return null;

      let result: StepResult;
      if (input.kind === 'start' && run.status === 'pending') {
        result = start(run.definition, { payload: run.payload, contact: this.startContact(run) });
        annotateHistory(result.state, null, null);
      } else if (input.kind === 'event' && run.state) {
        result = advance(run.definition, run.state, input.event);
        if (result.effects.length === 0) return null; // ignored: stale, duplicate, unmatched or finished
        annotateHistory(result.state, run.state.waitingFor, input.event);
        if (run.state.waitingFor?.kind === 'reply' && input.event.type !== 'timer_fired')
          timeoutLeft = run.state.waitingFor.seq;
      } else {
        // A start of an already started run, or a resume: re-perform the pending effect (it was committed, maybe
        // not performed) or make sure the timer exists. Nothing changes in the database.
        const waiting = run.state?.waitingFor;
        if (!run.state || isFinished(run.state) || !waiting) return null;
        if (waiting.kind === 'effect') return { run, action: waiting.effect };
        // Waiting on a timer or a reply: the step that scheduled its timer may have failed before enqueueing it.
        timers.push({
          seq: waiting.seq,
          delayMs: Math.max(0, new Date(run.wake_at ?? Date.now()).getTime() - Date.now()),
        });
        return null;
      }

      await this.persist(tx, run.id, result.state);
      if (result.state.status === 'failed' && run.status !== 'failed')
        await recordRunFailedEvent(tx, run, result.state);
      let action: ActionEffect | undefined;
      for (const effect of result.effects) {
        if (effect.type === 'start_timer') timers.push({ seq: effect.seq, delayMs: effect.durationMs });
        else if (effect.type === 'wait_for_reply') timers.push({ seq: effect.seq, delayMs: effect.timeoutMs });
        else if (effect.type === 'complete') continue;
        else if (effect.type === 'fail') this.logger.warn({ msg: 'run failed', runId, error: effect.error.message });
        else action = effect;
      }
      return { run: { ...run, state: result.state }, action };
    });
    // After the commit: a timer job never fires for a state that was rolled back.
    for (const timer of timers) await this.queue.timer(runId, timer.seq, timer.delayMs);
    if (timeoutLeft !== undefined) await this.queue.cancelTimer(runId, timeoutLeft);
    if (outcome && this.events) await this.events.publish(runId);
    return outcome;
  }

  private startContact(run: LockedRun) {
    return startContactOf(run);
  }

  private async persist(tx: EntityManager, runId: string, state: RunState): Promise<void> {
    await namedQuery(tx, 'run_step_persist', PERSIST_RUN_SQL, [runId, ...runRowValues(state)]);
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
