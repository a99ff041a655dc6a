import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { BlockedTargetError, OutboundHttpError } from '@switchboard/core';
import type { RunState } from '@switchboard/engine';
import { DataSource } from 'typeorm';
import type {
  AutomationActivities as WorkflowActivities,
  PerformEffectInput,
  PerformEffectResult,
  RecordRunStateInput,
} from '../../../../workflows/activities';
import {
  ACTIVITY_METHOD,
  ActivityNotAvailableError,
  AUTOMATION_ACTIVITIES,
  type AutomationActivities,
} from '../activities/activities';
import { annotateHistory, type AnnotatedHistoryEntry } from '../run-history';
import { recordRunFailedEvent, RUN_ROW_SET, runRowValues } from '../run-row';
import { RunEvents } from '../run-events';

/**
 * Thrown by an AutomationActivities implementation for a failure worth retrying (platform unavailable, rate
 * limited...). On Temporal the activity is retried with backoff; the embedded driver fails the step at once.
 */
export class TransientActivityError extends Error {
  readonly transient = true;
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TransientActivityError';
  }
}

/** Node/network error codes of infrastructure the worker depends on (database, Redis, the platform API). */
const TRANSIENT_SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** PostgreSQL SQLSTATEs that go away by themselves: connection exceptions, serialization/deadlock, resources, shutdown. */
function isTransientSqlState(code: string): boolean {
  return /^(08|53|57P0[123])/.test(code) || code === '40001' || code === '40P01';
}

/**
 * Transient (throw: Temporal retries) or permanent (`{ ok: false }`: the step fails at once, like the embedded
 * driver). Permanent: ActivityNotAvailableError, SSRF refusals and every outbound-HTTP failure of an http_request
 * node (BlockedTargetError, OutboundHttpError), and any error not known to be transient (validation, a missing
 * contact...). Transient: TransientActivityError (or `transient`/`retryable: true`), database connection /
 * serialization errors, network errors of our own dependencies, and errors carrying an HTTP status 429 or 5xx.
 */
export function isTransientActivityError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (
    error instanceof ActivityNotAvailableError ||
    error instanceof BlockedTargetError ||
    error instanceof OutboundHttpError
  )
    return false;
  const e = error as Error & {
    transient?: unknown;
    retryable?: unknown;
    code?: unknown;
    status?: unknown;
    statusCode?: unknown;
    driverError?: { code?: unknown };
  };
  if (e.transient === true || e.retryable === true) return true;
  const code =
    typeof e.code === 'string' ? e.code : typeof e.driverError?.code === 'string' ? e.driverError.code : undefined;
  if (code && (TRANSIENT_SYSTEM_CODES.has(code) || isTransientSqlState(code))) return true;
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined && (status === 429 || status >= 500)) return true;
  return false;
}

/**
 * The Temporal worker's activities, bound to Nest services:
 * - `performEffect` dispatches by effect type to the AUTOMATION_ACTIVITIES implementation (the one the embedded
 *   driver calls), with the step's idempotency key, so sends, campaigns, HTTP calls and contact updates behave
 *   identically and at most once per key on both drivers;
 * - `recordRunState` writes the engine state into the run's `workflow_runs` row, monotonically, so
 *   `GET /v1/workflow-runs/{id}` shows Temporal runs exactly like embedded ones.
 */
