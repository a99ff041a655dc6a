import type { InboundReply } from '@switchboard/engine';

/** A run whose row is committed (status `pending` until the driver's first step records it). */
export interface RunRef {
  id: string;
}

/** A run a customer reply is delivered to: its row as WorkflowRunsService found it. */
export interface ReplyTarget {
  id: string;
  status: string;
  waitingKind: string | null;
  waitingSeq: number | null;
}

export interface DriverHealth {
  driver: 'embedded' | 'temporal';
  status: 'up' | 'down';
  message?: string;
  /** Temporal: worker processes polling the task queue (0: runs are accepted and wait in Temporal until one polls). */
  workers?: number;
}

/**
 * What executes runs. WorkflowRunsService writes the run row first (persist before start), then hands the run to
 * the driver; the driver must be idempotent per run (a retried start or a redelivered reply does nothing twice).
 * - embedded (default): BullMQ jobs + the `workflow_runs` row (EmbeddedAutomationDriver);
 * - temporal (`TEMPORAL_ADDRESS` set): one workflow execution per run (TemporalAutomationDriver).
 * Both run the same engine and the same AUTOMATION_ACTIVITIES.
 */
export interface AutomationDriver {
  readonly kind: 'embedded' | 'temporal';
  /**
   * Starts a committed run. Never throws for an unreachable engine: the run stays `pending` (the error is logged)
   * and the recovery sweep starts it later.
   */
  startRun(run: RunRef): Promise<void>;
  /**
   * Runs of this driver a reply is delivered to: `reply-or-step` = runs waiting for a reply or performing a step (the
   * row says so; the embedded driver keeps a reply that comes during a step for the next wait); `active` = every
   * running/waiting run (the Temporal workflow buffers early replies itself).
   */
  readonly replyTargets: 'reply-or-step' | 'active';
  /** Delivers a customer reply to one run; resolves false when the run could not take it (gone/closed). */
  deliverReply(run: ReplyTarget, reply: InboundReply): Promise<boolean>;
  /** Readiness of the engine behind the driver (`/health/ready`). */
  health(): Promise<DriverHealth>;
}

/** Nest token of the AutomationDriver chosen by AutomationsModule/AutomationsWorkerModule. */
export const AUTOMATION_DRIVER = Symbol('AUTOMATION_DRIVER');

export type AutomationDriverKind = AutomationDriver['kind'];
