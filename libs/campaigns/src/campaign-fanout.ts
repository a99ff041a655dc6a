import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { ContactsService } from '@switchboard/contacts';
import { AppConfig, inJobContext, PeriodicSweeps, QUEUES } from '@switchboard/core';
import {
  buildTemplateComponents,
  CampaignHolds,
  OutboundMessage,
  QueuedMessageRef,
  SendQueueService,
  TemplateForSend,
} from '@switchboard/messaging';
import { templateMessage } from '@switchboard/whatsapp';
import { TemplatesService } from '@switchboard/templates';
import { campaignCompletedData, recordWebhookEvent } from '@switchboard/webhooks';
import { DelayedError, Job, Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { hasFieldVariables, resolveVariables, VariableContact } from './campaign-requests';
import { approvedTemplate, CampaignsService, templateGone } from './campaigns.service';
import {
  addFanoutJobs,
  addFinishJob,
  addScheduleJob,
  FANOUT_JOB,
  FanoutJobData,
  FINISH_JOB,
  SCHEDULE_JOB,
  ScheduleJobData,
} from './fanout-jobs';

/** Recipients expanded per fan-out job (one transaction: recipients + messages + cursor). */
export const FANOUT_BATCH = 1000;
/** Messages per send job: a batch's messages go to the send queue in chunks of this many (one job, one read each). */
export const SEND_CHUNK = 50;

/** The send job of chunk `chunk` of fan-out batch `batch` (stored in each message's send_job). */
export function sendChunkJobId(triggerId: string, batch: number, chunk: number): string {
  return `campaign-send-${triggerId}-${batch}-${chunk}`;
}
/**
 * How many of a campaign's messages may wait (`queued`) for the send pipeline. The send worker checks a message's
 * status when it picks the job up, before its pacer wait, so what still goes out after a pause is at most
 * min(backlog, send concurrency). Slow numbers: about 2 s of the rate (at least 20), so a pause holds within ~2 s.
 * Fast numbers (≥ 200/s): about 4 s of the rate (at most 5,000), a cushion that keeps the sender busy through a
 * fan-out hiccup on a loaded machine; the send worker's concurrency still bounds what escapes a pause.
 */
export function backlogLimit(messagesPerSecond: number): number {
  const seconds = messagesPerSecond >= 200 ? 4 : 2;
  return Math.min(5000, Math.max(20, Math.round(messagesPerSecond * seconds)));
}

/**
 * The backlog is topped up only once this much of it has gone out, so a fan-out batch is large (up to FANOUT_BATCH):
 * topped up whenever anything had gone, a campaign at 1,000/s ran a batch of ~25 recipients every 25 ms, and each
 * batch's fixed cost (its count of the backlog, its contacts query, four INSERTs) was paid per 25 recipients.
 */
export function refillSize(limit: number): number {
  return Math.min(FANOUT_BATCH, Math.ceil(limit / 2));
}

/** Sweep of running triggers without a job (a crash between commit and queueing, a lost job). */
const SWEEP_EVERY_MS = 30_000;

interface TriggerState {
  id: string;
  campaign_id: string;
  kind: 'start' | 'api';
  status: string;
  cursor: string;
  batches_done: number;
  account_id: string;
  phone_number_id: string;
  campaign_status: string;
  template_name: string;
  template_language: string;
  variables: Record<string, unknown>;
  media_url: string | null;
  document_name: string | null;
  callback_url: string | null;
  callback_events: string[];
  group_ids: string[];
}

export type BatchOutcome =
  | { kind: 'stale' }
  | { kind: 'held'; reason: string }
  | { kind: 'backlog'; queued: number }
  | { kind: 'expanded'; messages: QueuedMessageRef[]; done: boolean };

/**
 * The campaign fan-out. Each job expands one batch of one trigger (a `start` over the campaign's groups, or an API
 * trigger's recorded recipients): in one transaction it locks the trigger row, checks the batch is the next one
 * (`batches_done`), reads the next contacts after the cursor (keyset on contact id, never the whole audience), inserts
 * the recipients and their messages (status `queued`, `campaign_id`), and advances the cursor; then it hands the message
 * ids to the send pipeline (libs/messaging, `addBulk` on the bulk send queue) and queues the next batch's job.
 *
 * Crash safety: a batch is all or nothing; job ids are deterministic (`fanout-{trigger}-{batch}`); a job that finds its
 * batch already committed re-queues that batch's sends (idempotent: the send job id is the message id and the send
 * worker skips anything no longer `queued`) and makes sure the next job exists. The sweep (at boot and every 30 s)
 * re-adds the due job of every running trigger.
 *
 * Pacing: the fan-out stays about 2 seconds ahead of the number's rate (see backlogLimit), so pause takes effect quickly
 * and Redis never holds the whole campaign; batches are at most FANOUT_BATCH and never overfill the backlog.
 */
@Injectable()
export class CampaignFanoutService implements OnModuleInit {
  private readonly logger = new Logger(CampaignFanoutService.name);
  private sweeping = false;
  private readonly templates = new Map<string, { at: number; template: TemplateForSend | string }>();
  private readonly rates = new Map<string, { at: number; rate: number }>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.campaigns) private readonly queue: Queue,
    private readonly sends: SendQueueService,
    private readonly accounts: AccountsService,
    private readonly contacts: ContactsService,
    private readonly templateStore: TemplatesService,
    private readonly config: AppConfig,
    private readonly sweeps: PeriodicSweeps,
    private readonly campaigns: CampaignsService,
    private readonly holds: CampaignHolds,
  ) {}

  onModuleInit() {
    // the send worker pauses a campaign the platform stopped sending for (a revoked token, the template paused)
    this.holds.handleWith((campaignId, reason) => this.pauseFor(campaignId, reason));
  }

  /** A scheduled start (delayed job or sweep): CampaignsService decides under the campaign's row lock. */
  startScheduled(campaignId: string) {
    return this.campaigns.startScheduled(campaignId);
  }

  async runBatch(triggerId: string, batch: number): Promise<BatchOutcome> {
    const t = await this.state(this.db, triggerId);
    if (!t || t.status !== 'running') return { kind: 'stale' };
    if (t.campaign_status === 'cancelled') {
      await this.db.query(
        `UPDATE campaign_triggers SET status = 'cancelled', completed_at = now() WHERE id = $1 AND status = 'running'`,
        [triggerId],
      );
      return { kind: 'held', reason: 'cancelled' };
    }
    if (t.campaign_status === 'paused') return { kind: 'held', reason: 'paused' };
    if (t.kind === 'start' && t.campaign_status !== 'running') return { kind: 'held', reason: t.campaign_status };

    if (batch < t.batches_done) {
      // Our batch is committed (we crashed after the commit, or this is a replay): finish its hand-off, once more.
      if (batch === t.batches_done - 1) {
        const recipients: Array<{ message_id: string }> = await this.db.query(
          `SELECT r.message_id FROM campaign_recipients r WHERE r.campaign_id = $1 AND r.trigger_id = $2 AND r.batch = $3 AND r.message_id IS NOT NULL`,
          [t.campaign_id, triggerId, batch],
        );
        await this.sends.requeue(await this.sends.stillQueued(recipients.map((r) => r.message_id)), 'bulk');
        await addFanoutJobs(this.queue, [{ triggerId, batch: t.batches_done }]);
      }
      return { kind: 'stale' };
    }
    if (batch > t.batches_done) return { kind: 'stale' };

    const limit = backlogLimit(await this.messagesPerSecond(t.phone_number_id));
    const queued = await this.backlog(t.campaign_id);
    if (queued > limit - refillSize(limit)) return { kind: 'backlog', queued };

    const template = await this.template(t);
    if (typeof template === 'string' && !templateGone(template) && (await this.pauseFor(t.campaign_id, template)))
      return { kind: 'held', reason: template };
    const take = Math.min(FANOUT_BATCH, Math.max(10, limit - queued));
    const result = await this.db.transaction(async (tx) => this.expand(tx, triggerId, batch, template, take));
    if (result.kind === 'expanded') {
      if (result.messages.length) await this.sends.requeue(result.messages, 'bulk');
      if (!result.done) await addFanoutJobs(this.queue, [{ triggerId, batch: batch + 1 }]);
      else if (t.kind === 'start') await addFinishJob(this.queue, t.campaign_id);
    }
    return result;
  }

  /**
   * running → paused by the campaign itself, with the reason: its template stopped being APPROVED (Meta pauses a
   * template for its quality, and may reinstate it), or the platform refused a send for a cause every send meets (the
   * send worker, through CampaignHolds: a revoked token, the account locked). Its queued messages are held as by a
   * pause, and a resume checks the template again. Failing the recipients instead would burn the whole audience in
   * seconds. False when the campaign is not running (an API trigger of a completed campaign: its recipients fail
   * with the reason).
   */
  private async pauseFor(campaignId: string, reason: string): Promise<boolean> {
    const paused = await this.db.transaction(async (tx) => {
      const [rows] = await tx.query(
        `UPDATE campaigns SET status = 'paused', paused_reason = $2, updated_at = now()
          WHERE id = $1 AND status = 'running' RETURNING id`,
        [campaignId, reason],
      );
      if (rows.length) await this.sends.holdCampaign(tx, campaignId);
      return rows.length > 0;
    });
    if (paused) this.logger.warn({ msg: 'campaign paused itself', campaignId, reason });
    return paused;
  }

  /** A running campaign whose start fan-out is done becomes `completed` once none of its messages wait to be sent. */
  async finish(campaignId: string): Promise<'completed' | 'waiting' | 'stale'> {
    const [c] = await this.db.query(
      `SELECT c.status, EXISTS (SELECT 1 FROM campaign_triggers t WHERE t.campaign_id = c.id AND t.kind = 'start' AND t.status = 'running') AS expanding
         FROM campaigns c WHERE c.id = $1`,
      [campaignId],
    );
    if (!c || c.status !== 'running' || c.expanding) return 'stale';
    if ((await this.backlog(campaignId)) > 0) return 'waiting';
    await this.db.transaction(async (tx) => {
      const [[done]] = await tx.query(
        `UPDATE campaigns SET status = 'completed', completed_at = now(), updated_at = now()
          WHERE id = $1 AND status = 'running'
          RETURNING id, account_id, name, template_name, template_language, started_at, completed_at, phone_number_id`,
        [campaignId],
      );
      if (!done) return;
      const phone = await this.accounts.phoneNumberById(String(done.phone_number_id));
      const data = campaignCompletedData({ ...done, messaging_phone_id: phone?.messagingPhoneId ?? '' });
      await recordWebhookEvent(tx, { accountId: done.account_id, type: 'campaign.completed', data });
    });
    return 'completed';
  }

  private async expand(
    tx: EntityManager,
    triggerId: string,
    batch: number,
    template: TemplateForSend | string,
    take: number,
  ): Promise<BatchOutcome> {
    // Lock order: the campaign (shared: the state machine's FOR NO KEY UPDATE waits for us, and we see its outcome), then the trigger.
    await tx.query(
      `SELECT c.id FROM campaigns c WHERE c.id = (SELECT campaign_id FROM campaign_triggers WHERE id = $1) FOR SHARE`,
      [triggerId],
    );
    const t = await this.state(tx, triggerId, true);
    if (!t || t.status !== 'running' || t.batches_done !== batch) return { kind: 'stale' };
    if (
      t.campaign_status === 'cancelled' ||
      t.campaign_status === 'paused' ||
      (t.kind === 'start' && t.campaign_status !== 'running')
    ) {
      return { kind: 'held', reason: t.campaign_status };
    }
    const campaignId = t.campaign_id;

    // The next contacts after the cursor (keyset on contact id, never the whole audience): group members for a start
    // (without the contacts this campaign already reached through API triggers), the recorded recipients of an API trigger.
    let rows: Array<{
      contact_id: string;
      contact_number: string;
      is_blocked: boolean;
      variables: string | null;
      contact?: VariableContact;
    }>;
    let last: string | undefined;
    if (t.kind === 'start') {
      const members = await this.contacts.groupAudienceAfter(tx, t.account_id, t.group_ids, t.cursor, take);
      last = members.at(-1)?.id;
      // Only the members this batch adds to the audience are sent: one an API trigger reached is in it already. The
      // INSERT, unlike a read, waits for a trigger adding the same contact in a transaction not yet committed, and then
      // skips it (a read would not see that trigger's rows, and both would send). Members come in id order, as the
      // trigger's contacts do: the two never wait on each other in opposite orders.
      const added: Array<{ contact_id: string }> = members.length
        ? await tx.query(
            `INSERT INTO campaign_audience (campaign_id, contact_id) SELECT $1, unnest($2::bigint[])
             ON CONFLICT DO NOTHING RETURNING contact_id`,
            [campaignId, members.map((m) => m.id)],
          )
        : [];
      const fresh = new Set(added.map((r) => String(r.contact_id)));
      rows = members
        .filter((m) => fresh.has(m.id))
        .map((m) => ({
          contact_id: m.id,
          contact_number: m.contactNumber,
          is_blocked: m.isBlocked,
          variables: null,
          contact: m,
        }));
    } else {
      const pending: Array<{ contact_id: string; variables: string | null }> = await tx.query(
        `SELECT r.contact_id, r.variables::text AS variables
           FROM campaign_recipients r
          WHERE r.campaign_id = $1 AND r.trigger_id = $2 AND r.status = 'pending' AND r.contact_id > $3
          ORDER BY r.contact_id
          LIMIT $4`,
        [campaignId, triggerId, t.cursor, take],
      );
      last = pending.at(-1)?.contact_id;
      const numbers = await this.contacts.numbersOf(
        tx,
        t.account_id,
        pending.map((r) => String(r.contact_id)),
      );
      rows = pending.flatMap((r) => {
        const c = numbers.get(String(r.contact_id));
        return c
          ? [
              {
                contact_id: String(r.contact_id),
                contact_number: c.contactNumber,
                is_blocked: c.isBlocked,
                variables: r.variables,
              },
            ]
          : [];
      });
    }

    if (last === undefined) {
      await tx.query(
        `UPDATE campaign_triggers SET status = 'completed', completed_at = now(), batches_done = $2 WHERE id = $1`,
        [triggerId, batch + 1],
      );
      return { kind: 'expanded', messages: [], done: true };
    }

    // one message body for the whole batch, unless some variable is taken from each contact
    const perContact = hasFieldVariables(t.variables);
    const defaults =
      t.kind === 'start' && typeof template !== 'string' && !perContact
        ? buildTemplateComponents(template, this.sendInput(t, resolveVariables(t.variables, null)))
        : null;
    const messages: OutboundMessage[] = [];
    const recipients: Array<{ contact_id: string; message_id: string | null; status: string; error: string | null }> =
      [];
    for (const r of rows) {
      const contactId = String(r.contact_id);
      if (r.is_blocked) {
        recipients.push({ contact_id: contactId, message_id: null, status: 'skipped_blocked', error: null });
        continue;
      }
      if (typeof template === 'string') {
        recipients.push({ contact_id: contactId, message_id: null, status: 'failed', error: template });
        continue;
      }
      const built =
        defaults ??
        buildTemplateComponents(
          template,
          this.sendInput(t, r.variables ? JSON.parse(r.variables) : resolveVariables(t.variables, r.contact ?? null)),
        );
      if (!built.ok) {
        recipients.push({ contact_id: contactId, message_id: null, status: 'failed', error: built.reason });
        continue;
      }
      const id = randomUUID();
      messages.push({
        id,
        accountId: t.account_id,
        phoneNumberId: t.phone_number_id,
        contactId,
        recipient: r.contact_number,
        kind: 'template',
        templateName: template.name,
        body: built.bodyText.length ? built.bodyText.join(' | ') : null,
        payload: templateMessage(r.contact_number, template.name, template.language, built.components),
        callbackUrl: t.callback_url,
        callbackEvents: t.callback_url ? t.callback_events : [],
        campaignId,
        sendJob: sendChunkJobId(triggerId, batch, Math.floor(messages.length / SEND_CHUNK)),
      });
      recipients.push({ contact_id: contactId, message_id: id, status: 'queued', error: null });
    }

    const cols = [
      recipients.map((r) => r.contact_id),
      recipients.map((r) => r.message_id),
      recipients.map((r) => r.status),
      recipients.map((r) => r.error),
    ];
    if (t.kind === 'start') {
      await tx.query(
        `INSERT INTO campaign_recipients (campaign_id, trigger_id, contact_id, message_id, status, error, batch)
         SELECT $1, $2, x.contact_id, x.message_id, x.status, x.error, $3
           FROM unnest($4::bigint[], $5::uuid[], $6::text[], $7::text[]) AS x(contact_id, message_id, status, error)
         ON CONFLICT DO NOTHING`,
        [campaignId, triggerId, batch, ...cols],
      );
    } else {
      await tx.query(
        `UPDATE campaign_recipients r SET message_id = x.message_id, status = x.status, error = x.error, batch = $3
           FROM unnest($4::bigint[], $5::uuid[], $6::text[], $7::text[]) AS x(contact_id, message_id, status, error)
          WHERE r.campaign_id = $1 AND r.trigger_id = $2 AND r.contact_id = x.contact_id`,
        [campaignId, triggerId, batch, ...cols],
      );
    }
    // messages last (libs/messaging's one INSERT, in this transaction): their counter rows (campaign_counts, via trigger)
    // stay locked only until the commit just after
    if (messages.length) await this.sends.insert(messages, 'bulk', tx);
    const blocked = recipients.filter((r) => r.status === 'skipped_blocked').length;
    await tx.query(
      `UPDATE campaign_triggers SET cursor = $2, batches_done = $3,
              recipients = recipients + CASE WHEN kind = 'start' THEN $4::int ELSE 0 END,
              skipped_blocked = skipped_blocked + CASE WHEN kind = 'start' THEN $5::int ELSE 0 END
        WHERE id = $1`,
      [triggerId, last, batch + 1, recipients.length, blocked],
    );
    return { kind: 'expanded', messages: messages.map((m) => ({ id: m.id!, send_job: m.sendJob })), done: false };
  }

  private sendInput(t: TriggerState, variables: Record<string, unknown>) {
    return { variables, mediaUrl: t.media_url ?? undefined, documentName: t.document_name ?? undefined };
  }

  private async template(t: TriggerState): Promise<TemplateForSend | string> {
    const key = `${t.account_id}\u0000${t.template_name}\u0000${t.template_language}`;
    const cached = this.templates.get(key);
    if (cached && Date.now() - cached.at < 10_000) return cached.template;
    const template = await approvedTemplate(this.templateStore, t.account_id, t.template_name, t.template_language);
    // only an approved template is kept: a problem kept would pause the campaign again right after its resume
    if (typeof template === 'string') this.templates.delete(key);
    else this.templates.set(key, { at: Date.now(), template });
    return template;
  }

  private async state(
    db: DataSource | EntityManager,
    triggerId: string,
    lock = false,
  ): Promise<TriggerState | undefined> {
    const rows = await db.query(
      `SELECT t.id, t.campaign_id, t.kind, t.status, t.cursor, t.batches_done,
              c.account_id, c.phone_number_id, c.status AS campaign_status, c.template_name, c.template_language, c.variables,
              c.media_url, c.document_name, c.callback_url, c.callback_events, c.group_ids
         FROM campaign_triggers t JOIN campaigns c ON c.id = t.campaign_id
        WHERE t.id = $1${lock ? ' FOR UPDATE OF t' : ''}`,
      [triggerId],
    );
    return rows[0];
  }

  /**
   * How many of the campaign's messages wait to be sent (status `queued`): its counter row, which the triggers on
   * messages keep in step with every write (campaign_counts), not a count over the messages.
   */
  private async backlog(campaignId: string): Promise<number> {
    const [row] = await this.db.query(
      `SELECT n FROM campaign_counts WHERE campaign_id = $1 AND counter = 'messages:queued'`,
      [campaignId],
    );
    return row ? Number(row.n) : 0;
  }

  /** The number's configured send rate (libs/accounts), cached briefly: read once per batch. */
  private async messagesPerSecond(phoneNumberId: string): Promise<number> {
    const cached = this.rates.get(phoneNumberId);
    if (cached && Date.now() - cached.at < 10_000) return cached.rate;
    const rate = Number((await this.accounts.phoneNumberById(phoneNumberId))?.messagesPerSecond ?? 80);
    this.rates.set(phoneNumberId, { at: Date.now(), rate });
    return rate;
  }

  /** Re-adds the due job of every running trigger whose campaign may proceed (idempotent: deterministic job ids). */
  async sweep(): Promise<number> {
    const rows: Array<{ id: string; batches_done: number }> = await this.db.query(
      `SELECT t.id, t.batches_done FROM campaign_triggers t JOIN campaigns c ON c.id = t.campaign_id
        WHERE t.status = 'running' AND c.status <> 'paused' AND (t.kind = 'api' OR c.status = 'running' OR c.status = 'cancelled')`,
    );
    await addFanoutJobs(
      this.queue,
      rows.map((r) => ({ triggerId: String(r.id), batch: r.batches_done })),
    );
    const finishing: Array<{ id: string }> = await this.db.query(
      `SELECT c.id FROM campaigns c WHERE c.status = 'running'
          AND NOT EXISTS (SELECT 1 FROM campaign_triggers t WHERE t.campaign_id = c.id AND t.kind = 'start' AND t.status = 'running')`,
    );
    for (const f of finishing) await addFinishJob(this.queue, String(f.id));
    // scheduled campaigns: a job per campaign and time (a no-op when it exists; an overdue one runs at once)
    for (const s of await this.campaigns.scheduledCampaigns()) await addScheduleJob(this.queue, s.id, s.at);
    return rows.length;
  }

  startSweeping() {
    if (this.sweeping) return;
    this.sweeping = true;
    const run = () => this.sweep().catch((e) => this.logger.warn(`campaign sweep: ${(e as Error).message}`));
    // Once here at start, then once per period across all worker processes (a BullMQ job scheduler).
    this.sweeps
      .register('campaign-fanout', SWEEP_EVERY_MS, run)
      .catch((e) => this.logger.warn(`campaign sweep scheduler: ${(e as Error).message}`));
    void run();
  }
}

