import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QUEUES, withRequestId } from '@switchboard/core';
import { Queue } from 'bullmq';
import { IsNull, Repository } from 'typeorm';
import { PlatformWebhookEvent } from './platform-webhook-event.entity';

export const PROCESS_WEBHOOK_JOB = 'process-webhook';

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
