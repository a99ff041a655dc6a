import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, QUEUES } from '@switchboard/core';
import { Worker, type Job } from 'bullmq';
import { JOB_RESUME_RUN, JOB_START_RUN, JOB_TIMER_FIRED, type ResumeRunJob, type StartRunJob, type TimerFiredJob } from './automation-queue';
import { EmbeddedDriver } from './embedded-driver';

/** How often a worker re-runs the recovery sweep (besides once at start). */
export const RECOVERY_INTERVAL_MS = 60_000;

/**
 * The BullMQ worker of the `automations` queue (embedded driver), started with the worker process: runs the
 * recovery sweep at start and every minute, then processes start-run, resume-run and timer-fired jobs.
 */
@Injectable()
export class AutomationsWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AutomationsWorker');
  private worker?: Worker;
  private sweepTimer?: NodeJS.Timeout;

  constructor(
    private readonly config: AppConfig,
    private readonly driver: EmbeddedDriver,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.TEMPORAL_ADDRESS) {
      this.logger.warn('TEMPORAL_ADDRESS is set but the Temporal driver is not installed yet: automations run on the embedded driver');
    }
    this.worker = new Worker(QUEUES.automations, (job) => this.process(job), {
      connection: { url: this.config.REDIS_URL, maxRetriesPerRequest: null },
      prefix: `${this.config.REDIS_PREFIX}:bull`,
      concurrency: this.config.AUTOMATION_WORKER_CONCURRENCY,
    });
    this.worker.on('failed', (job, error) => this.logger.error({ msg: 'automation job failed', job: job?.id, attempt: job?.attemptsMade, error: error.message }));
    this.worker.on('error', (error) => this.logger.error({ msg: 'automation worker error', error: error.message }));
    await this.sweep(true);
    this.sweepTimer = setInterval(() => void this.sweep(false), RECOVERY_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.worker?.close();
  }

  async sweep(full: boolean): Promise<void> {
    try {
      const counts = await this.driver.recover({ full });
      if (counts.started + counts.resumed + counts.timers > 0) this.logger.log({ msg: 'automation recovery sweep', ...counts });
    } catch (error) {
      this.logger.error({ msg: 'automation recovery sweep failed', error: (error as Error).message });
    }
  }

  private async process(job: Job): Promise<void> {
    switch (job.name) {
      case JOB_START_RUN:
        return this.driver.drive((job.data as StartRunJob).runId, { kind: 'start' });
      case JOB_RESUME_RUN: {
        const { runId, event } = job.data as ResumeRunJob;
        return this.driver.drive(runId, event ? { kind: 'event', event } : { kind: 'resume' });
      }
      case JOB_TIMER_FIRED: {
        const { runId, seq } = job.data as TimerFiredJob;
        return this.driver.drive(runId, { kind: 'event', event: { type: 'timer_fired', seq } });
      }
      default:
        this.logger.warn({ msg: 'unknown automation job', name: job.name, id: job.id });
    }
  }
}
