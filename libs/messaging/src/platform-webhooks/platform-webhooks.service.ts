import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { MicroBatcher, QUEUES, withRequestId } from '@switchboard/core';
import { namedQuery } from '@switchboard/core/database';
import { Queue } from 'bullmq';
import { Repository } from 'typeorm';
import { PlatformWebhookEvent } from './platform-webhook-event.entity';

export const PROCESS_WEBHOOK_JOB = 'process-webhook';
const PRUNE_BATCH = 5000;
const JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 250 },
  removeOnComplete: true,
  removeOnFail: 1000,
};

/**
 * Webhooks of one moment stored in one statement; ids by their position (nextval in input order). They come as one
 * JSON array of the bodies as received: no array literal to escape them into (pg's escaping of ~30-kB bodies was 5 %
 * of the API's CPU in a campaign).
 */
const INSERT_EVENTS_SQL = `WITH input AS (
    SELECT nextval('platform_webhook_events_id_seq')::text AS id, payload, ord
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS u(payload, ord)),
  stored AS (INSERT INTO platform_webhook_events (id, payload) SELECT id::bigint, payload FROM input)
  SELECT id FROM input ORDER BY ord`;

/**
 * The job that processes a stored event; its id makes a second enqueue of the same event a no-op. `requeued`: queued
 * again by the sweep, the event may have been worked on by a job since lost (its processor treats it as a retry).
 */
function processJob(eventId: string, context: { requestId?: string }, requeued = false) {
  return {
    name: PROCESS_WEBHOOK_JOB,
    data: { ...context, eventId, ...(requeued ? { requeued } : {}) },
    opts: { ...JOB_OPTIONS, jobId: `event-${eventId}` },
  };
}

interface Accepted {
  /** the body's JSON text */
  json: string;
  /** the request id of the request that brought it (the batch is written in another request's context) */
  context: { requestId?: string };
}

/** Stores each verified platform webhook, then queues it: nothing acknowledged to the platform is lost. */
@Injectable()
export class PlatformWebhooksService {
  constructor(
    @InjectRepository(PlatformWebhookEvent) private readonly events: Repository<PlatformWebhookEvent>,
    @InjectQueue(QUEUES.platformWebhooks) private readonly queue: Queue,
  ) {}

  /** webhooks arriving together: one INSERT and one queue round trip for all of them */
  private readonly accepting = new MicroBatcher((batch: Accepted[]) => this.acceptMany(batch), { maxItems: 100 });
  /** the worker's reads and processed stamps of concurrent jobs, one statement each */
  private readonly loading = new MicroBatcher((ids: string[]) => this.loadMany(ids), { maxItems: 100 });
  private readonly stamping = MicroBatcher.ofWrites((ids: string[]) => this.stampMany(ids), { maxItems: 100 });

  /**
   * Stores the webhook, then queues it; resolves with its id once both are done. `rawBody`: the JSON body as received
   * (only JSON bodies are parsed, so it is valid JSON; a blank one is `{}`, as the parser makes it), stored as it is
   * rather than parsed and serialised again.
   */
  accept(rawBody: Buffer): Promise<string> {
    const text = rawBody.toString('utf8');
    return this.accepting.add({ json: text.trim() ? text : '{}', context: withRequestId({}) });
  }

  private async acceptMany(batch: Accepted[]): Promise<string[]> {
    const rows = await namedQuery<{ id: string }>(
      this.events.manager,
      'platform_webhook_events_insert',
      INSERT_EVENTS_SQL,
      [`[${batch.map((b) => b.json).join(',')}]`],
    );
    const ids = rows.map((r) => r.id);
    await this.queue.addBulk(ids.map((eventId, i) => processJob(eventId, batch[i].context)));
    return ids;
  }

  /** A stored webhook by id (null when gone), read together with the other jobs' of the moment. */
  load(id: string): Promise<PlatformWebhookEvent | null> {
    return this.loading.add(id);
  }

  // Plain SQL on this path (one load and one stamp per platform webhook): TypeORM's query building cost the worker
  // about as much CPU as the statements' round trips in a campaign's profile. Named: planned once per connection.
  private async loadMany(ids: string[]): Promise<Array<PlatformWebhookEvent | null>> {
    const rows = await namedQuery<PlatformWebhookEvent>(
      this.events.manager,
      'platform_webhook_events_load',
      `SELECT id::text, received_at AS "receivedAt", payload, processed_at AS "processedAt", error
         FROM platform_webhook_events WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    const found = new Map(rows.map((e) => [e.id, e]));
    return ids.map((id) => found.get(String(id)) ?? null);
  }

  /** Marks a webhook processed, with the other jobs' of the moment. */
  async markProcessed(id: string): Promise<void> {
    await this.stamping.add(id);
  }

  private async stampMany(ids: string[]): Promise<void> {
    await namedQuery(
      this.events.manager,
      'platform_webhook_events_stamp',
      `UPDATE platform_webhook_events SET processed_at = now(), error = NULL WHERE id = ANY($1::bigint[])`,
      [ids],
    );
  }

  /**
   * Queues again the stored events still unprocessed `olderThanMs` after they arrived (Redis was down, the API died
   * between the insert and the queueing, a job was lost), oldest first, at most 10,000. An event whose job still waits,
   * is delayed for a retry or runs keeps it: the job id is the event's, so adding it again is a no-op. A job that
   * failed for good is removed first: BullMQ keeps it a while (`removeOnFail`) and refuses its id meanwhile, and its
   * event is here only because the failure could not be recorded (the database was down too, or the worker died).
   */
  async requeueUnprocessed(olderThanMs = 0): Promise<number> {
    const pending: Array<{ id: string }> = await this.events.query(
      `SELECT id::text FROM platform_webhook_events
        WHERE processed_at IS NULL AND error IS NULL AND received_at <= now() - $1::int * interval '1 millisecond'
        ORDER BY received_at LIMIT 10000`,
      [olderThanMs],
    );
    const context = withRequestId({});
    for (let i = 0; i < pending.length; i += 500) {
      const jobs = pending.slice(i, i + 500).map(({ id }) => processJob(id, context, true));
      await this.removeFailed(jobs.map((job) => job.opts.jobId));
      await this.queue.addBulk(jobs);
    }
    return pending.length;
  }

  private async removeFailed(jobIds: string[]): Promise<void> {
    const states = await Promise.all(jobIds.map((id) => this.queue.getJobState(id)));
    await Promise.all(jobIds.filter((_, i) => states[i] === 'failed').map((id) => this.queue.remove(id)));
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
}
