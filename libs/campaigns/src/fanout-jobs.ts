import type { JobsOptions, Queue } from 'bullmq';

export const FANOUT_JOB = 'fanout';
/** Completes a running campaign whose start fan-out is done once none of its messages wait to be sent. */
export const FINISH_JOB = 'finish';

export interface FanoutJobData {
  triggerId: string;
  /** the batch this job expands: equal to the trigger's `batches_done` when it is due */
  batch: number;
}

/** One job per (trigger, batch): the id is deterministic, so adding it twice while it waits or runs is a no-op. */
export function fanoutJobId(triggerId: string, batch: number): string {
  return `fanout-${triggerId}-${batch}`;
}

export function fanoutJobOptions(triggerId: string, batch: number): JobsOptions {
  return {
    jobId: fanoutJobId(triggerId, batch),
    attempts: 20,
    // retries are cheap and idempotent (a replayed batch only re-queues its sends): come back soon, not exponentially later
    backoff: { type: 'fixed', delay: 500 },
    removeOnComplete: true,
    removeOnFail: 1000,
  };
}

export async function addFanoutJobs(queue: Queue, jobs: Array<{ triggerId: string; batch: number }>): Promise<void> {
  if (!jobs.length) return;
  await queue.addBulk(
    jobs.map(({ triggerId, batch }) => ({
      name: FANOUT_JOB,
      data: { triggerId, batch } satisfies FanoutJobData,
      opts: fanoutJobOptions(triggerId, batch),
    })),
  );
}

export async function addFinishJob(queue: Queue, campaignId: string, delayMs = 0): Promise<void> {
  await queue.add(
    FINISH_JOB,
    { campaignId },
    {
      jobId: `finish-${campaignId}`,
      delay: delayMs,
      attempts: 20,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      removeOnFail: 1000,
    },
  );
}
