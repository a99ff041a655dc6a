import { Injectable, Logger, BeforeApplicationShutdown } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import { AppConfig } from '../config/config';
import { QUEUES } from '../queues';

export type SweepHandler = () => Promise<unknown>;

/**
 * Periodic sweeps (send recovery, campaign fan-out, automation recovery, Temporal recovery) that run once per period
 * across ALL worker processes, not once per process: each sweep is a BullMQ job scheduler
 * (`queue.upsertJobScheduler(name, {every})`) on the `sweeps` queue. The scheduler lives in Redis, so however many
 * processes register it, there is one scheduler and one job per period, taken by one process; every worker process
 * runs a `sweeps` Worker with the handlers it registered. A process that dies mid-sweep leaves its job to be
 * retaken once its lock expires (sweeps are idempotent).
 *
 * Callers still run their own sweep once at start (recovery after a restart should not wait a period).
 */
@Injectable()
export class PeriodicSweeps implements BeforeApplicationShutdown {
  private readonly logger = new Logger('PeriodicSweeps');
  private readonly handlers = new Map<string, SweepHandler>();
  private queue?: Queue;
  private worker?: Worker;
  private closed = false;

  constructor(private readonly config: AppConfig) {}

  /** Registers `handler` as sweep `name`, run every `everyMs` by one of the processes that registered it. */
  async register(name: string, everyMs: number, handler: SweepHandler): Promise<void> {
    if (this.closed) return;
    this.handlers.set(name, handler);
    const connection = { url: this.config.REDIS_URL, maxRetriesPerRequest: null };
    const prefix = `${this.config.REDIS_PREFIX}:bull`;
    this.queue ??= new Queue(QUEUES.sweeps, { connection, prefix });
    this.worker ??= this.createWorker(connection, prefix);
    await this.queue.upsertJobScheduler(
      name,
      { every: everyMs },
      { name, data: {}, opts: { removeOnComplete: true, removeOnFail: 50 } },
    );
  }

  /** The names this process runs (tests). */
  get registered(): string[] {
    return [...this.handlers.keys()];
  }

  private createWorker(connection: object, prefix: string): Worker {
    const worker = new Worker(QUEUES.sweeps, (job) => this.run(job), {
      connection,
      prefix,
      concurrency: 4,
      lockDuration: 60_000,
    });
    worker.on('error', (error) => this.logger.warn({ msg: 'sweeps worker error', error: error.message }));
    return worker;
  }

  private async run(job: Job): Promise<void> {
    const handler = this.handlers.get(job.name);
    if (!handler) {
      // A scheduler registered by a process with another set of modules: not this process's to run.
      this.logger.debug({ msg: 'no handler for sweep in this process', sweep: job.name });
      return;
    }
    try {
      await handler();
    } catch (error) {
      this.logger.warn({ msg: 'sweep failed', sweep: job.name, error: (error as Error).message });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.worker?.close();
    await this.queue?.close();
  }
}
