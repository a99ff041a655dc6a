import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { AppConfig, inJobContext, MicroBatcher, PeriodicSweeps, QUEUES, REDIS, sendsTotal } from '@switchboard/core';
import {
  answerLost,
  classifyCloudApiError,
  CloudApiClient,
  CloudApiError,
  type SendMessageRequest,
  type StatusEvent,
  stopsEverySend,
} from '@switchboard/whatsapp';
import { notApprovedReason } from '@switchboard/templates';
import { messageStatusData, recordWebhookEvent } from '@switchboard/webhooks';
import { DelayedError, Job } from 'bullmq';
import type Redis from 'ioredis';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { namedQuery } from '@switchboard/core/database';
import { CallbacksService } from '../callbacks/callbacks.service';
import { InboxEvents } from '../inbox/inbox-events';
import { CampaignHolds } from './campaign-holds';
import { Pacer } from './pacer';
import {
  SEND_BATCH_JOB,
  SEND_JOB,
  SendBatchJobData,
  SendFailure,
  SendJobData,
  SendLane,
  SendQueueService,
} from './send-queue.service';

/**
 * A message in doubt for this long is sent again even while the webhook intake is still behind (a webhook that is
 * never processed must not hold a message forever).
 */
export const IN_DOUBT_GIVE_UP_MS = 10 * 60_000;
/**
 * The oldest a claim may be when its platform call is made (or half of SEND_IN_DOUBT_MS, if less): an older one is
 * claimed again just before the call (claimIsStale). Claims are made ahead of the pacer slots, which may be seconds off
 * when the number's horizon is full; the in-doubt wait counts from the claim, so this much is added to it.
 */
const CLAIM_MAX_AGE_MS = 5_000;
/** How soon a message in doubt that waits for the webhook intake is looked at again. */
const IN_DOUBT_RECHECK_MS = 1000;
/** A batch job reserves about 50 ms of its number's rate per pacer call (1 slot at 20 msg/s or less, at most 50). */
export const slotsPerReservation = (messagesPerSecond: number) =>
  Math.max(1, Math.min(50, Math.floor(messagesPerSecond / 20)));
/** A batch job that finds some of its messages queued again when it ends (a resume) comes back after this long. */
const RESUMED_RECHECK_MS = 250;
/** A job holding wamids the database could not record tries again after this long (recordLater). */
const UNRECORDED_RECHECK_MS = 2000;
/** A batch job re-reads the status of the messages it has yet to send this often (a pause or cancel takes effect). */
const BATCH_RECHECK_MS = 1000;
/** Bulk sends reserve pacer slots at most this far ahead, so API sends never queue behind more than this. */
const BULK_MAX_AHEAD_MS = 1000;
/**
 * Platform answers of a busy sender are recorded together, at most one UPDATE per this interval (at 1,000/s the
 * answers came ~1 ms apart and each UPDATE carried 2–3). A status that overtakes its answer is still applied: it is
 * linked by its biz_opaque_callback_data (MessageEventsService.linkByOpaqueData).
 */
const ACCEPTED_WRITE_INTERVAL_MS = 10;
/**
 * A campaign chunk's answers: no request waits on each one (the chunk's job ends when all are recorded), so they are
 * recorded in fewer, larger UPDATEs (~50 rows at 1,000/s instead of ~10: a quarter of the statements and commits).
 */
const CHUNK_ACCEPTED_WRITE_INTERVAL_MS = 50;
/** Sweep of messages stored but not queued (a crash between the insert and the enqueue, a lost job). */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_MIN_AGE_MS = 30_000;

/** What a job's failure says when a failure was recorded and its `failed` callback could not be queued. */
const CALLBACK_NOT_QUEUED = 'failed callback not queued';

class RetryableSendError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** BullMQ backoff (`backoff: {type: 'platform'}`): the platform's Retry-After when it gave one, else exponential with jitter. */
export function sendBackoff(attemptsMade: number, _type?: string, error?: Error): number {
  const hinted = error instanceof RetryableSendError ? error.retryAfterMs : undefined;
  const base = hinted ?? Math.min(30_000, 500 * 2 ** Math.max(0, attemptsMade - 1));
  return Math.round(base * (1 + Math.random() * 0.2));
}

interface NumberInfo {
  client: CloudApiClient;
  messagesPerSecond: number;
  until: number;
}

export type SendResult =
  | { outcome: 'accepted'; wamid: string }
  | { outcome: 'failed'; code: number }
  | { outcome: 'skipped'; status: string }
  | { outcome: 'held' };
export interface BatchResult {
  accepted: number;
  failed: number;
  /** no longer queued when the job read them (sent, paused, cancelled) */
  skipped: number;
}

interface SendRow {
  id: string;
  phone_number_id: string;
  payload: Record<string, unknown>;
  status?: string;
  wamid?: string | null;
  /** the fencing token as read (or as claimed by us): a claim succeeds only while the stored one is still this */
  send_claim: number;
  /** set while a claimed platform call has no recorded answer: the message is in doubt since then */
  claimed_at?: Date | null;
}

const SEND_ROW_COLUMNS = 'id, status, wamid, phone_number_id, payload, send_claim, claimed_at';

/** What one platform call came to: recorded, failed for good, to retry, or accepted but not yet written down. */
type Delivery =
  | { outcome: 'accepted'; wamid: string }
  | { outcome: 'failed'; code: number }
  | { outcome: 'retry'; error: unknown; retryAfterMs?: number; timeout: boolean }
  | { outcome: 'unrecorded'; wamid: string; error: unknown }
  | { outcome: 'undecided'; failure: SendFailure }
  | { outcome: 'held' }; // a campaign message the platform refused for a cause every send meets: its campaign paused

