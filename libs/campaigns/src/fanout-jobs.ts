import { withRequestId } from '@switchboard/core';
import type { JobsOptions, Queue } from 'bullmq';

export const FANOUT_JOB = 'fanout';
/** Completes a running campaign whose start fan-out is done once none of its messages wait to be sent. */
export const FINISH_JOB = 'finish';

export interface FanoutJobData {
  triggerId: string;
  /** the batch this job expands: equal to the trigger's `batches_done` when it is due */
  batch: number;
}

/**
 * One job per (trigger, batch): the id is deterministic, so adding it twice while it waits or runs is a no-op. A job
 * that fails for good is removed (`removeOnFail: true`), not kept: BullMQ refuses a job id it still holds, failed ones
 * included, so a kept failure (the database away for longer than the retries) would block the sweep's re-add, and the
 * campaign would stay `running` without sending, forever. The worker logs the failure.
 */
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
    removeOnFail: true,
  };
}

/**
 * `resumed`: the jobs of a resume get an id of their own. The usual id would be a no-op while a job of the same batch
 * is still running (it found the campaign paused and is about to end), and the trigger would wait for the sweep; two
 * jobs of one batch are harmless (`expand` checks `batches_done` under the trigger's row lock).
 */
export async function addFanoutJobs(
  queue: Queue,
  jobs: Array<{ triggerId: string; batch: number }>,
  options: { resumed?: boolean } = {},
): Promise<void> {
  if (!jobs.length) return;
  const resumedAt = Date.now();
  await queue.addBulk(
    jobs.map(({ triggerId, batch }) => {
      const opts = fanoutJobOptions(triggerId, batch);
      return {
        name: FANOUT_JOB,
        data: withRequestId({ triggerId, batch }) satisfies FanoutJobData,
        opts: options.resumed ? { ...opts, jobId: `${opts.jobId}-resumed-${resumedAt}` } : opts,
      };
    }),
  );
}

export async function addFinishJob(queue: Queue, campaignId: string, delayMs = 0): Promise<void> {
  await queue.add(FINISH_JOB, withRequestId({ campaignId }), {
    jobId: `finish-${campaignId}`,
    delay: delayMs,
    attempts: 20,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: true,
    removeOnFail: true,
  });
}

/** Starts a scheduled campaign at its time (delayed job; the campaign row decides: it starts once, if still scheduled then). */
export const SCHEDULE_JOB = 'scheduled-start';

export interface ScheduleJobData {
  campaignId: string;
  /** the schedule this job was made for (ms since epoch): a rescheduled campaign has another job */
  at: number;
}

/** One job per (campaign, time): rescheduling adds a new one; the old one finds the time moved and does nothing. */
export async function addScheduleJob(queue: Queue, campaignId: string, at: Date): Promise<void> {
  const ms = at.getTime();
  await queue.add(SCHEDULE_JOB, withRequestId({ campaignId, at: ms }) satisfies ScheduleJobData, {
    jobId: `schedule-${campaignId}-${ms}`,
    delay: Math.max(0, ms - Date.now()),
    attempts: 20,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: true,
  });
}
