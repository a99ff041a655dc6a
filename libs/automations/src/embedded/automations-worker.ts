import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { AppConfig, inJobContext, PeriodicSweeps, QUEUES } from '@switchboard/core';
import { Worker, type Job } from 'bullmq';
import {
  JOB_RESUME_RUN,
  JOB_RESUME_RUNS,
  JOB_START_RUN,
  JOB_START_RUNS,
  JOB_TIMER_FIRED,
  type ResumeRunJob,
  type ResumeRunsJob,
  type StartRunJob,
  type StartRunsJob,
  type TimerFiredJob,
} from './automation-queue';
import { AUTOMATION_DRIVER, type AutomationDriver } from '../driver/automation-driver';
import type { EngineEvent } from '@switchboard/engine';
import { EmbeddedDriver, type DriverInput } from './embedded-driver';

/** A reply job's input: for the wait of its `seq`, or (`early`) a reply that came during the step of its `seq`. */
const replyInput = (event: EngineEvent, early?: true): DriverInput =>
  early ? { kind: 'early-reply', event } : { kind: 'event', event };

/** How often the recovery sweep runs (besides once at each worker's start): once per period across all workers. */
export const RECOVERY_INTERVAL_MS = 60_000;

/**
 * The BullMQ worker of the `automations` queue (embedded driver; off when the Temporal driver is selected), started with the worker process: runs the
 * recovery sweep at start and every minute (a BullMQ job scheduler: once per minute across all worker processes), then processes start-run(s), resume-run(s) and timer-fired jobs.
 */
@Injectable()
export class AutomationsWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('AutomationsWorker');
  private worker?: Worker;

  constructor(
    private readonly config: AppConfig,
    private readonly driver: EmbeddedDriver,
    @Inject(AUTOMATION_DRIVER) private readonly selected: AutomationDriver,
    private readonly sweeps: PeriodicSweeps,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.selected.kind !== 'embedded') {
      // Temporal driver: this worker and its sweep stay off, or they would start the pending runs a second time.
      this.logger.log('automations run on Temporal (TEMPORAL_ADDRESS is set): the embedded automation worker is off');
      return;
    }
    this.worker = new Worker(QUEUES.automations, (job) => inJobContext(job, () => this.process(job)), {
      connection: { url: this.config.REDIS_URL, maxRetriesPerRequest: null },
      prefix: `${this.config.REDIS_PREFIX}:bull`,
      concurrency: this.config.AUTOMATION_WORKER_CONCURRENCY,
    });
    this.worker.on('failed', (job, error) =>
      this.logger.error({
        msg: 'automation job failed',
        job: job?.id,
        attempt: job?.attemptsMade,
        error: error.message,
      }),
    );
    this.worker.on('error', (error) => this.logger.error({ msg: 'automation worker error', error: error.message }));
    await this.sweep(true);
    await this.sweeps.register('automation-recovery', RECOVERY_INTERVAL_MS, () => this.sweep(false));
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }

  async sweep(full: boolean): Promise<void> {
    try {
      const counts = await this.driver.recover({ full });
      if (counts.started + counts.resumed + counts.timers > 0)
        this.logger.log({ msg: 'automation recovery sweep', ...counts });
    } catch (error) {
      this.logger.error({ msg: 'automation recovery sweep failed', error: (error as Error).message });
    }
  }

  private async process(job: Job): Promise<void> {
    switch (job.name) {
      case JOB_START_RUN:
        return this.driver.drive((job.data as StartRunJob).runId, { kind: 'start' });
      case JOB_START_RUNS:
        return this.driver.driveMany(
          (job.data as StartRunsJob).runIds.map((runId) => ({ runId, input: { kind: 'start' as const } })),
        );
      case JOB_RESUME_RUNS:
        return this.driver.driveMany(
          (job.data as ResumeRunsJob).replies.map(({ runId, event, early }) => ({
            runId,
            input: replyInput(event, early),
          })),
        );
      case JOB_RESUME_RUN: {
        const { runId, event, early } = job.data as ResumeRunJob;
        return this.driver.drive(runId, event ? replyInput(event, early) : { kind: 'resume' });
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