/** Still to be sent: queued (not paused, cancelled or failed) and without a platform id. */
const isUnsent = (row: Pick<SendRow, 'status' | 'wamid'>) => row.status === 'queued' && !row.wamid;

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

function failureOf(error: unknown): SendFailure {
  const e = error instanceof CloudApiError ? error : undefined;
  return {
    code: e?.code ?? 0,
    title: e?.title ?? (e ? e.kind : 'error'),
    details: e?.details ?? e?.message ?? String(error),
  };
}

/**
 * Sends one stored message: skip unless still `queued` (never re-send what the platform accepted), wait for a pacer
 * slot on its number (claimed, a fencing token, just before), call the platform with biz_opaque_callback_data = message id, then
 * record the wamid and `accepted` in one UPDATE right away. Retryable failures (429, 5xx, 130429, network) go back to
 * BullMQ with the platform's Retry-After; other Meta errors, or the last attempt, mark the message `failed` with code,
 * title and details.
 *
 * The claim (`send_claim` + 1, `claimed_at` = now, only if `send_claim` is still the value read) is made in one UPDATE
 * right before the pacer slot (a batch claims its next pacer block, at most BULK_MAX_AHEAD_MS of slots): a job whose worker froze past its lock, and was taken over by another worker, finds its
 * messages claimed by the other and never calls out for them. The remaining crash window is between the platform's
 * answer and the UPDATE that records it (Meta has no idempotency key): such a message stays claimed without an answer,
 * "in doubt". It is sent again only once SEND_IN_DOUBT_MS have passed since the claim AND every platform webhook
 * received within that time has been processed (its status webhook carries our id in biz_opaque_callback_data and links
 * the wamid, MessageEventsService.linkByOpaqueData), or after IN_DOUBT_GIVE_UP_MS. A platform timeout keeps the claim
 * (in doubt too); a definite refusal releases it.
 */
