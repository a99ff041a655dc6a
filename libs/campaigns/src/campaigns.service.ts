import { InjectQueue } from '@nestjs/bullmq';
import { BadRequestException, ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { ContactsService } from '@switchboard/contacts';
import { AppConfig, assertPublicTarget, PageRequest, pageOffset, QUEUES, validationException } from '@switchboard/core';
import { buildTemplateComponents, QueuedMessageRef, SendQueueService, TemplateForSend } from '@switchboard/messaging';
import { NO_TEMPLATE_FOUND, TemplatesService } from '@switchboard/templates';
import { Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import {
  CreateCampaignInput,
  mergeVariables,
  TriggerContact,
  validateCreateCampaign,
  validateTriggerBody,
} from './campaign-requests';
import type { CampaignStatus } from './campaign.entity';
import { addFanoutJobs, addFinishJob } from './fanout-jobs';

export const CAMPAIGN_NOT_FOUND = 'Campaign not found';
export const GROUPS_MISSING = 'Not all groups exist in the database for this account.';
/** Contacts accepted by one trigger request (the same cap as a bulk send). */
export const MAX_TRIGGER_CONTACTS = 1000;

export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel';
/** The state machine: which states each action leaves from, and where it goes. */
export const TRANSITIONS: Record<CampaignAction, { from: CampaignStatus[]; to: CampaignStatus }> = {
  start: { from: ['draft'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['draft', 'running', 'paused'], to: 'cancelled' },
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

/** The campaign's template as the send payload builder needs it (libs/templates' approved-template lookup), or the reason it cannot be sent. */
export async function approvedTemplate(
  templates: TemplatesService,
  accountId: string,
  name: string,
  language: string,
): Promise<TemplateForSend | string> {
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
  };
}

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
    const [row] = await this.db.query(
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
    return this.find(accountId, String(row.id));
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

  /** messaging_phone_id of each campaign's number (libs/accounts). */
  private async withMessagingPhoneIds(rows: Array<Omit<CampaignRow, 'messaging_phone_id'>>): Promise<CampaignRow[]> {
    const numbers = await this.accounts.phoneNumbersByIds(rows.map((r) => String(r.phone_number_id)));
    return rows.map((r) => ({
      ...r,
      messaging_phone_id: numbers.get(String(r.phone_number_id))?.messagingPhoneId ?? '',
    }));
  }

  /**
   * Live counts: the audience, recipients by state, and messages by delivery status (they move with the platform's
   * webhooks). Read from campaign_counts, which triggers keep in step with every write (see its migration).
   */
  async progress(campaignId: string): Promise<CampaignProgress> {
    const rows: Array<{ counter: string; n: string }> = await this.db.query(
      `SELECT counter, n FROM campaign_counts WHERE campaign_id = $1`,
      [campaignId],
    );
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

  // ------------------------------------------------------------------ state machine

  async transition(accountId: string, campaignId: string, action: CampaignAction): Promise<CampaignRow> {
    const rule = TRANSITIONS[action];
    const jobs: Array<{ triggerId: string; batch: number }> = [];
    let requeue: QueuedMessageRef[] = [];
    let finish = false;
    await this.db.transaction(async (tx) => {
      const c = await this.find(accountId, campaignId, tx, true);
      if (!rule.from.includes(c.status)) {
        throw new ConflictException({
          message: `Cannot ${action} campaign ${campaignId}: it is ${c.status} (${action} is allowed from ${rule.from.join(' or ')})`,
          status: c.status,
        });
      }
      if (action === 'start') {
        const template = await approvedTemplate(this.templates, accountId, c.template_name, c.template_language);
        if (typeof template === 'string')
          throw new ConflictException({ message: `Cannot start campaign ${campaignId}: ${template}` });
        if (c.group_ids.length) {
          // the group audience gets the defaults: they must fill the template (API triggers may add per-contact variables)
          const built = buildTemplateComponents(template, {
            variables: c.variables,
            mediaUrl: c.media_url ?? undefined,
            documentName: c.document_name ?? undefined,
          });
          if (!built.ok)
            throw new ConflictException({
              message: `Cannot start campaign ${campaignId}: the campaign's variables do not fill the template: ${built.reason}`,
            });
        }
        const [t] = await tx.query(
          `INSERT INTO campaign_triggers (campaign_id, kind) VALUES ($1, 'start') RETURNING id`,
          [campaignId],
        );
        jobs.push({ triggerId: String(t.id), batch: 0 });
        await tx.query(
          `UPDATE campaigns SET status = 'running', started_at = now(), updated_at = now() WHERE id = $1`,
          [campaignId],
        );
      } else if (action === 'pause') {
        await tx.query(`UPDATE campaigns SET status = 'paused', updated_at = now() WHERE id = $1`, [campaignId]);
        // Sends not yet handed to the platform wait too (the send worker skips messages that are not `queued`).
        await this.sends.holdCampaign(tx, campaignId);
      } else if (action === 'resume') {
        await tx.query(`UPDATE campaigns SET status = 'running', updated_at = now() WHERE id = $1`, [campaignId]);
        requeue = await this.sends.releaseCampaign(tx, campaignId);
        const triggers: Array<{ id: string; batches_done: number }> = await tx.query(
          `SELECT id, batches_done FROM campaign_triggers WHERE campaign_id = $1 AND status = 'running'`,
          [campaignId],
        );
        jobs.push(...triggers.map((t) => ({ triggerId: String(t.id), batch: t.batches_done })));
        finish = true; // a no-op while the start fan-out still runs
      } else {
        await tx.query(
          `UPDATE campaigns SET status = 'cancelled', completed_at = now(), updated_at = now() WHERE id = $1`,
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
      await addFanoutJobs(this.queue, jobs);
      if (requeue.length) await this.enqueueSends(requeue);
      if (finish) await addFinishJob(this.queue, campaignId, 500);
    } catch (error) {
      this.logger.warn(
        `campaign ${campaignId} ${action}: queueing deferred to the worker's sweep: ${(error as Error).message}`,
      );
    }
    return this.find(accountId, campaignId);
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
    if (campaign.status === 'cancelled')
      throw new ConflictException({
        message: `Campaign ${campaignId} is cancelled: it cannot be triggered`,
        status: campaign.status,
      });
    const { value, errors } = validateTriggerBody(raw, MAX_TRIGGER_CONTACTS);
    if (!value) throw validationException(errors);
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 200)) {
      throw validationException([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 200 characters' }]);
    }
    const template = await approvedTemplate(
      this.templates,
      accountId,
      campaign.template_name,
      campaign.template_language,
    );
    if (typeof template === 'string')
      throw new ConflictException({ message: `Campaign ${campaignId} cannot send: ${template}` });
    // Every contact's message must be buildable before anything is written.
    const merged = value.map((c) => mergeVariables(campaign.variables, c.variables));
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
      const added: Array<{ contact_id: string }> = await tx.query(
        `INSERT INTO campaign_audience (campaign_id, contact_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING RETURNING contact_id`,
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
