import { InjectQueue } from '@nestjs/bullmq';
import { BadRequestException, ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { ContactsService } from '@switchboard/contacts';
import {
  AppConfig,
  assertPublicTarget,
  checkIdempotencyKey,
  FieldError,
  PageRequest,
  pageOffset,
  QUEUES,
  validationException,
} from '@switchboard/core';
import {
  buildTemplateComponents,
  missingMediaUrl,
  QueuedMessageRef,
  SendQueueService,
  TemplateForSend,
  templateElsewhere,
} from '@switchboard/messaging';
import { NO_TEMPLATE_FOUND, TemplatesService } from '@switchboard/templates';
import { queryPlan } from '@switchboard/core/database';
import { Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import {
  checkScheduledAt,
  CreateCampaignInput,
  hasFieldVariables,
  mergeVariables,
  resolveVariables,
  TriggerContact,
  validateCreateCampaign,
  validateTriggerBody,
} from './campaign-requests';
import type { CampaignStatus } from './campaign.entity';
import { addFanoutJobs, addFinishJob, addScheduleJob } from './fanout-jobs';

export const CAMPAIGN_NOT_FOUND = 'Campaign not found';
export const GROUPS_MISSING = 'Not all groups exist in the database for this account.';
/** Contacts accepted by one trigger request (the same cap as a bulk send). */
export const MAX_TRIGGER_CONTACTS = 1000;

export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel' | 'unschedule';
/** The state machine: which states each action leaves from, and where it goes. */
export const TRANSITIONS: Record<CampaignAction, { from: CampaignStatus[]; to: CampaignStatus }> = {
  start: { from: ['draft', 'scheduled'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  // a completed campaign may still be sending what API triggers asked for: cancel stops that too
  cancel: { from: ['draft', 'scheduled', 'running', 'paused', 'completed'], to: 'cancelled' },
  unschedule: { from: ['scheduled'], to: 'draft' },
};

export interface CampaignRow {
  id: string;
  account_id: string;
  phone_number_id: string;
  messaging_phone_id: string;
  name: string;
  template_name: string;
  template_language: string;
  variables: Record<string, unknown>;
  media_url: string | null;
  document_name: string | null;
  callback_url: string | null;
  callback_events: string[];
  group_ids: string[];
  status: CampaignStatus;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  scheduled_at: Date | null;
  schedule_error: string | null;
  paused_reason: string | null;
}

export interface CampaignProgress {
  audience: number;
  recipients: number;
  pending: number;
  queued: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  replied: number;
  skipped_blocked: number;
  cancelled: number;
}

const SELECT_CAMPAIGN = `SELECT c.* FROM campaigns c`;

/**
 * The SQL of GET /v2/campaigns/{id} (exported for test/bench/bare-server.ts, which runs it against the API): the
 * campaign and its counters (campaign_counts, a dozen rows) in one round trip; no row when it is not the account's.
 * The text never varies, so `name` can be a named prepared statement.
 */
export function campaignReportSql(accountId: string, campaignId: string) {
  return {
    name: 'campaign_report',
    sql: `SELECT c.*, COALESCE((SELECT json_agg(json_build_object('counter', k.counter, 'n', k.n))
                                  FROM campaign_counts k WHERE k.campaign_id = c.id), '[]') AS counters
            FROM campaigns c WHERE c.account_id = $1 AND c.id = $2`,
    params: [accountId, campaignId],
  };
}

/** The campaign (without its messaging phone id: libs/accounts has it) and progress of campaignReportSql's rows. */
export function campaignReportRow(
  rows: Array<Record<string, unknown>>,
): { campaign: Omit<CampaignRow, 'messaging_phone_id'>; progress: CampaignProgress } | null {
  if (!rows[0]) return null;
  const { counters, ...campaign } = rows[0];
  return {
    campaign: campaign as unknown as Omit<CampaignRow, 'messaging_phone_id'>,
    progress: campaignProgress(counters as Array<{ counter: string; n: string | number }>),
  };
}

/** A campaign's progress from its campaign_counts rows. */
export function campaignProgress(rows: Array<{ counter: string; n: string | number }>): CampaignProgress {
  const counts = new Map(rows.map((r) => [r.counter, Number(r.n)]));
  const sum = (...counters: string[]) => counters.reduce((total, c) => total + (counts.get(c) ?? 0), 0);
  const recipients = rows
    .filter((r) => r.counter.startsWith('recipients:'))
    .reduce((total, r) => total + Number(r.n), 0);
  return {
    audience: sum('audience'),
    recipients,
    pending: sum('recipients:pending'),
    queued: sum('messages:queued', 'messages:paused'),
    sent: sum('messages:accepted', 'messages:sent', 'messages:delivered', 'messages:read'),
    delivered: sum('messages:delivered', 'messages:read'),
    read: sum('messages:read'),
    failed: sum('messages:failed', 'recipients:failed'),
    replied: sum('messages:replied'),
    skipped_blocked: sum('recipients:skipped_blocked'),
    cancelled: sum('messages:cancelled', 'recipients:cancelled'),
  };
}

/** The campaign's template as the send payload builder needs it (libs/templates' approved-template lookup), or the reason it cannot be sent. */
export async function approvedTemplate(
  templates: TemplatesService,
  accountId: string,
  name: string,
  language: string,
): Promise<(TemplateForSend & { phoneNumberId: string }) | string> {
  const found = await templates.findApprovedForSend(accountId, name, language);
  if (!found.ok)
    return found.reason === NO_TEMPLATE_FOUND
      ? `Template ${name} (${language}) no longer exists`
      : `Template ${name}: ${found.reason}`;
  const t = found.template;
  return {
    name: t.name,
    language: t.language,
    category: t.category,
    variables: t.variables,
    headerType: t.headerType,
    buttons: t.buttons ?? [],
    carousel: t.carousel ?? null,
    phoneNumberId: String(t.phoneNumberId),
  };
}

/** approvedTemplate's problem when the template is gone for good (not merely not APPROVED right now). */
export const templateGone = (problem: string) => problem.endsWith(' no longer exists');

const VARIABLES_PROBLEM = "the campaign's variables do not fill the template";

/** 409 for a trigger of a cancelled campaign. */
const cancelledConflict = (campaignId: string) =>
  new ConflictException({
    message: `Campaign ${campaignId} is cancelled: it cannot be triggered`,
    status: 'cancelled',
  });

/**
 * Campaigns (grant /campaigns): create, list, read with live progress, the state machine, and the trigger API. Writes
 * are durable before any queue call; the fan-out itself runs in the worker (CampaignFanoutService).
 */
@Injectable()
export class CampaignsService {
  private readonly logger = new Logger(CampaignsService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.campaigns) private readonly queue: Queue,
    private readonly accounts: AccountsService,
    private readonly templates: TemplatesService,
    private readonly config: AppConfig,
    private readonly sends: SendQueueService,
    private readonly contacts: ContactsService,
  ) {}

  // ------------------------------------------------------------------ create / read

  async create(accountId: string, raw: unknown): Promise<CampaignRow> {
    const { value, errors } = validateCreateCampaign(raw);
    if (!value) throw validationException(errors);
    const phone = await this.accounts.findPhoneNumber(accountId, value.messagingPhoneId);
    if (!phone)
      throw validationException([
        {
          field: 'messagingPhoneId',
          message: `messagingPhoneId ${value.messagingPhoneId} is not a connected number of this account (see GET /account/get)`,
        },
      ]);
    const found = await this.templates.findApprovedForSend(accountId, value.templateName);
    if (!found.ok)
      throw validationException([
        { field: 'templateName', message: `templateName ${value.templateName}: ${found.reason}` },
      ]);
    const elsewhere = await templateElsewhere(this.accounts, found.template.phoneNumberId, phone);
    if (elsewhere)
      throw validationException([
        { field: 'templateName', message: `templateName ${value.templateName}: ${elsewhere}` },
      ]);
    // no message of the campaign could be sent, and a campaign is not edited: refused now, not at its start
    const noMedia = missingMediaUrl(found.template, value.mediaUrl);
    if (noMedia) throw validationException([{ field: 'mediaUrl', message: noMedia }]);
    await this.checkUrls(value);
    if (value.groupIds.length) {
      const missing = await this.contacts.missingGroups(accountId, value.groupIds);
      if (missing.length) {
        throw new BadRequestException({
          statusCode: 400,
          message: GROUPS_MISSING,
          missingGroups: missing.map(Number),
          errors: [{ field: 'group_ids', message: GROUPS_MISSING }],
        });
      }
    }
    const at = value.scheduledAt;
    if (at) {
      // scheduled at once: it must be able to start, checked before anything is written (a 409 after the insert left
      // a draft behind on every retry)
      const problem = await this.startProblem(accountId, {
        phone_number_id: phone.id,
        template_name: found.template.name,
        template_language: found.template.language,
        group_ids: value.groupIds,
        variables: value.variables,
        media_url: value.mediaUrl,
        document_name: value.documentName,
      } as CampaignRow);
      if (problem)
        throw validationException([
          { field: problem.startsWith(VARIABLES_PROBLEM) ? 'variables' : 'templateName', message: problem },
        ]);
    }
    const id = await this.db.transaction(async (tx) => {
      const [row] = await tx.query(
        `INSERT INTO campaigns (account_id, phone_number_id, name, template_name, template_language, variables, media_url, document_name, callback_url, callback_events, group_ids)
         VALUES ($1, $2, $3, $4, $5, $6::json, $7, $8, $9, $10, $11::bigint[]) RETURNING id`,
        [
          accountId,
          phone.id,
          value.name,
          found.template.name,
          found.template.language,
          JSON.stringify(value.variables),
          value.mediaUrl,
          value.documentName,
          value.callbackUrl,
          value.events,
          value.groupIds,
        ],
      );
      // one transaction: a schedule refused leaves no campaign behind
      if (at) await this.scheduleIn(tx, accountId, String(row.id), at);
      return String(row.id);
    });
    if (at) await this.queueSchedule(id, at);
    return this.find(accountId, id);
  }

  async list(accountId: string, page: PageRequest): Promise<{ campaigns: CampaignRow[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.db.query(`${SELECT_CAMPAIGN} WHERE c.account_id = $1 ORDER BY c.id DESC LIMIT $2 OFFSET $3`, [
        accountId,
        page.pageSize,
        pageOffset(page),
      ]),
      this.db.query(`SELECT count(*)::int AS total FROM campaigns WHERE account_id = $1`, [accountId]),
    ]);
    return { campaigns: await this.withMessagingPhoneIds(rows), total };
  }

  /** The account's campaign, or 404 (also for another account's campaign or a malformed id). */
  async find(
    accountId: string,
    campaignId: string,
    db: DataSource | EntityManager = this.db,
    lock = false,
  ): Promise<CampaignRow> {
    if (!/^[1-9]\d{0,17}$/.test(campaignId))
      throw new NotFoundException({ message: CAMPAIGN_NOT_FOUND, campaign_id: campaignId });
    const rows = await db.query(
      `${SELECT_CAMPAIGN} WHERE c.account_id = $1 AND c.id = $2${lock ? ' FOR NO KEY UPDATE OF c' : ''}`,
      [accountId, campaignId],
    );
    if (!rows[0]) throw new NotFoundException({ message: CAMPAIGN_NOT_FOUND, campaign_id: campaignId });
    return (await this.withMessagingPhoneIds(rows))[0];
  }

  /** Any account's campaign by id (the worker's live snapshots), or null. */
  async byId(campaignId: string): Promise<CampaignRow | null> {
    const rows = await this.db.query(`${SELECT_CAMPAIGN} WHERE c.id = $1`, [campaignId]);
    return rows[0] ? (await this.withMessagingPhoneIds(rows))[0] : null;
  }

  async missingGroupIds(accountId: string, groupIds: string[]): Promise<string[]> {
    return this.contacts.missingGroups(accountId, groupIds);
  }

  /** Contacts a start would reach: members of the groups, blocked ones left out (libs/contacts). */
  async audienceCount(accountId: string, groupIds: string[]): Promise<{ contacts: number; blocked: number }> {
    return this.contacts.groupAudienceCount(accountId, groupIds);
  }

  /** messaging_phone_id of each campaign's number (libs/accounts). */
  private async withMessagingPhoneIds(rows: Array<Omit<CampaignRow, 'messaging_phone_id'>>): Promise<CampaignRow[]> {
    const numbers = await this.accounts.messagingPhoneIds(rows.map((r) => String(r.phone_number_id)));
    return rows.map((r) => ({ ...r, messaging_phone_id: numbers.get(String(r.phone_number_id)) ?? '' }));
  }

  /**
   * Live counts: the audience, recipients by state, and messages by delivery status (they move with the platform's
   * webhooks). Read from campaign_counts, which triggers keep in step with every write (see its migration).
   */
  async progress(campaignId: string): Promise<CampaignProgress> {
    return campaignProgress(
      await this.db.query(`SELECT counter, n FROM campaign_counts WHERE campaign_id = $1`, [campaignId]),
    );
  }

  /** GET /v2/campaigns/{id}: the account's campaign and its progress (campaignReportSql), or 404. */
  async report(accountId: string, campaignId: string): Promise<{ campaign: CampaignRow; progress: CampaignProgress }> {
    if (!/^[1-9]\d{0,17}$/.test(campaignId))
      throw new NotFoundException({ message: CAMPAIGN_NOT_FOUND, campaign_id: campaignId });
    const found = campaignReportRow(await queryPlan(this.db, campaignReportSql(accountId, campaignId)));
    if (!found) throw new NotFoundException({ message: CAMPAIGN_NOT_FOUND, campaign_id: campaignId });
    const [campaign] = await this.withMessagingPhoneIds([found.campaign]);
    return { campaign, progress: found.progress };
  }

  // ------------------------------------------------------------------ state machine

  async transition(accountId: string, campaignId: string, action: CampaignAction): Promise<CampaignRow> {
    const rule = TRANSITIONS[action];
    const jobs: Array<{ triggerId: string; batch: number }> = [];
    let requeue: QueuedMessageRef[] = [];
    let finish = false;
    const notFrom = (c: CampaignRow) =>
      new ConflictException({
        message: `Cannot ${action} campaign ${campaignId}: it is ${c.status} (${action} is allowed from ${rule.from.join(' or ')})`,
        status: c.status,
      });
    // A start or resume is checked first, before the row is locked: the checks read through other modules (their own
    // connections), and a transaction holding the lock while waiting for another connection of the pool can wait for
    // good once every connection is held that way (many starts or retries of one campaign at once).
    if (action === 'start' || action === 'resume') {
      const c = await this.find(accountId, campaignId);
      if (!rule.from.includes(c.status)) throw notFrom(c);
      const problem =
        action === 'start' ? await this.startProblem(accountId, c) : await this.sendingNowProblem(accountId, c);
      if (problem) throw new ConflictException({ message: `Cannot ${action} campaign ${c.id}: ${problem}` });
    }
    await this.db.transaction(async (tx) => {
      const c = await this.find(accountId, campaignId, tx, true);
      if (!rule.from.includes(c.status)) throw notFrom(c);
      if (action === 'start') {
        jobs.push(await this.beginStart(tx, c));
      } else if (action === 'unschedule') {
        await tx.query(`UPDATE campaigns SET status = 'draft', scheduled_at = NULL, updated_at = now() WHERE id = $1`, [
          campaignId,
        ]);
      } else if (action === 'pause') {
        await tx.query(`UPDATE campaigns SET status = 'paused', updated_at = now() WHERE id = $1`, [campaignId]);
        // Sends not yet handed to the platform wait too (the send worker skips messages that are not `queued`).
        await this.sends.holdCampaign(tx, campaignId);
      } else if (action === 'resume') {
        // checked above as a start: what paused it by itself (its template) or happened since (the number)
        await tx.query(
          `UPDATE campaigns SET status = 'running', paused_reason = NULL, updated_at = now() WHERE id = $1`,
          [campaignId],
        );
        requeue = await this.sends.releaseCampaign(tx, campaignId);
        const triggers: Array<{ id: string; batches_done: number }> = await tx.query(
          `SELECT id, batches_done FROM campaign_triggers WHERE campaign_id = $1 AND status = 'running'`,
          [campaignId],
        );
        jobs.push(...triggers.map((t) => ({ triggerId: String(t.id), batch: t.batches_done })));
        finish = true; // a no-op while the start fan-out still runs
      } else {
        await tx.query(
          `UPDATE campaigns SET status = 'cancelled', completed_at = COALESCE(completed_at, now()), updated_at = now()
            WHERE id = $1`,
          [campaignId],
        );
        await this.sends.cancelCampaign(tx, campaignId);
        await tx.query(
          `UPDATE campaign_recipients SET status = 'cancelled' WHERE campaign_id = $1 AND status = 'pending'`,
          [campaignId],
        );
        await tx.query(
          `UPDATE campaign_triggers SET status = 'cancelled', completed_at = now() WHERE campaign_id = $1 AND status = 'running'`,
          [campaignId],
        );
      }
    });
    // Committed: now queue. Should Redis fail here, the worker's sweep finds the running triggers and queued messages.
    try {
      await addFanoutJobs(this.queue, jobs, { resumed: action === 'resume' });
      if (requeue.length) await this.enqueueSends(requeue);
      if (finish) await addFinishJob(this.queue, campaignId, 500);
    } catch (error) {
      this.logger.warn(
        `campaign ${campaignId} ${action}: queueing deferred to the worker's sweep: ${(error as Error).message}`,
      );
    }
    return this.find(accountId, campaignId);
  }

  /** The campaign's template when it can send now, else why not (template no longer APPROVED, number disconnected). */
  private async sendable(
    accountId: string,
    c: CampaignRow,
  ): Promise<{ template: TemplateForSend & { phoneNumberId: string } } | { problem: string }> {
    const template = await approvedTemplate(this.templates, accountId, c.template_name, c.template_language);
    if (typeof template === 'string') return { problem: (await this.sendingProblem(c, null)) ?? template };
    const problem = await this.sendingProblem(c, template);
    return problem ? { problem } : { template };
  }

  /** Why the campaign cannot send now (as `sendable`), or null. */
  private async sendingNowProblem(accountId: string, c: CampaignRow): Promise<string | null> {
    const checked = await this.sendable(accountId, c);
    return 'problem' in checked ? checked.problem : null;
  }

  /** Why the campaign cannot start now (as `sendable`, or a group gone, or variables that do not fill it), or null. */
  private async startProblem(accountId: string, c: CampaignRow): Promise<string | null> {
    const checked = await this.sendable(accountId, c);
    if ('problem' in checked) return checked.problem;
    const { template } = checked;
    if (c.group_ids.length) {
      // a group deleted since the create: its members would silently not be sent (all gone: a campaign of nobody)
      const gone = await this.contacts.missingGroups(accountId, c.group_ids.map(String));
      if (gone.length) return `its contact group(s) ${gone.join(', ')} no longer exist (deleted since it was created)`;
      // the group audience gets the defaults (a contact field missing gives its fallback): they must fill the template
      const built = buildTemplateComponents(template, {
        variables: resolveVariables(c.variables, null),
        mediaUrl: c.media_url ?? undefined,
        documentName: c.document_name ?? undefined,
      });
      if (!built.ok) return `${VARIABLES_PROBLEM}: ${built.reason}`;
    }
    return null;
  }

  /**
   * Why the campaign cannot send now: its number disconnected since it was created, or its template (re-created since)
   * lives in another WhatsApp Business Account than the number. Null when it can.
   */
  private async sendingProblem(
    c: Pick<CampaignRow, 'phone_number_id' | 'template_name'>,
    template: { phoneNumberId: string } | null,
  ): Promise<string | null> {
    const phone = await this.accounts.phoneNumberById(String(c.phone_number_id));
    if (phone?.status !== 'CONNECTED')
      return `its number ${phone?.messagingPhoneId ?? ''} is not connected any more (see GET /account/get)`;
    const elsewhere = template && (await templateElsewhere(this.accounts, template.phoneNumberId, phone));
    return elsewhere ? `Template ${c.template_name}: ${elsewhere}` : null;
  }

  /**
   * draft|scheduled → running inside the caller's transaction (campaign row locked): the start trigger. The caller has
   * checked `startProblem` before taking the lock.
   */
  private async beginStart(tx: EntityManager, c: CampaignRow): Promise<{ triggerId: string; batch: number }> {
    const [t] = await tx.query(`INSERT INTO campaign_triggers (campaign_id, kind) VALUES ($1, 'start') RETURNING id`, [
      c.id,
    ]);
    await tx.query(
      `UPDATE campaigns SET status = 'running', started_at = now(), schedule_error = NULL, updated_at = now() WHERE id = $1`,
      [c.id],
    );
    return { triggerId: String(t.id), batch: 0 };
  }

  // ------------------------------------------------------------------ scheduling

  /**
   * POST /v2/campaigns/{id}/schedule {scheduledAt}: draft → scheduled, or a new time for a scheduled campaign. Checked
   * like a start (409 when it could not start now). Committed first, then a delayed job per (campaign, time); the
   * worker's sweep re-adds jobs for scheduled campaigns and starts overdue ones, so the start survives any restart.
   */
  async schedule(accountId: string, campaignId: string, raw: unknown): Promise<CampaignRow> {
    const errors: FieldError[] = [];
    const body = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (body.scheduledAt === undefined || body.scheduledAt === null)
      errors.push({
        field: 'scheduledAt',
        message: 'scheduledAt is required: an ISO 8601 time, e.g. 2026-12-01T09:00:00Z',
      });
    const at = checkScheduledAt(body.scheduledAt, errors);
    if (!at) throw validationException(errors);
    // checked like a start, before the row is locked (see `transition`)
    const before = await this.find(accountId, campaignId);
    this.schedulable(before, campaignId);
    const problem = await this.startProblem(accountId, before);
    if (problem) throw new ConflictException({ message: `Cannot schedule campaign ${campaignId}: ${problem}` });
    await this.db.transaction((tx) => this.scheduleIn(tx, accountId, campaignId, at));
    await this.queueSchedule(campaignId, at);
    return this.find(accountId, campaignId);
  }

  /** 409 unless the campaign is draft or scheduled. */
  private schedulable(c: CampaignRow, campaignId: string): void {
    if (c.status !== 'draft' && c.status !== 'scheduled')
      throw new ConflictException({
        message: `Cannot schedule campaign ${campaignId}: it is ${c.status} (schedule is allowed from draft or scheduled)`,
        status: c.status,
      });
  }

  /** draft|scheduled → scheduled at `at`, inside the caller's transaction (start checked before); 409 when neither. */
  private async scheduleIn(tx: EntityManager, accountId: string, campaignId: string, at: Date): Promise<void> {
    const c = await this.find(accountId, campaignId, tx, true);
    this.schedulable(c, campaignId);
    await tx.query(
      `UPDATE campaigns SET status = 'scheduled', scheduled_at = $2, schedule_error = NULL, updated_at = now() WHERE id = $1`,
      [campaignId, at],
    );
  }

  /** The delayed start job, after the commit; the worker's sweep adds it when this fails. */
  private async queueSchedule(campaignId: string, at: Date): Promise<void> {
    try {
      await addScheduleJob(this.queue, campaignId, at);
    } catch (error) {
      this.logger.warn(
        `campaign ${campaignId} schedule: queueing deferred to the worker's sweep: ${(error as Error).message}`,
      );
    }
  }

  /**
   * The worker, at the time (delayed job or sweep): starts the campaign if it is still scheduled and due. Exactly once:
   * the campaign row is locked and its status moves scheduled → running in the same transaction as the start trigger.
   * A start that cannot happen (template no longer APPROVED …) puts the campaign back to draft with `schedule_error`.
   */
  async startScheduled(campaignId: string): Promise<'started' | 'not-due' | 'stale' | 'failed'> {
    let job: { triggerId: string; batch: number } | null = null;
    // checked before the row is locked (see `transition`)
    const [pre] = await this.db.query(`SELECT account_id FROM campaigns WHERE id = $1 AND status = 'scheduled'`, [
      campaignId,
    ]);
    if (!pre) return 'stale';
    const problem = await this.startProblem(
      String(pre.account_id),
      await this.find(String(pre.account_id), campaignId),
    );
    const outcome = await this.db.transaction(async (tx) => {
      const [row] = await tx.query(
        `SELECT account_id, status, scheduled_at <= now() + interval '500 milliseconds' AS due FROM campaigns WHERE id = $1 FOR NO KEY UPDATE`,
        [campaignId],
      );
      if (!row || row.status !== 'scheduled') return 'stale' as const;
      if (!row.due) return 'not-due' as const;
      if (problem) {
        await tx.query(`UPDATE campaigns SET status = 'draft', schedule_error = $2, updated_at = now() WHERE id = $1`, [
          campaignId,
          `The scheduled start failed: Cannot start campaign ${campaignId}: ${problem}`,
        ]);
        return 'failed' as const;
      }
      job = await this.beginStart(tx, await this.find(String(row.account_id), campaignId, tx));
      return 'started' as const;
    });
    if (job) await addFanoutJobs(this.queue, [job]);
    return outcome;
  }

  /** Scheduled campaigns (for the worker's sweep): their ids and times. */
  async scheduledCampaigns(): Promise<Array<{ id: string; at: Date }>> {
    const rows: Array<{ id: string; scheduled_at: Date }> = await this.db.query(
      `SELECT id, scheduled_at FROM campaigns WHERE status = 'scheduled' ORDER BY scheduled_at LIMIT 10000`,
    );
    return rows.map((r) => ({ id: String(r.id), at: new Date(r.scheduled_at) }));
  }

  private async enqueueSends(messages: QueuedMessageRef[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 1000) await this.sends.requeue(messages.slice(i, i + 1000), 'bulk');
  }

  // ------------------------------------------------------------------ trigger API

  /**
   * SPEC §4 POST /campaigns/trigger_campaign-api/{campaign_id}: finds or creates each contact, adds it to the audience and
   * records it as a recipient (its variables over the campaign's defaults), all in one transaction with the trigger row;
   * then queues the fan-out. A repeated Idempotency-Key does nothing new. Without `includeExisting`, contacts already in
   * the audience are not sent again (so even a retry without a key does not send twice).
   */
  async trigger(
    accountId: string,
    campaignId: string,
    raw: unknown,
    includeExisting: boolean,
    idempotencyKey?: string,
  ): Promise<{ triggerId: string; created: boolean }> {
    const campaign = await this.find(accountId, campaignId);
    const { value, errors } = validateTriggerBody(raw, MAX_TRIGGER_CONTACTS);
    if (!value) throw validationException(errors);
    checkIdempotencyKey(idempotencyKey);
    // a retry of an accepted trigger (its answer lost) is answered as the first was, whatever happened since (the
    // campaign cancelled, its template paused): it was accepted
    if (idempotencyKey) {
      const [existing] = await this.db.query(
        `SELECT id FROM campaign_triggers WHERE campaign_id = $1 AND idempotency_key = $2`,
        [campaignId, idempotencyKey],
      );
      if (existing) return { triggerId: String(existing.id), created: false };
    }
    if (campaign.status === 'cancelled') throw cancelledConflict(campaignId);
    const template = await approvedTemplate(
      this.templates,
      accountId,
      campaign.template_name,
      campaign.template_language,
    );
    if (typeof template === 'string')
      throw new ConflictException({ message: `Campaign ${campaignId} cannot send: ${template}` });
    const problem = await this.sendingProblem(campaign, template);
    if (problem) throw new ConflictException({ message: `Campaign ${campaignId} cannot send: ${problem}` });
    // Every contact's message must be buildable before anything is written.
    // contact-field variables take the trigger's name / email and the known contact's custom fields (or their
    // fallback), the contact's own variables go over them
    const customFields = await this.customFieldsOf(accountId, campaign.variables, value);
    const merged = value.map((c) =>
      mergeVariables(
        resolveVariables(campaign.variables, {
          name: c.name,
          email: c.email,
          customFields: customFields.get(c.number),
        }),
        c.variables,
      ),
    );
    const buildErrors = value.flatMap((c, k) => {
      const built = buildTemplateComponents(template, {
        variables: merged[k],
        mediaUrl: campaign.media_url ?? undefined,
        documentName: campaign.document_name ?? undefined,
      });
      return built.ok
        ? []
        : [{ field: `contacts[${c.index}].variables`, message: `contacts[${c.index}].variables: ${built.reason}` }];
    });
    if (buildErrors.length) throw validationException(buildErrors);

    // One recipient per number: the first occurrence wins.
    const seen = new Set<string>();
    const unique: Array<{ contact: TriggerContact; variables: Record<string, string> }> = [];
    value.forEach((c, k) => {
      if (seen.has(c.number)) return;
      seen.add(c.number);
      unique.push({ contact: c, variables: merged[k] });
    });

    const result = await this.db.transaction(async (tx) => {
      // Read again under the campaign's row lock (shared; cancel takes it exclusively): a cancel that committed since
      // the read above is seen, one that comes later waits and then cancels what this transaction records.
      const [locked] = await tx.query(`SELECT status FROM campaigns WHERE id = $1 FOR SHARE`, [campaignId]);
      if (locked?.status === 'cancelled') throw cancelledConflict(campaignId);
      const [t] = await tx.query(
        `INSERT INTO campaign_triggers (campaign_id, kind, idempotency_key, include_existing, request, contacts)
         VALUES ($1, 'api', $2, $3, $4::json, $5)
         ON CONFLICT (campaign_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
        [
          campaignId,
          idempotencyKey ?? null,
          includeExisting,
          JSON.stringify({
            contacts: (raw as { contacts: unknown[] }).contacts,
            includeExistingContacts: includeExisting,
          }),
          value.length,
        ],
      );
      if (!t) {
        const [existing] = await tx.query(
          `SELECT id FROM campaign_triggers WHERE campaign_id = $1 AND idempotency_key = $2`,
          [campaignId, idempotencyKey],
        );
        return { triggerId: String(existing.id), created: false };
      }
      const triggerId = String(t.id);
      const contacts = await this.contacts.findOrCreateMany(
        tx,
        accountId,
        unique.map((u) => u.contact),
      );
      if (!contacts)
        throw new ConflictException({ message: 'Contacts changed while the trigger was being recorded; try again' });
      const ids = unique.map((u) => contacts.get(u.contact.number)!.id);
      // in id order, as the start's batches add theirs (campaign-fanout.ts): the two never wait on each other crosswise
      const added: Array<{ contact_id: string }> = await tx.query(
        `INSERT INTO campaign_audience (campaign_id, contact_id)
         SELECT $1, id FROM unnest($2::bigint[]) AS id ORDER BY id ON CONFLICT DO NOTHING RETURNING contact_id`,
        [campaignId, ids],
      );
      const newlyAdded = new Set(added.map((r) => String(r.contact_id)));
      const rows = unique
        .map((u, k) => ({ id: ids[k], blocked: contacts.get(u.contact.number)!.blocked, variables: u.variables }))
        .filter((r) => includeExisting || newlyAdded.has(r.id));
      if (rows.length) {
        await tx.query(
          `INSERT INTO campaign_recipients (campaign_id, trigger_id, contact_id, variables, status)
           SELECT $1, $2, x.contact_id, x.variables::json, x.status FROM unnest($3::bigint[], $4::text[], $5::text[]) AS x(contact_id, variables, status)
           ON CONFLICT DO NOTHING`,
          [
            campaignId,
            triggerId,
            rows.map((r) => r.id),
            rows.map((r) => JSON.stringify(r.variables)),
            rows.map((r) => (r.blocked ? 'skipped_blocked' : 'pending')),
          ],
        );
      }
      const blocked = rows.filter((r) => r.blocked).length;
      await tx.query(`UPDATE campaign_triggers SET recipients = $2, skipped_blocked = $3 WHERE id = $1`, [
        triggerId,
        rows.length,
        blocked,
      ]);
      return { triggerId, created: true };
    });
    try {
      await addFanoutJobs(this.queue, [{ triggerId: result.triggerId, batch: 0 }]);
    } catch (error) {
      // Durably accepted: the worker's sweep queues running triggers it finds without a job.
      this.logger.warn(
        `campaign ${campaignId} trigger ${result.triggerId}: fan-out queueing deferred to the worker's sweep: ${(error as Error).message}`,
      );
    }
    return result;
  }

  /** The custom fields of the trigger's contacts already known, by number; read only when a variable takes one. */
  private async customFieldsOf(
    accountId: string,
    variables: Record<string, unknown>,
    contacts: Array<{ number: string }>,
  ): Promise<Map<string, Record<string, unknown>>> {
    if (!hasFieldVariables(variables, 'custom.')) return new Map();
    return this.contacts.customFieldsByNumber(
      accountId,
      contacts.map((c) => c.number),
    );
  }

  private async checkUrls(value: CreateCampaignInput): Promise<void> {
    for (const field of ['callback_url', 'mediaUrl'] as const) {
      const url = field === 'callback_url' ? value.callbackUrl : value.mediaUrl;
      if (!url) continue;
      try {
        await assertPublicTarget(url, { allowPrivate: this.config.ALLOW_PRIVATE_NETWORK_TARGETS });
      } catch (error) {
        const reason =
          (error as NodeJS.ErrnoException).code === 'ENOTFOUND'
            ? 'its host does not resolve'
            : (error as Error).message;
        throw validationException([{ field, message: `${field} is not allowed: ${reason}` }]);
      }
    }
  }
}