@Injectable()
export class SendExecutor {
  private readonly logger = new Logger(SendExecutor.name);
  private readonly numbers = new Map<string, Promise<NumberInfo>>();
  private readonly pacer: Pacer;
  private sweeping = false;
  private readonly lateToleranceMs: number;
  private readonly acceptedWriter = MicroBatcher.ofWrites(
    (items: Array<{ messageId: string; wamid: string }>) => this.writeAccepted(items),
    { maxItems: 500, minIntervalMs: ACCEPTED_WRITE_INTERVAL_MS },
  );
  private readonly chunkAcceptedWriter = MicroBatcher.ofWrites(
    (items: Array<{ messageId: string; wamid: string }>) => this.writeAccepted(items),
    { maxItems: 500, minIntervalMs: CHUNK_ACCEPTED_WRITE_INTERVAL_MS },
  );
  private readonly claimWriter = new MicroBatcher((rows: SendRow[]) => this.writeClaims(rows), { maxItems: 500 });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(REDIS) redis: Redis,
    private readonly accounts: AccountsService,
    private readonly callbacks: CallbacksService,
    private readonly sends: SendQueueService,
    private readonly config: AppConfig,
    private readonly sweeps: PeriodicSweeps,
    private readonly inboxEvents: InboxEvents,
    private readonly campaignHolds: CampaignHolds,
  ) {
    this.pacer = new Pacer(redis, config.REDIS_PREFIX, config.SEND_PACING_MARGIN_MS);
    // half the margin for our own lateness, half for the network and the platform's
    this.lateToleranceMs = Math.max(1, Math.floor(config.SEND_PACING_MARGIN_MS / 2));
  }

  /** A single-message job (API sends, automation sends, recovery of messages not in a batch). */
  async execute(job: Job<SendJobData>, token: string | undefined, lane: SendLane): Promise<SendResult> {
    const { messageId } = job.data;
    if (job.data.acceptedWamid) {
      // accepted by the platform on an earlier attempt whose database write failed
      const wamid = job.data.acceptedWamid;
      await this.untilRecorded(job, token, () => this.recordAccepted(messageId, wamid));
      return { outcome: 'accepted', wamid };
    }
    await this.followUpFailures(job, [messageId]);
    if (job.data.undecided) {
      const { left, failed, recheckInMs } = await this.decide({ [messageId]: job.data.undecided });
      if (left[messageId]) await this.delay(job, token, recheckInMs);
      return failed ? { outcome: 'failed', code: job.data.undecided.code } : { outcome: 'skipped', status: 'linked' };
    }
    // A first attempt of a job created with the insert (payload inline, never run, never stalled) cannot have been
    // sent yet: it skips the read. Everything else reads the row and sends only a message that is still queued.
    const fresh = job.attemptsMade === 0 && !job.stalledCounter && job.data.payload && job.data.phoneNumberId;
    const row: SendRow | undefined = fresh
      ? {
          id: messageId,
          phone_number_id: job.data.phoneNumberId!,
          payload: job.data.payload! as unknown as SendRow['payload'],
          send_claim: 0,
        }
      : (await this.readRows([messageId]))[0];
    if (!row) return { outcome: 'skipped', status: 'missing' };
    if (!fresh && !isUnsent(row)) return { outcome: 'skipped', status: row.status! };
    if (row.claimed_at) {
      const { waiting, recheckInMs } = await this.inDoubt([row]);
      if (waiting.length) await this.delay(job, token, recheckInMs);
    }

    const number = await this.numberInfo(String(row.phone_number_id));
    // claimed before the pacer slot, so that nothing stands between the slot and the call (the pacing holds)
    const claimedAt = Date.now();
    let claimed = await this.claimWriter.add(row);
    if (!claimed) return { outcome: 'skipped', status: 'claimed elsewhere' };
    try {
      await this.acquireSlot(row, number, lane);
    } catch (error) {
      await this.releaseClaims([claimed]).catch(() => undefined); // never called: not in doubt
      throw error;
    }
    if (this.claimIsStale(claimedAt)) {
      claimed = await this.claimWriter.add(claimed);
      if (!claimed) return { outcome: 'skipped', status: 'claimed elsewhere' };
    }
    const result = await this.deliver(claimed, number, this.isLastAttempt(job));
    if (result.outcome === 'retry') throw new RetryableSendError(errorMessage(result.error), result.retryAfterMs);
    if (result.outcome === 'unrecorded') {
      // The platform has the message: never send it again. Keep its wamid with the job; the retry only records it.
      await job.updateData({ ...job.data, acceptedWamid: result.wamid });
      return this.recordLater(job, token, result.error);
    }
    if (result.outcome === 'undecided') {
      await job.updateData({ ...job.data, undecided: result.failure });
      return this.delay(job, token, this.inDoubtForMs);
    }
    return result;
  }

  /**
   * A batch job (a campaign chunk): reads its messages in one query and sends those still `queued`, one pacer slot
   * after another, each platform call running while the next slot is awaited. Messages that failed retryably make the
   * whole job retry (with the platform's Retry-After); the retry sends only what is still queued. Messages in doubt
   * (claimed earlier, no answer recorded) wait as single messages do, while the others are sent.
   */
  async executeBatch(job: Job<SendBatchJobData>, token: string | undefined): Promise<BatchResult> {
    const unrecorded = Object.entries(job.data.acceptedWamids ?? {});
    if (unrecorded.length) {
      await this.untilRecorded(job, token, () =>
        Promise.all(unrecorded.map(([id, wamid]) => this.recordAccepted(id, wamid, this.chunkAcceptedWriter))),
      );
      await job.updateData({ ...job.data, acceptedWamids: undefined });
    }
    await this.followUpFailures(job, job.data.messageIds);
    // messages whose last call got no readable answer: failed once their doubt is over, never sent again by this job
    let undecided: Record<string, SendFailure> = {};
    let undecidedRecheckMs = 0;
    let decidedFailed = 0;
    if (job.data.undecided) {
      ({
        left: undecided,
        failed: decidedFailed,
        recheckInMs: undecidedRecheckMs,
      } = await this.decide(job.data.undecided));
      await job.updateData({ ...job.data, undecided });
    }
    const unsent = (await this.readRows(job.data.messageIds)).filter(isUnsent);
    const { waiting, recheckInMs } = await this.inDoubt(unsent.filter((r) => r.claimed_at && !undecided[r.id]));
    const held = new Set(waiting.map((r) => r.id));
    const rows = unsent.filter((r) => !held.has(r.id) && !undecided[r.id]);
    if (this.config.SEND_DEBUG)
      this.logger.warn({
        msg: 'batch job runs',
        job: job.id,
        attemptsMade: job.attemptsMade,
        stalled: job.stalledCounter,
        unsent: unsent.length,
        held: held.size,
        claimedBefore: rows.filter((r) => r.claimed_at).map((r) => r.id),
      });
    const { sent, results, interrupted } = await this.sendInSlotOrder(rows, this.isLastAttempt(job));
    const retry = results.filter((r) => r.outcome === 'retry');
    const outcomes = results.map((r, i) => [sent[i].id, r] as const);
    const notRecorded = outcomes.filter(([, r]) => r.outcome === 'unrecorded');
    for (const [id, r] of outcomes) if (r.outcome === 'undecided') undecided[id] = r.failure;
    const newlyUndecided = results.some((r) => r.outcome === 'undecided');
    const count = (outcome: Delivery['outcome']) => results.filter((r) => r.outcome === outcome).length;
    if (retry.length || notRecorded.length || interrupted) {
      await job.updateData({
        ...job.data,
        undecided,
        ...(notRecorded.length
          ? { acceptedWamids: Object.fromEntries(notRecorded.map(([id, r]) => [id, (r as { wamid: string }).wamid])) }
          : {}),
      });
      const retryAfterMs = Math.max(0, ...retry.map((r) => r.retryAfterMs ?? 0)) || undefined;
      if (notRecorded.length) {
        const [, unrecordedOne] = notRecorded[0] as readonly [string, { error: unknown }];
        return this.recordLater(job, token, unrecordedOne.error, retryAfterMs);
      }
      if (interrupted) throw interrupted;
      // a callback not queued is named first: the next try looks for it (followUpFailures)
      const named = retry.find((r) => errorMessage(r.error).includes(CALLBACK_NOT_QUEUED)) ?? retry[0];
      throw new RetryableSendError(
        `${retry.length} of ${sent.length} messages to retry: ${errorMessage(named.error)}`,
        retryAfterMs,
      );
    }
    if (newlyUndecided) await job.updateData({ ...job.data, undecided });
    // the messages in doubt are looked at again later (the others are done)
    const rechecks = [
      ...(waiting.length ? [recheckInMs] : []),
      ...(newlyUndecided ? [this.inDoubtForMs] : []),
      ...(Object.keys(undecided).length && !newlyUndecided ? [undecidedRecheckMs] : []),
    ];
    if (rechecks.length) await this.delay(job, token, Math.min(...rechecks));
    // Messages it neither sent nor holds (paused while it ran, or claimed elsewhere): a resume may have queued them
    // again meanwhile, and its re-queue of this job was a no-op while the job was active. Go round once more rather
    // than leave them to the sweep of queued messages (a minute or more).
    // (a message held for its campaign is one of them: the campaign may have been resumed already)
    const handled = new Set(outcomes.filter(([, r]) => r.outcome !== 'held').map(([id]) => id));
    const others = job.data.messageIds.filter((id) => !handled.has(id));
    if (others.length && (await this.readRows(others)).some(isUnsent)) await this.delay(job, token, RESUMED_RECHECK_MS);
    return {
      accepted: count('accepted'),
      failed: count('failed') + decidedFailed,
      skipped: job.data.messageIds.length - sent.length - decidedFailed,
    };
  }

  /**
   * Sends the rows one pacer slot after another (slots reserved about 50 ms of the rate at a time), each platform call
   * running while the next slot is awaited; re-reads their status every BATCH_RECHECK_MS. Returns once every call made
   * has settled, also when the loop was interrupted (e.g. Redis unreachable): a retry must never overlap them.
   */
  private async sendInSlotOrder(
    rows: SendRow[],
    lastAttempt: boolean,
  ): Promise<{ sent: SendRow[]; results: Delivery[]; interrupted?: unknown }> {
    const deliveries: Array<Promise<Delivery>> = [];
    const sent: SendRow[] = [];
    let pending = rows;
    let checkedAt = Date.now();
    let interrupted: unknown;
    /** claimed in the current block, not called yet: released if the loop is interrupted */
    let unsent = new Set<SendRow>();
    try {
      while (pending.length) {
        // a slow number takes a while through the chunk: look again now and then, so a pause or cancel holds
        if (Date.now() - checkedAt > BATCH_RECHECK_MS) {
          pending = await this.stillQueued(pending);
          checkedAt = Date.now();
          if (!pending.length) break;
        }
        // the next sends on one number: their pacer slots in one call, each sent when its slot is due
        const phone = String(pending[0].phone_number_id);
        const number = await this.numberInfo(phone);
        const otherNumber = pending.findIndex((r) => String(r.phone_number_id) !== phone);
        const candidates = pending.slice(
          0,
          Math.min(slotsPerReservation(number.messagesPerSecond), otherNumber === -1 ? pending.length : otherNumber),
        );
        pending = pending.slice(candidates.length);
        // claimed before their slots (at most claimMaxAgeMs before each call); one claimed by another job is not ours
        let claimedAt = Date.now();
        const block = (await Promise.all(candidates.map((r) => this.claimWriter.add(r)))).filter(
          (r): r is SendRow => r !== null,
        );
        if (!block.length) continue;
        // a send that woke up too late for its slot goes after the others (indexes may come out of order)
        unsent = new Set(block);
        for await (const i of this.pacer.acquireEach(
          phone,
          number.messagesPerSecond,
          block.length,
          BULK_MAX_AHEAD_MS,
          this.lateToleranceMs,
        )) {
          if (this.claimIsStale(claimedAt)) {
            claimedAt = Date.now(); // before the UPDATE, which stamps claimed_at as it starts
            const again = await Promise.all([...unsent].map(async (r) => [r, await this.claimWriter.add(r)] as const));
            unsent = new Set();
            for (const [before, now] of again) {
              if (now) unsent.add((block[block.indexOf(before)] = now));
            }
          }
          if (!unsent.has(block[i])) continue; // claimed by another worker meanwhile: its slot goes unused
          deliveries.push(this.deliver(block[i], number, lastAttempt, this.chunkAcceptedWriter));
          sent.push(block[i]);
          unsent.delete(block[i]);
        }
      }
    } catch (error) {
      interrupted = error;
      // claimed, never called: not in doubt
      await this.releaseClaims([...unsent]).catch(() => undefined);
    }
    const results: Delivery[] = (await Promise.allSettled(deliveries)).map((r) =>
      r.status === 'fulfilled' ? r.value : { outcome: 'retry', error: r.reason, timeout: false },
    );
    return { sent, results, interrupted };
  }

  private async stillQueued(rows: SendRow[]): Promise<SendRow[]> {
    const now: Array<Pick<SendRow, 'id' | 'status' | 'wamid'>> = await this.db.query(
      `SELECT id, status, wamid FROM messages WHERE id = ANY($1::uuid[])`,
      [rows.map((r) => r.id)],
    );
    const unsent = new Set(now.filter(isUnsent).map((r) => r.id));
    return rows.filter((r) => unsent.has(r.id));
  }

  private isLastAttempt(job: Job): boolean {
    return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  }

  /** The rows of these messages, by primary key only (a condition on status or wamid can lead the planner to a partial index of every queued message instead). */
  private readRows(ids: string[]): Promise<SendRow[]> {
    return namedQuery<SendRow>(
      this.db,
      'messages_send_rows',
      `SELECT ${SEND_ROW_COLUMNS} FROM messages WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  }

  /**
   * Of these messages in doubt (claimed, no answer recorded), the ones that must still wait: SEND_IN_DOUBT_MS have not
   * passed since the claim, or a platform webhook received within that time is still unprocessed (their status
   * webhook may be in it), unless the claim is older than IN_DOUBT_GIVE_UP_MS. The others may be sent again (logged).
   */
  private async inDoubt(rows: SendRow[], then = 'sending again'): Promise<{ waiting: SendRow[]; recheckInMs: number }> {
    if (!rows.length) return { waiting: [], recheckInMs: 0 };
    const verdicts: Array<{ id: string; wait_ms: number; intake_behind: boolean; given_up: boolean }> =
      await this.db.query(
        `SELECT m.id,
                ceil(GREATEST(0, EXTRACT(EPOCH FROM (m.claimed_at + $2::int * interval '1 millisecond' - now())) * 1000))::int AS wait_ms,
                now() - m.claimed_at > $3::int * interval '1 millisecond' AS given_up,
                EXISTS (SELECT 1 FROM platform_webhook_events e
                         WHERE e.processed_at IS NULL AND e.error IS NULL
                           AND e.received_at <= m.claimed_at + $2::int * interval '1 millisecond') AS intake_behind
           FROM messages m WHERE m.id = ANY($1::uuid[]) AND m.claimed_at IS NOT NULL`,
        [rows.map((r) => r.id), this.inDoubtForMs, IN_DOUBT_GIVE_UP_MS],
      );
    const waits = new Map<string, number>();
    let again = 0;
    for (const v of verdicts) {
      if (v.wait_ms > 0) waits.set(v.id, v.wait_ms);
      else if (v.intake_behind && !v.given_up) waits.set(v.id, IN_DOUBT_RECHECK_MS);
      else again++;
    }
    if (again)
      this.logger.warn(
        `${again} message(s) in doubt: no platform answer recorded and no status webhook ${this.inDoubtForMs} ms after the claim` +
          `${verdicts.some((v) => v.given_up && v.intake_behind) ? ' (webhook intake still behind after ' + IN_DOUBT_GIVE_UP_MS + ' ms)' : ''}; ${then}`,
      );
    const waiting = rows.filter((r) => waits.has(r.id));
    return { waiting, recheckInMs: waiting.length ? Math.min(...waits.values()) : 0 };
  }

  /**
   * Runs `record` (writing wamids the platform gave an earlier attempt); when the database refuses, the job waits and
   * tries again, as often as it takes (recordLater).
   */
  private async untilRecorded(job: Job, token: string | undefined, record: () => Promise<unknown>): Promise<void> {
    try {
      await record();
    } catch (error) {
      await this.recordLater(job, token, error);
    }
  }

  /**
   * The job holds wamids the platform gave and the database has not recorded (kept in its data): it is delayed, not
   * failed, so it never runs out of attempts. A job out of attempts is removed with its data, and the message, still
   * `queued` without a wamid, would be sent again by the sweep once in doubt: a duplicate from a database outage.
   */
  private async recordLater(job: Job, token: string | undefined, error: unknown, atLeastMs = 0): Promise<never> {
    this.logger.warn({
      msg: 'accepted by the platform, not recorded yet: the job tries again',
      job: job.id,
      err: errorMessage(error),
    });
    return this.delay(job, token, Math.max(UNRECORDED_RECHECK_MS, atLeastMs));
  }

  /** Puts the job back as delayed (it runs again in `ms`); a job without a lock token retries instead. */
  private async delay(job: Job, token: string | undefined, ms: number): Promise<never> {
    if (!token) throw new RetryableSendError('messages in doubt', ms);
    await job.moveToDelayed(Date.now() + ms, token);
    throw new DelayedError();
  }

  /**
   * Claims messages for a platform call in one UPDATE (rows locked in id order): each only if still queued, without a
   * wamid, and its `send_claim` still the one read. Returns each row with its new claim, or null when not claimed.
   * Rows are found by primary key only and checked on the locked values: with conditions on `messages` itself, a
   * planner with stale statistics (a table that grew fast) chose a BitmapAnd of the `status = 'queued'` and
   * `wamid IS NULL` indexes, reading every unsent message for each chunk (docs/performance.md, "Fifth round").
   */
  private async writeClaims(rows: SendRow[]): Promise<Array<SendRow | null>> {
    const claimed = await namedQuery<{ id: string; send_claim: number }>(
      this.db,
      'messages_claim',
      `WITH wanted AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS x(id, claim)),
            locked AS (SELECT m.id, m.send_claim, m.status, m.wamid FROM messages m WHERE m.id = ANY($1::uuid[]) ORDER BY m.id FOR UPDATE)
       UPDATE messages m SET send_claim = m.send_claim + 1, claimed_at = now()
         FROM wanted JOIN locked ON locked.id = wanted.id
        WHERE m.id = ANY($1::uuid[]) AND m.id = locked.id
          AND locked.send_claim = wanted.claim AND locked.status = 'queued' AND locked.wamid IS NULL
       RETURNING m.id, m.send_claim`,
      [rows.map((r) => r.id), rows.map((r) => r.send_claim)],
    );
    const claims = new Map(claimed.map((c) => [c.id, c.send_claim]));
    // The same message twice in one batch (two runs of its job in this process, one taken over after a stall) is
    // updated once: only the first asks gets the claim, or both would send.
    return rows.map((r) => {
      const claim = claims.get(r.id);
      if (claim === undefined) return null;
      claims.delete(r.id);
      return { ...r, send_claim: claim, claimed_at: null };
    });
  }

  /** Gives back claims of messages whose platform call was not made (or was definitely refused): not in doubt. */
  private async releaseClaims(rows: SendRow[]): Promise<void> {
    if (!rows.length) return;
    // locked in id order first, as claims and campaign pauses lock them: no deadlock with either
    await this.db.query(
      `WITH x AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS x(id, claim)),
            locked AS (SELECT m.id FROM messages m WHERE m.id = ANY($1::uuid[]) ORDER BY m.id FOR UPDATE)
       UPDATE messages m SET claimed_at = NULL FROM x, locked l
        WHERE m.id = x.id AND l.id = x.id AND m.send_claim = x.claim`,
      [rows.map((r) => r.id), rows.map((r) => r.send_claim)],
    );
  }

  /**
   * A claim older than claimMaxAgeMs (5 s, or half of SEND_IN_DOUBT_MS) when its slot comes is claimed again before
   * the call (one conditional UPDATE: the fencing token decides). Its slot may simply be far off (the number's horizon
   * full, a slow number with many sends waiting), or this process was frozen (SIGSTOP, a long GC or swap) for so long
   * that another worker, seeing the claim without an answer, is about to send the message again: whichever claims first
   * sends, the other finds the token moved and does not. It used to give the slot up and retry the job, which on a
   * number at a few messages per second with more than 15 s of sends waiting wasted every slot beyond that, again on
   * every retry (docs/messaging.md).
   */
  private claimIsStale(claimedAt: number): boolean {
    return Date.now() - claimedAt > this.claimMaxAgeMs;
  }

  private get claimMaxAgeMs(): number {
    return Math.min(CLAIM_MAX_AGE_MS, this.config.SEND_IN_DOUBT_MS / 2);
  }

  /**
   * How long after its claim a message without a recorded answer is in doubt: the platform gets SEND_IN_DOUBT_MS from
   * the call to deliver its status, and the call came at most claimMaxAgeMs after the claim.
   */
  private get inDoubtForMs(): number {
    return this.config.SEND_IN_DOUBT_MS + this.claimMaxAgeMs;
  }

  private acquireSlot(row: SendRow, number: NumberInfo, lane: SendLane) {
    return this.pacer.acquire(
      String(row.phone_number_id),
      number.messagesPerSecond,
      lane === 'bulk' ? BULK_MAX_AHEAD_MS : -1,
      this.lateToleranceMs,
    );
  }

  /** Calls the platform and records its answer (counted in switchboard_sends_total by outcome). */
  private async deliver(
    row: SendRow,
    number: NumberInfo,
    lastAttempt: boolean,
    answers = this.acceptedWriter,
  ): Promise<Delivery> {
    const delivery = await this.callPlatform(row, number, lastAttempt, answers);
    sendsTotal.inc({ outcome: delivery.outcome });
    return delivery;
  }

  /** Calls the platform and records its answer; a retryable failure is returned (the caller decides), a final one recorded. */
  private async callPlatform(
    row: SendRow,
    number: NumberInfo,
    lastAttempt: boolean,
    answers: MicroBatcher<{ messageId: string; wamid: string }, void>,
  ): Promise<Delivery> {
    let wamid: string;
    try {
      const response = await number.client.sendMessage({
        ...row.payload,
        biz_opaque_callback_data: row.id,
      } as SendMessageRequest);
      wamid = response.messages?.[0]?.id;
      if (!wamid)
        throw new CloudApiError({
          kind: 'invalid_response',
          code: 0,
          message: 'the platform answered without a message id',
        });
    } catch (error) {
      const { retryable, retryAfterMs } = classifyCloudApiError(error);
      if (this.config.SEND_DEBUG)
        this.logger.warn({
          msg: 'platform call failed',
          messageId: row.id,
          claim: row.send_claim,
          err: errorMessage(error),
        });
      // No answer in time, the connection lost once the request may have gone out, or a 2xx answer we could not read
      // (cut off): the platform may have the message. The claim stays (in doubt: its status webhook links it, or it is
      // sent again after SEND_IN_DOUBT_MS); any other answer, or no connection at all, was a refusal.
      const unknownOutcome = answerLost(error);
      if ((retryable || unknownOutcome) && !lastAttempt) {
        await this.countAttempt(row, unknownOutcome);
        return { outcome: 'retry', error, retryAfterMs, timeout: unknownOutcome };
      }
      // the last attempt: a refusal is final, an unknown outcome is decided once its status webhook had time to come
      if (unknownOutcome) {
        await this.countAttempt(row, true);
        return { outcome: 'undecided', failure: failureOf(error) };
      }
      if (stopsEverySend(error) && (await this.holdCampaignOf(row, failureOf(error)))) return { outcome: 'held' };
      return this.markFailed(row.id, failureOf(error), !retryable);
    }
    try {
      await this.recordAccepted(row.id, wamid, answers);
    } catch (error) {
      return { outcome: 'unrecorded', wamid, error };
    }
    this.logger.debug({ msg: 'message accepted by the platform', messageId: row.id, wamid });
    return { outcome: 'accepted', wamid };
  }

  private recordAccepted(messageId: string, wamid: string, answers = this.acceptedWriter): Promise<void> {
    return answers.add({ messageId, wamid });
  }

  /** Records the platform's answers of concurrent sends in one UPDATE (rows locked in id order: no deadlocks with status writes). */
  private async writeAccepted(items: Array<{ messageId: string; wamid: string }>): Promise<void> {
    await namedQuery(
      this.db,
      'messages_accepted',
      `WITH answer AS (SELECT * FROM unnest($1::uuid[], $2::text[]) AS x(id, wamid)),
            locked AS (SELECT m.id FROM messages m WHERE m.id IN (SELECT id FROM answer) ORDER BY m.id FOR UPDATE)
       UPDATE messages m SET wamid = answer.wamid, status = CASE WHEN message_status_rank(m.status) < 1 THEN 'accepted' ELSE m.status END,
              accepted_at = COALESCE(m.accepted_at, now()), attempts = m.attempts + 1, updated_at = now()
         FROM answer JOIN locked ON locked.id = answer.id
        WHERE m.id = answer.id`,
      [items.map((i) => i.messageId), items.map((i) => i.wamid)],
    );
  }

  /**
   * A campaign message refused for a cause every send meets (see stopsEverySend): its campaign is paused with the
   * platform's reason, and this message with the rest of the unsent ones waits for the resume (a definite refusal:
   * not in doubt, sent again after the resume). True when the message is held so; false for any other message (an API
   * or automation send fails: its caller hears of it), or when its campaign no longer runs (an API trigger of a
   * completed campaign).
   */
  private async holdCampaignOf(row: SendRow, failure: SendFailure): Promise<boolean> {
    const [message]: Array<{ campaign_id: string | null }> = await this.db.query(
      `SELECT campaign_id FROM messages WHERE id = $1`,
      [row.id],
    );
    if (!message?.campaign_id) return false;
    await this.countAttempt(row, false);
    // the token may be replaced and the campaign resumed within the 30 s this client is kept: read it again then
    this.numbers.delete(String(row.phone_number_id));
    const template = (row.payload.template as { name?: string } | undefined)?.name;
    const templateStatus = { 132015: 'PAUSED', 132016: 'DISABLED' }[failure.code];
    // a paused template reads as when the fan-out finds it so (whichever sees it first pauses the campaign)
    const reason =
      template && templateStatus
        ? `Template ${template}: ${notApprovedReason(templateStatus)}`
        : `The platform refuses this number's sends (${failure.code}: ${failure.details || failure.title}); resume once it is fixed`;
    await this.campaignHolds.hold(String(message.campaign_id), reason);
    // paused by this hold, or by another refused message's a moment ago (the campaign no longer runs then)
    const [now]: Array<{ status: string }> = await this.db.query(`SELECT status FROM messages WHERE id = $1`, [row.id]);
    if (now?.status !== 'paused') return false;
    this.logger.warn({ msg: 'campaign message held: the platform refuses every send', messageId: row.id, reason });
    return true;
  }

  /** An attempt without an answer to record; the claim stays when the platform may have the message (in doubt). */
  private async countAttempt(row: SendRow, inDoubt: boolean): Promise<void> {
    await this.db.query(
      `UPDATE messages SET attempts = attempts + 1, claimed_at = CASE WHEN $3 THEN claimed_at END
        WHERE id = $1 AND send_claim = $2`,
      [row.id, row.send_claim, inDoubt],
    );
  }

  /**
   * Messages whose last platform call got no readable answer: those still unsent once no longer in doubt (no status
   * webhook linked them) are recorded failed; those still in doubt are returned (`left`), to be looked at again.
   */
  private async decide(
    undecided: Record<string, SendFailure>,
  ): Promise<{ left: Record<string, SendFailure>; failed: number; recheckInMs: number }> {
    const unsent = (await this.readRows(Object.keys(undecided))).filter(isUnsent);
    const { waiting, recheckInMs } = await this.inDoubt(
      unsent.filter((r) => r.claimed_at),
      'recorded failed',
    );
    const held = new Set(waiting.map((r) => r.id));
    const decided = unsent.filter((r) => !held.has(r.id));
    for (const row of decided) await this.markFailed(row.id, undecided[row.id]);
    return {
      left: Object.fromEntries(waiting.map((r) => [r.id, undecided[r.id]])),
      failed: decided.length,
      recheckInMs,
    };
  }

  /**
   * A job run again after a run that may have recorded failures and ended before their `failed` callbacks were queued
   * (its worker died: the job stalled; or queueing a callback failed) queues the callbacks of the failures the send
   * path recorded (no wamid) in the last 10 minutes. A callback's job id (message + event) makes one still kept in the
   * queue a no-op. Best effort: the send itself goes on whatever happens here.
   */
  private async followUpFailures(job: Job, messageIds: string[]): Promise<void> {
    if (!job.stalledCounter && !job.failedReason?.includes(CALLBACK_NOT_QUEUED)) return;
    try {
      const failed: Array<Record<string, any>> = await this.db.query(
        `SELECT id, account_id, callback_url, callback_events, recipient, failed_at FROM messages
          WHERE id = ANY($1::uuid[]) AND status = 'failed' AND wamid IS NULL AND 'failed' = ANY(callback_events)
            AND failed_at > now() - interval '10 minutes'`,
        [messageIds],
      );
      for (const row of failed) await this.notifyFailed(row);
    } catch (error) {
      this.logger.warn({ msg: 'failed callbacks not followed up', job: job.id, err: errorMessage(error) });
    }
  }

  /**
   * A final failure: the message becomes `failed` (code, title, details) and its `failed` callback is queued. A
   * `refused` one (the platform's definite answer to our call) is failed even if a pause or cancel held it while the
   * call was out: kept `paused` with its claim, a resume would take it as in doubt and send it again after the wait.
   */
  private async markFailed(
    messageId: string,
    { code, title, details }: SendFailure,
    refused = false,
  ): Promise<Delivery> {
    this.logger.debug({ msg: 'message failed', messageId, code, title });
    // the status and its message.status account event in one transaction (the event exists exactly when the failure does)
    const failed = await this.db.transaction(async (tx) => {
      const [[row]] = (await tx.query(
        `UPDATE messages SET status = 'failed', error_code = $2, error_title = $3, error_message = $4, failed_at = COALESCE(failed_at, now()),
                attempts = attempts + 1, updated_at = now()
         WHERE id = $1 AND (status = 'queued' OR ($5 AND status IN ('paused', 'cancelled') AND wamid IS NULL))
         RETURNING id, account_id, callback_url, callback_events, recipient, failed_at, wamid, contact_id, phone_number_id`,
        [messageId, code || null, title, details, refused],
      )) as [Array<Record<string, any>>, number];
      if (row) {
        row.messaging_phone_id = (await this.accounts.phoneNumberById(String(row.phone_number_id)))?.messagingPhoneId;
        const event: StatusEvent = {
          kind: 'status',
          phoneNumberId: row.messaging_phone_id,
          wamid: row.wamid ?? '',
          status: 'failed',
          timestamp: new Date(row.failed_at).getTime() / 1000,
          recipientId: row.recipient,
          errors: [{ code, title, message: title, details }],
        };
        await recordWebhookEvent(tx, {
          accountId: row.account_id,
          type: 'message.status',
          data: messageStatusData(event, { messageId: row.id, recipient: row.recipient }),
        });
      }
      return row;
    });
    if (failed) {
      if (failed.contact_id !== null)
        // the inbox's failed tick (best effort, like every live event)
        await this.inboxEvents
          .messageStatus(
            String(failed.account_id),
            {
              contactId: String(failed.contact_id),
              contactNumber: failed.recipient,
              messagingPhoneId: failed.messaging_phone_id,
            },
            { messageId: failed.id, status: 'failed', at: new Date(failed.failed_at).toISOString() },
          )
          .catch(() => undefined);
      await this.notifyFailed(failed).catch((error: unknown) => {
        throw new Error(`${CALLBACK_NOT_QUEUED} (message ${failed.id}): ${errorMessage(error)}`);
      });
    }
    return { outcome: 'failed', code };
  }

  private notifyFailed(row: Record<string, any>): Promise<boolean> {
    return this.callbacks.notify(
      {
        messageId: row.id,
        accountId: String(row.account_id),
        callbackUrl: row.callback_url,
        callbackEvents: row.callback_events,
        recipient: row.recipient,
      },
      'failed',
      new Date(row.failed_at),
    );
  }

  private numberInfo(phoneRowId: string): Promise<NumberInfo> {
    const cached = this.numbers.get(phoneRowId);
    if (cached) return cached;
    const loading = (async () => {
      const connection = await this.accounts.connectionFor(phoneRowId);
      const phone = await this.accounts.phoneNumberById(phoneRowId);
      return {
        client: new CloudApiClient(connection),
        messagesPerSecond: Number(phone?.messagesPerSecond ?? 80),
        until: Date.now() + 30_000,
      };
    })();
    this.numbers.set(phoneRowId, loading);
    loading.then(
      (info) =>
        setTimeout(
          () => this.numbers.get(phoneRowId) === loading && this.numbers.delete(phoneRowId),
          Math.max(0, info.until - Date.now()),
        ).unref(),
      () => this.numbers.delete(phoneRowId),
    );
    return loading;
  }

  /** Queues messages stored but never queued (or whose job was lost); idempotent thanks to the job ids. */
  async sweep(): Promise<number> {
    const rows: Array<{ id: string; queue: string | null; send_job: string | null }> = await this.db.query(
      `SELECT id, queue, send_job FROM messages WHERE queued AND created_at < now() - ($1 || ' milliseconds')::interval ORDER BY created_at LIMIT 10000`,
      [String(SWEEP_MIN_AGE_MS)],
    );
    // A queued message without a job may have lost it after reaching the platform (e.g. a job failed after too many
    // stalls): if it was claimed, it goes through the in-doubt wait before any platform call.
    await this.sends.requeue(
      rows.filter((r) => r.queue !== 'bulk'),
      'api',
    );
    await this.sends.requeue(
      rows.filter((r) => r.queue === 'bulk'),
      'bulk',
    );
    return rows.length;
  }

  startSweeping() {
    if (this.sweeping) return;
    if (this.config.SEND_DEBUG) {
      // pacer counters and this process's event-loop lag every 5 s (a late wake-up gives its slot back)
      const lag = monitorEventLoopDelay({ resolution: 5 });
      lag.enable();
      let busy = performance.eventLoopUtilization();
      setInterval(() => {
        const utilization = performance.eventLoopUtilization(busy).utilization;
        busy = performance.eventLoopUtilization();
        const ms = (p: number) => (lag.percentile(p) / 1e6).toFixed(0);
        this.logger.warn(
          `pacer ${JSON.stringify(this.pacer.stats)}; event loop busy ${(utilization * 100).toFixed(0)}%, lag p50/p90/p99 ${ms(50)}/${ms(90)}/${ms(99)} ms`,
        );
        lag.reset();
      }, 5000).unref();
    }
    const run = () =>
      this.sweep()
        .then((n) => n && this.logger.log(`Re-queued ${n} stored messages`))
        .catch((e) => this.logger.warn(`send sweep: ${e.message}`));
    // Once here at start, then once per period across all worker processes (a BullMQ job scheduler).
    this.sweeping = true;
    this.sweeps
      .register('send-recovery', SWEEP_EVERY_MS, run)
      .catch((e) => this.logger.warn(`send sweep scheduler: ${e.message}`));
    void run();
  }
}