/**
 * Retries back off; a full backlog re-checks shortly (the job is delayed, not failed). A finishing campaign re-checks
 * its counter row every 100 ms (one indexed read), so it is completed within ~0.1 s of its last answer.
 */
const BACKLOG_RECHECK_MS = 250;
const FINISH_RECHECK_MS = 100;

@Processor(QUEUES.campaigns, { concurrency: 4, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 10 })
export class CampaignFanoutProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(CampaignFanoutProcessor.name);

  constructor(private readonly fanout: CampaignFanoutService) {
    super();
  }

  onApplicationBootstrap() {
    this.fanout.startSweeping();
  }

  /** A job out of retries is removed (fanout-jobs.ts); the sweep adds it again. Say so, with the cause. */
  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error) {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    this.logger.warn({
      msg: 'campaign job failed for good; the sweep will add it again',
      job: job.id,
      err: error.message,
    });
  }

  process(job: Job<FanoutJobData>, token?: string) {
    return inJobContext(job, () => this.handle(job, token));
  }

  private async handle(job: Job<FanoutJobData>, token?: string) {
    if (job.name === FINISH_JOB) {
      const outcome = await this.fanout.finish((job.data as unknown as { campaignId: string }).campaignId);
      if (outcome === 'waiting' && token) {
        await job.moveToDelayed(Date.now() + FINISH_RECHECK_MS, token);
        throw new DelayedError();
      }
      return { outcome };
    }
    if (job.name === SCHEDULE_JOB) {
      const outcome = await this.fanout.startScheduled((job.data as unknown as ScheduleJobData).campaignId);
      this.logger.log(`campaign ${(job.data as unknown as ScheduleJobData).campaignId}: scheduled start ${outcome}`);
      return { outcome };
    }
    if (job.name !== FANOUT_JOB) return { outcome: 'unknown job' };
    const result = await this.fanout.runBatch(job.data.triggerId, job.data.batch);
    if (result.kind === 'backlog' && token) {
      await job.moveToDelayed(Date.now() + BACKLOG_RECHECK_MS, token);
      throw new DelayedError();
    }
    if (result.kind === 'expanded' && result.done)
      this.logger.log(`trigger ${job.data.triggerId}: fan-out complete after ${job.data.batch} batch(es)`);
    return { outcome: result.kind };
  }
}
