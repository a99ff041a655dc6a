import { Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig, isUuid } from '@switchboard/core';
import { STATE_VERSION, type InboundReply, type RunState, type WorkflowDefinition } from '@switchboard/engine';
import { DataSource } from 'typeorm';
import type { AutomationWorkflowInput } from '../../../../workflows/automation.workflow';
import {
  abnormallyClosedRuns,
  signalReply,
  startAutomationRun,
  type AbnormalClose,
} from '../../../../workflows/client';
import { startContactOf } from '../contact-binding';
import { RunEvents } from '../run-events';
import { recordRunFailedEvent, RUN_ROW_SET, runRowValues } from '../run-row';
import type { AutomationDriver, DriverHealth, ReplyTarget, RunRef } from '../driver/automation-driver';
import { TemporalClientService } from './temporal-client.service';

/** A `pending` run older than this is (re)started by the Temporal recovery sweep. */
export const TEMPORAL_PENDING_RETRY_MS = 30_000;
/** The recovery sweep looks at the executions closed abnormally this far back (it runs every minute). */
export const CLOSED_LOOKBACK_MS = 15 * 60_000;
const CLOSED_AS: Record<AbnormalClose, string> = {
  TERMINATED: 'terminated',
  CANCELLED: 'cancelled',
  TIMED_OUT: 'timed out',
  FAILED: 'failed',
};
const SWEEP_BATCH = 500;

interface PendingRunRow {
  id: string;
  account_id: string;
  status: string;
  workflow_version: number;
  payload: unknown;
  contact_phone: string | null;
  contact_id: string | null;
  messaging_phone_id: string | null;
  definition: WorkflowDefinition;
}

/**
 * The Temporal driver (`TEMPORAL_ADDRESS` set): one workflow execution per run, id `workflowIdForRun(runId)`.
 * - startRun: the row is committed by WorkflowRunsService; the run's pinned definition version is read and the
 *   execution started with `startAutomationRun` (USE_EXISTING: a retry joins the running execution;
 *   REJECT_DUPLICATE: a closed one is never run again). If Temporal is unreachable the error is logged and the
 *   row stays `pending`: `recoverPending` (the worker's sweep) starts it later.
 * - deliverReply: the `reply` signal (with the platform's messageId, so a redelivered webhook is ignored).
 * The workflow reports progress through the worker's `recordRunState` activity into the same row.
 */
