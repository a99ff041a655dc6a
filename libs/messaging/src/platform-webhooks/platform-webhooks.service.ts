import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QUEUES, withRequestId } from '@switchboard/core';
import { Queue } from 'bullmq';
import { IsNull, Repository } from 'typeorm';
import { PlatformWebhookEvent } from './platform-webhook-event.entity';

export const PROCESS_WEBHOOK_JOB = 'process-webhook';
const PRUNE_BATCH = 5000;

/** Stores each verified platform webhook, then queues it: nothing acknowledged to the platform is lost. */
@Injectable()
export class PlatformWebhooksService {
  constructor(
    @InjectRepository(PlatformWebhookEvent) private readonly events: Repository<PlatformWebhookEvent>,
    @InjectQueue(QUEUES.platformWebhooks) private readonly queue: Queue,
  ) {}

  async accept(payload: unknown): Promise<string> {
    // one statement (Repository.save would wrap it in a transaction: three round trips per webhook)
    const [{ id }] = await this.events.query(`INSERT INTO platform_webhook_events (payload) VALUES ($1) RETURNING id`, [
      JSON.stringify(payload ?? {}),
    ]);
    await this.enqueue(id);
    return id;
  }

  /** Queues stored events that were never processed (e.g. Redis was down when they arrived). */
  async requeueUnprocessed(): Promise<number> {
    const pending = await this.events.find({
      select: { id: true },
      where: { processedAt: IsNull(), error: IsNull() },
      order: { id: 'ASC' },
      take: 10_000,
    });
    for (const { id } of pending) await this.enqueue(id);
    return pending.length;
  }

  /**
   * Deletes the events received more than `retentionDays` ago that were processed (or failed for good), oldest first,
   * walking the primary key in batches (ids grow with arrival, so no index on the time is needed). Returns how many.
   */
  async prune(retentionDays: number): Promise<number> {
    let deleted = 0;
    let after = '0';
    for (;;) {
      const [batch]: Array<{ last: string | null; done: boolean; deleted: number }> = await this.events.query(
        `WITH batch AS (SELECT id, received_at, processed_at, error FROM platform_webhook_events
                         WHERE id > $1 ORDER BY id LIMIT ${PRUNE_BATCH}),
              gone AS (DELETE FROM platform_webhook_events WHERE id IN (
                         SELECT id FROM batch WHERE received_at < now() - make_interval(days => $2)
                                                AND (processed_at IS NOT NULL OR error IS NOT NULL))
                       RETURNING id)
         SELECT (SELECT max(id) FROM batch)::text AS last,
                (SELECT count(*) < ${PRUNE_BATCH} OR bool_or(received_at >= now() - make_interval(days => $2)) FROM batch) AS done,
                (SELECT count(*) FROM gone)::int AS deleted`,
        [after, retentionDays],
      );
      deleted += batch.deleted;
      if (batch.done || batch.last === null) return deleted;
      after = batch.last;
    }
  }

  private enqueue(eventId: string) {
    // The job id makes a second enqueue of the same event a no-op.
    return this.queue.add(PROCESS_WEBHOOK_JOB, withRequestId({ eventId }), {
      jobId: `event-${eventId}`,
      attempts: 8,
      backoff: { type: 'exponential', delay: 250 },
      removeOnComplete: true,
      removeOnFail: 1000,
    });
  }
}
