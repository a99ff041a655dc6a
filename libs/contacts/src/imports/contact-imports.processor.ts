import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import { inJobContext, PeriodicSweeps, QUEUES } from '@switchboard/core';
import { Job } from 'bullmq';
import { ContactImportsService } from './contact-imports.service';

/** A lost import job (Redis failed after the upload committed, or a job removed) is queued again within this period. */
const SWEEP_EVERY_MS = 30_000;

/** Worker side of contact imports: one job per import, run (or resumed) to its end. */
@Processor(QUEUES.contactImports, { concurrency: 2, lockDuration: 60_000, stalledInterval: 15_000, maxStalledCount: 5 })
export class ContactImportsProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(ContactImportsProcessor.name);

  constructor(
    private readonly imports: ContactImportsService,
    private readonly sweeps: PeriodicSweeps,
  ) {
    super();
  }

  onApplicationBootstrap() {
    const sweep = async () => {
      for (const id of await this.imports.unfinished()) await this.imports.requeue(id);
    };
    this.sweeps
      .register('contact-imports', SWEEP_EVERY_MS, sweep)
      .catch((e) => this.logger.warn(`contact import sweep scheduler: ${(e as Error).message}`));
  }

  process(job: Job<{ importId: string }>) {
    return inJobContext(job, () => this.handle(job));
  }

  private async handle(job: Job<{ importId: string }>) {
    const started = Date.now();
    try {
      const status = await this.imports.run(job.data.importId);
      this.logger.log(`import ${job.data.importId}: ${status} in ${Date.now() - started} ms`);
      return { status };
    } catch (error) {
      // out of attempts: the import says why instead of staying "importing" for ever
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
        await this.imports.fail(
          job.data.importId,
          `The import stopped after repeated errors: ${(error as Error).message}. Rows counted so far were applied.`,
        );
      throw error;
    }
  }
}