@Injectable()
export class TemporalAutomationDriver implements AutomationDriver {
  readonly kind = 'temporal' as const;
  readonly replyTargets = 'active' as const;
  private readonly logger = new Logger('TemporalAutomationDriver');

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly clients: TemporalClientService,
    @Optional() private readonly events?: RunEvents,
  ) {}

  async startRun(run: RunRef): Promise<void> {
    await this.tryStart(run.id);
  }

  /** Starts the run; false when it could not (logged; the row stays pending for the sweep). */
  async tryStart(runId: string): Promise<boolean> {
    let row: PendingRunRow | undefined;
    try {
      [row] = await this.dataSource.query(
        `SELECT r.id, r.account_id, r.status, r.workflow_version, r.payload, r.contact_phone, r.contact_id, r.messaging_phone_id, v.definition
           FROM workflow_runs r JOIN workflow_versions v ON v.workflow_id = r.workflow_id AND v.version = r.workflow_version
          WHERE r.id = $1`,
        [runId],
      );
    } catch (error) {
      this.logger.error({
        msg: 'could not read the run to start it on Temporal; the recovery sweep will retry',
        runId,
        error: (error as Error).message,
      });
      return false;
    }
    if (!row) return false;
    // Started already (the workflow recorded a step): nothing to do. A pending row may or may not have an execution
    // yet; starting it again joins the existing one.
    if (row.status !== 'pending') return true;
    const input: AutomationWorkflowInput = {
      runId: row.id,
      accountId: String(row.account_id),
      definition: row.definition,
      version: row.workflow_version,
      payload: row.payload,
      contact: startContactOf(row),
      messagingPhoneId: row.messaging_phone_id,
    };
    try {
      const client = await this.clients.getClient();
      const { alreadyClosed } = await startAutomationRun(client, input, { taskQueue: this.config.TEMPORAL_TASK_QUEUE });
      if (alreadyClosed) this.logger.warn({ msg: 'run is still pending but its Temporal execution is closed', runId });
      return true;
    } catch (error) {
      this.logger.error({
        msg: 'could not start the run on Temporal; it stays pending and the recovery sweep will retry',
        runId,
        address: this.config.TEMPORAL_ADDRESS,
        namespace: this.config.TEMPORAL_NAMESPACE,
        error: (error as Error).message,
      });
      return false;
    }
  }

  /**
   * False when the run's execution is gone. Any other failure (Temporal unreachable, a deadline) is thrown: the inbound
   * webhook job retries and signals again (the workflow ignores a reply whose messageId it has taken), where returning
   * false lost the customer's answer for good and the run took its timeout.
   */
  async deliverReply(run: ReplyTarget, reply: InboundReply): Promise<boolean> {
    try {
      return await signalReply(await this.clients.getClient(), run.id, { reply });
    } catch (error) {
      this.logger.warn({
        msg: 'could not signal the reply to the run on Temporal; the inbound message is retried',
        runId: run.id,
        error: (error as Error).message,
      });
      throw error;
    }
  }

  async health(): Promise<DriverHealth> {
    try {
      await this.clients.check();
      const workers = await this.clients.workflowPollers(this.config.TEMPORAL_TASK_QUEUE);
      return workers === undefined
        ? { driver: 'temporal', status: 'up' }
        : { driver: 'temporal', status: 'up', workers };
    } catch (error) {
      return { driver: 'temporal', status: 'down', message: (error as Error).message };
    }
  }

  /**
   * Runs whose execution was closed outside the workflow (terminated or cancelled by an operator, timed out, failed)
   * in the last `withinMs`: the workflow never recorded their end, so they are recorded `failed` now (error
   * `execution_closed`, with the `workflow_run.failed` account event). They left the lists of running and waiting runs
   * and the contact's reply matching only then. Returns how many.
   */
  async reconcileClosed(withinMs = CLOSED_LOOKBACK_MS): Promise<number> {
    const client = await this.clients.getClient();
    let failed = 0;
    for await (const { runId, status } of abnormallyClosedRuns(client, new Date(Date.now() - withinMs))) {
      if (isUuid(runId) && (await this.recordClosed(runId, status))) failed++;
    }
    return failed;
  }

  private async recordClosed(runId: string, closedAs: AbnormalClose): Promise<boolean> {
    const recorded = await this.dataSource.transaction(async (tx) => {
      const [run] = await tx.query(
        `SELECT id, account_id, workflow_id, workflow_version, contact_phone, status, state, payload
           FROM workflow_runs WHERE id = $1 FOR UPDATE`,
        [runId],
      );
      if (!run || run.status === 'completed' || run.status === 'failed') return false;
      const before: RunState = run.state ?? {
        version: STATE_VERSION,
        status: 'running',
        currentNodeId: null,
        seq: 0,
        context: { payload: run.payload, contact: {}, reply: null, vars: {} },
        waitingFor: null,
        history: [],
        historyCount: 0,
        consumedReplyIds: [],
      };
      const message = `its Temporal execution was ${CLOSED_AS[closedAs] ?? closedAs.toLowerCase()} outside the workflow`;
      const state: RunState = {
        ...before,
        status: 'failed',
        waitingFor: null,
        error: { code: 'execution_closed', message, ...(before.currentNodeId ? { nodeId: before.currentNodeId } : {}) },
      };
      await tx.query(`UPDATE workflow_runs SET ${RUN_ROW_SET} WHERE id = $1`, [runId, ...runRowValues(state)]);
      await recordRunFailedEvent(tx, run, state);
      return true;
    });
    if (recorded) {
      this.logger.warn({ msg: 'run failed: its Temporal execution was closed outside the workflow', runId, closedAs });
      await this.events?.publish(runId).catch(() => undefined);
    }
    return recorded;
  }

  /**
   * Recovery: starts the runs still `pending` after `olderThanMs` (their start failed, or the process died between
   * the commit and the start). Idempotent: a run whose execution exists is joined, not started twice.
   */
  async recoverPending(olderThanMs = TEMPORAL_PENDING_RETRY_MS): Promise<{ started: number; failed: number }> {
    const counts = { started: 0, failed: 0 };
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows: Array<{ id: string }> = await this.dataSource.query(
        `SELECT id FROM workflow_runs
          WHERE status = 'pending' AND created_at < now() - make_interval(secs => $2 / 1000.0) AND id > $1
          ORDER BY id LIMIT ${SWEEP_BATCH}`,
        [after, olderThanMs],
      );
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      for (const row of rows) {
        if (await this.tryStart(row.id)) {
          counts.started++;
        } else {
          counts.failed++;
          // Nothing started in this sweep: Temporal is most likely down. Stop here; the next sweep tries again.
          if (counts.started === 0) return counts;
        }
      }
      if (rows.length < SWEEP_BATCH) break;
    }
    return counts;
  }
}
