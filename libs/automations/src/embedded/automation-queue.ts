import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { QUEUES, withRequestId } from '@switchboard/core';
import type { EngineEvent } from '@switchboard/engine';
import type { JobsOptions, Queue } from 'bullmq';
import { createHash, randomUUID } from 'node:crypto';

export const JOB_START_RUN = 'start-run';
export const JOB_RESUME_RUN = 'resume-run';
export const JOB_TIMER_FIRED = 'timer-fired';
/** many runs at once: starts from a busy webhook, replies of one moment (EmbeddedDriver.driveMany) */
export const JOB_START_RUNS = 'start-runs';
export const JOB_RESUME_RUNS = 'resume-runs';

export interface StartRunJob {
  runId: string;
}
/**
 * `event` absent: re-perform the effect the run waits for (recovery). `early`: a reply that came while the run
 * performed step `event.seq` (kept for its next reply wait).
 */
export interface ResumeRunJob {
  runId: string;
  event?: EngineEvent;
  early?: true;
}
export interface StartRunsJob {
  runIds: string[];
}
export interface ResumeRunsJob {
  replies: Array<{ runId: string; event: EngineEvent; early?: true }>;
}
export interface TimerFiredJob {
  runId: string;
  seq: number;
}

/**
 * Job options: a failed job (Postgres or Redis unavailable; the engine itself never throws) is retried with
 * backoff; finished jobs are removed so their deterministic ids can be used again by a later recovery.
 */
const JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: true,
};

/**
 * Enqueues the embedded driver's jobs. Every job id is deterministic (`<runId>:<seq>:<what>`): enqueueing the
 * same job twice while the first is still queued or delayed is a no-op, and a job that arrives after its step
 * is over is ignored by the engine (stale seq). Used by the API (runs started by webhooks) and the worker.
 */
@Injectable()
export class AutomationQueue {
  constructor(@InjectQueue(QUEUES.automations) readonly queue: Queue) {}

  async start(runId: string): Promise<void> {
    await this.queue.add(JOB_START_RUN, withRequestId({ runId }) satisfies StartRunJob, {
      ...JOB_OPTIONS,
      jobId: `${runId}:0:start`,
    });
  }

  async startMany(runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.queue.addBulk(
      runIds.map((runId) => ({
        name: JOB_START_RUN,
        data: withRequestId({ runId }),
        opts: { ...JOB_OPTIONS, jobId: `${runId}:0:start` },
      })),
    );
  }

  /**
   * Starts of runs committed at the same moment, in one job. Its id is random: the batch is not repeated by anyone,
   * and a run whose batch was lost is started by the recovery sweep (a start of a started run does nothing).
   */
  async startBatch(runIds: string[]): Promise<void> {
    if (runIds.length === 1) return this.start(runIds[0]);
    await this.queue.add(JOB_START_RUNS, withRequestId({ runIds }) satisfies StartRunsJob, {
      ...JOB_OPTIONS,
      jobId: `starts-${randomUUID()}`,
    });
  }

  /**
   * Replies delivered at the same moment, in one job (one alone keeps its own job id, as `reply`). A reply repeated
   * in two jobs reaches its run once: the second finds the run past that wait (stale seq) and is ignored.
   */
  async replyBatch(
    replies: Array<{ runId: string; event: EngineEvent & { seq: number }; messageId?: string; early?: true }>,
  ) {
    if (replies.length === 1) {
      const [{ runId, event, messageId, early }] = replies;
      return this.reply(runId, event.seq, event, messageId, early);
    }
    await this.queue.add(
      JOB_RESUME_RUNS,
      withRequestId({
        replies: replies.map(({ runId, event, early }) => ({ runId, event, ...(early ? { early } : {}) })),
      }) satisfies ResumeRunsJob,
      { ...JOB_OPTIONS, jobId: `replies-${randomUUID()}` },
    );
  }

  /** Re-performs the pending effect of step `seq` (after a crash). */
  async resume(runId: string, seq: number): Promise<void> {
    await this.queue.add(JOB_RESUME_RUN, withRequestId({ runId }) satisfies ResumeRunJob, {
      ...JOB_OPTIONS,
      jobId: `${runId}:${seq}:resume`,
    });
  }

  /** A customer reply for the wait (or, `early`, the step) of `seq`; one job per (run, step, message). */
  async reply(runId: string, seq: number, event: EngineEvent, messageId?: string, early?: true): Promise<void> {
    const key = messageId ? createHash('sha256').update(messageId).digest('hex').slice(0, 32) : randomUUID();
    await this.queue.add(
      JOB_RESUME_RUN,
      withRequestId({ runId, event, ...(early ? { early } : {}) }) satisfies ResumeRunJob,
      { ...JOB_OPTIONS, jobId: `${runId}:${seq}:reply-${key}` },
    );
  }

  /**
   * Removes the timer job of step `seq` once the run has left that step (a reply came before the timeout). Best effort:
   * a timer that fires anyway is ignored by the engine (stale seq).
   */
  async cancelTimer(runId: string, seq: number): Promise<void> {
    await this.queue.remove(`${runId}:${seq}:timer`).catch(() => undefined);
  }

  /** Timers of many runs (one round trip); each as `timer`. */
  async timers(timers: Array<{ runId: string; seq: number; delayMs: number }>): Promise<void> {
    if (timers.length === 1) return this.timer(timers[0].runId, timers[0].seq, timers[0].delayMs);
    await this.queue.addBulk(
      timers.map(({ runId, seq, delayMs }) => ({
        name: JOB_TIMER_FIRED,
        data: withRequestId({ runId, seq }) satisfies TimerFiredJob,
        opts: { ...JOB_OPTIONS, jobId: `${runId}:${seq}:timer`, delay: Math.max(0, Math.round(delayMs)) },
      })),
    );
  }

  /** The delay or reply timeout of step `seq`, fired after `delayMs`. */
  async timer(runId: string, seq: number, delayMs: number): Promise<void> {
    await this.queue.add(JOB_TIMER_FIRED, withRequestId({ runId, seq }) satisfies TimerFiredJob, {
      ...JOB_OPTIONS,
      jobId: `${runId}:${seq}:timer`,
      delay: Math.max(0, Math.round(delayMs)),
    });
  }
}