const WORKER_OPTIONS = {
  lockDuration: 15_000,
  stalledInterval: 5_000,
  maxStalledCount: 5,
  settings: { backoffStrategy: sendBackoff },
};

/** API sends (the HTTP request waits for the answer). */
@Processor(QUEUES.sends, { ...WORKER_OPTIONS, concurrency: 50 })
export class SendProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly executor: SendExecutor,
    private readonly config: AppConfig,
  ) {
    super();
  }
  onApplicationBootstrap() {
    this.worker.concurrency = this.config.SEND_CONCURRENCY;
    this.executor.startSweeping();
  }
  process(job: Job<SendJobData>, token?: string) {
    if (job.name !== SEND_JOB) return Promise.resolve({ outcome: 'skipped', status: 'unknown job' });
    return inJobContext(job, () => this.executor.execute(job, token, 'api'));
  }
}

/** Campaign and automation sends: same pacer, lower priority. */
@Processor(QUEUES.bulkSends, { ...WORKER_OPTIONS, concurrency: 200 })
export class BulkSendProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly executor: SendExecutor,
    private readonly config: AppConfig,
  ) {
    super();
  }
  onApplicationBootstrap() {
    this.worker.concurrency = this.config.BULK_SEND_CONCURRENCY;
  }
  process(job: Job<SendJobData | SendBatchJobData>, token?: string) {
    if (job.name === SEND_BATCH_JOB)
      return inJobContext(job, () => this.executor.executeBatch(job as Job<SendBatchJobData>, token));
    if (job.name !== SEND_JOB) return Promise.resolve({ outcome: 'skipped', status: 'unknown job' });
    return inJobContext(job, () => this.executor.execute(job as Job<SendJobData>, token, 'bulk'));
  }
}