@Injectable()
export class TemporalActivities implements WorkflowActivities {
  private readonly logger = new Logger('TemporalActivities');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(AUTOMATION_ACTIVITIES) private readonly activities: AutomationActivities,
    @Optional() private readonly events?: RunEvents,
  ) {}

  /** `{ performEffect, recordRunState }` as plain functions, for `Worker.create({ activities })`. */
  forWorker(): WorkflowActivities {
    return {
      performEffect: (input) => this.performEffect(input),
      recordRunState: (input) => this.recordRunState(input),
    };
  }

  async performEffect(input: PerformEffectInput): Promise<PerformEffectResult> {
    // The same input the embedded driver passes: the context, then the effect's fields without its type.
    const { type, ...fields } = input.effect;
    const name = ACTIVITY_METHOD[type];
    if (!name) return { ok: false, error: { message: `unknown effect type ${String(type)}`, code: 'invalid_effect' } };
    const context = {
      accountId: input.accountId,
      runId: input.runId,
      seq: input.seq,
      idempotencyKey: input.idempotencyKey,
      messagingPhoneId: input.messagingPhoneId ?? null,
    };
    try {
      const method = this.activities[name] as (arg: unknown) => Promise<unknown>;
      const result = await method.call(this.activities, { ...context, ...fields });
      return result === undefined ? { ok: true } : { ok: true, result: JSON.parse(JSON.stringify(result)) };
    } catch (error) {
      if (isTransientActivityError(error)) {
        this.logger.warn({
          msg: 'effect failed, will be retried',
          runId: input.runId,
          seq: input.seq,
          effect: type,
          error: (error as Error).message,
        });
        throw error;
      }
      const message = error instanceof Error ? error.message : String(error);
      const code = (error as { code?: unknown })?.code;
      this.logger.log({ msg: 'step failed', runId: input.runId, seq: input.seq, effect: type, error: message });
      return { ok: false, error: typeof code === 'string' ? { message, code } : { message } };
    }
  }

  async recordRunState(input: RecordRunStateInput): Promise<void> {
    await this.record(input.runId, input.accountId, input.state, input.step);
  }

  /**
   * Writes `state` into the run row unless the row is ahead: a lower `seq` than the stored state's is ignored
   * (a retried or late activity), and a finished run (completed/failed) is never changed again. Columns are
   * derived as for the embedded driver (run-row.ts). Returns whether the row was written. The row always exists (the API writes it before the start).
   */
  async record(
    runId: string,
    accountId: string,
    state: RunState,
    step?: RecordRunStateInput['step'],
  ): Promise<boolean> {
    const written = await this.dataSource.transaction(async (tx) => {
      // The workflow's history entries carry no time or detail: keep those already stored, stamp the new ones
      const [stored]: Array<{ history: AnnotatedHistoryEntry[] | null }> = await tx.query(
        `SELECT state->'history' AS history FROM workflow_runs WHERE id = $1 AND account_id = $2 FOR UPDATE`,
        [runId, accountId],
      );
      state = withStoredAnnotations(state, stored?.history ?? []);
      annotateHistory(state, step?.before ?? null, step?.event ?? null, step?.at ? new Date(step.at) : new Date());
      const [rows]: [
        Array<{
          id: string;
          account_id: string;
          workflow_id: string;
          workflow_version: number;
          contact_phone: string | null;
        }>,
        number,
      ] = await tx.query(
        `UPDATE workflow_runs SET ${RUN_ROW_SET}
          WHERE id = $1 AND account_id = $12
            AND status NOT IN ('completed', 'failed')
            AND (state IS NULL OR COALESCE((state->>'seq')::int, 0) <= $13)
          RETURNING id, account_id, workflow_id, workflow_version, contact_phone`,
        [runId, ...runRowValues(state), accountId, state.seq],
      );
      if (rows[0] && state.status === 'failed') await recordRunFailedEvent(tx, rows[0], state);
      return rows.length > 0;
    });
    if (written && this.events) await this.events.publish(runId); // the console's live run view
    if (!written)
      this.logger.debug?.({ msg: 'run state not recorded (row ahead, finished or missing)', runId, seq: state.seq });
    return written;
  }
}

/** A copy of `state` whose history entries take the time and detail of the same entries already stored. */
function withStoredAnnotations(state: RunState, stored: AnnotatedHistoryEntry[]): RunState {
  const key = (e: AnnotatedHistoryEntry) => `${e.seq}:${e.nodeId}:${e.type}`;
  const known = new Map(stored.filter((e) => e.at !== undefined).map((e) => [key(e), e]));
  const history = (state.history as AnnotatedHistoryEntry[]).map((entry) => {
    const previous = known.get(key(entry));
    return previous
      ? { ...entry, at: previous.at, ...(previous.detail ? { detail: previous.detail } : {}) }
      : { ...entry };
  });
  return { ...state, history };
}
