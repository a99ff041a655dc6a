import { Injectable, Logger } from '@nestjs/common';
import type { InboundReply } from '@switchboard/engine';
import { AutomationQueue } from '../embedded/automation-queue';
import type { AutomationDriver, DriverHealth, ReplyTarget, RunRef } from './automation-driver';

/**
 * The embedded driver behind the AutomationDriver seam: a start is a `start-run` job, a reply a `resume-run` job
 * (deterministic job ids); EmbeddedDriver executes them in the worker (AutomationsWorker).
 */
@Injectable()
export class EmbeddedAutomationDriver implements AutomationDriver {
  readonly kind = 'embedded' as const;
  readonly replyTargets = 'reply' as const;
  private readonly logger = new Logger('EmbeddedAutomationDriver');

  constructor(private readonly queue: AutomationQueue) {}

  /** The run is committed: a failed enqueue is logged, and the worker's recovery sweep starts the run later. */
  async startRun(run: RunRef): Promise<void> {
    try {
      await this.queue.start(run.id);
    } catch (error) {
      this.logger.error({
        msg: 'could not enqueue run start; the recovery sweep will start it',
        runId: run.id,
        error: (error as Error).message,
      });
    }
  }

  async deliverReply(run: ReplyTarget, reply: InboundReply): Promise<boolean> {
    if (run.waitingSeq === null) return false;
    const messageId = typeof reply.messageId === 'string' && reply.messageId ? reply.messageId : undefined;
    await this.queue.reply(run.id, run.waitingSeq, { type: 'reply_received', reply, seq: run.waitingSeq }, messageId);
    return true;
  }

  async health(): Promise<DriverHealth> {
    return { driver: 'embedded', status: 'up' };
  }
}
