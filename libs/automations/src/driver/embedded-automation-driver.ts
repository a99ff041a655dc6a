import { Injectable, Logger } from '@nestjs/common';
import { MicroBatcher } from '@switchboard/core';
import type { EngineEvent, InboundReply } from '@switchboard/engine';
import { AutomationQueue } from '../embedded/automation-queue';
import type { AutomationDriver, DriverHealth, ReplyTarget, RunRef } from './automation-driver';

/** the most runs started, or replies delivered, by one job */
const RUNS_PER_JOB = 50;

/**
 * The embedded driver behind the AutomationDriver seam: a start is a `start-run` job, a reply a `resume-run` job
 * (deterministic job ids); EmbeddedDriver executes them in the worker (AutomationsWorker). Starts or replies that
 * come while the previous enqueue is in flight go together in one `start-runs` / `resume-runs` job (at most
 * RUNS_PER_JOB), which the worker steps together: a busy webhook costs one job per batch, not per run.
 */
@Injectable()
export class EmbeddedAutomationDriver implements AutomationDriver {
  readonly kind = 'embedded' as const;
  readonly replyTargets = 'reply-or-step' as const;
  private readonly logger = new Logger('EmbeddedAutomationDriver');

  private readonly starts = MicroBatcher.ofWrites((runIds: string[]) => this.queue.startBatch(runIds), {
    maxItems: RUNS_PER_JOB,
  });
  private readonly replies = MicroBatcher.ofWrites(
    (replies: Array<{ runId: string; event: EngineEvent & { seq: number }; messageId?: string; early?: true }>) =>
      this.queue.replyBatch(replies),
    { maxItems: RUNS_PER_JOB },
  );

  constructor(private readonly queue: AutomationQueue) {}

  /** The run is committed: a failed enqueue is logged, and the worker's recovery sweep starts the run later. */
  async startRun(run: RunRef): Promise<void> {
    try {
      await this.starts.add(run.id);
    } catch (error) {
      this.logger.error({
        msg: 'could not enqueue run start; the recovery sweep will start it',
        runId: run.id,
        error: (error as Error).message,
      });
    }
  }

  /**
   * A run waiting for a reply gets it for that wait (`seq`). A run performing a step gets it as an early reply, kept
   * for its next reply wait unless a delay comes first (EmbeddedDriver decides under the run's lock).
   */
  async deliverReply(run: ReplyTarget, reply: InboundReply): Promise<boolean> {
    if (run.waitingSeq === null) return false;
    const messageId = typeof reply.messageId === 'string' && reply.messageId ? reply.messageId : undefined;
    await this.replies.add({
      runId: run.id,
      event: { type: 'reply_received', reply, seq: run.waitingSeq },
      messageId,
      ...(run.waitingKind === 'effect' ? { early: true as const } : {}),
    });
    return true;
  }

  async health(): Promise<DriverHealth> {
    return { driver: 'embedded', status: 'up' };
  }
}
