import { isDeepStrictEqual } from 'node:util';
import {
  BadGatewayException,
  BadRequestException,
  ConflictException,
  HttpException,
  Injectable,
  Logger,
  NotFoundException,
  Optional,
} from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AccountsService, PhoneNumber, recordAccountEvent } from '@switchboard/accounts';
import { LiveEvents, validationException } from '@switchboard/core';
import { advisoryLockHeld, namedQuery, queryPlan, withAdvisoryLock } from '@switchboard/core/database';
import {
  mayHaveBeenDone,
  CloudApiClient,
  CloudApiError,
  isRequestRefusedByPlatform,
  MessageTemplate,
  platformErrorBody,
  platformMessage,
  TemplateCategoryEvent,
  TemplateStatusEvent,
} from '@switchboard/whatsapp';
import { recordWebhookEvent } from '@switchboard/webhooks';
import { DataSource, EntityManager, In, IsNull, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { templateListPage, templateListSql } from './template-list';
import { compileComponents, CompiledTemplate, TEMPLATE_CATEGORIES } from './template-rules';
import { Template, TemplateCategoryValue, TemplateStatusValue } from './template.entity';
import { CreateTemplateBody, DEFAULT_PAGE_SIZE, ListTemplatesQuery, UpdateTemplateBody } from './templates.dto';

/** SPEC §7: create answers 200 with `data` a string in these two cases (nothing is submitted to the platform). */
export const TEMPLATE_NAME_TAKEN = 'Template name already exists';
export const PHONE_NUMBER_NOT_FOUND = 'Phone number not found';
export const TEMPLATE_NOT_FOUND = 'Template not found';
/** The reason messaging reports when a send names an unknown template (SPEC §4 send example). */
export const NO_TEMPLATE_FOUND = 'No Template found';
/** Why a template cannot be sent: its status (and Meta's reason for a rejection). */
export const notApprovedReason = (status: string, rejectedReason?: string | null) =>
  `Template is not approved (status ${status}${rejectedReason ? `: ${rejectedReason}` : ''})`;

/** The event type recorded in account_events for the account webhooks (SPEC §6 template_status_update). */
export const TEMPLATE_STATUS_UPDATE = 'template_status_update';
export const TEMPLATE_CATEGORY_UPDATE = 'template_category_update';

/** What the webhook processor passes for `template_category_update`. */
export type PlatformCategoryEvent = Pick<
  TemplateCategoryEvent,
  'templateId' | 'templateName' | 'language' | 'previousCategory' | 'newCategory' | 'correctCategory'
> & { wabaId?: string };

/** What the webhook processor passes: libs/whatsapp's parsed `message_template_status_update`. */
export type PlatformStatusEvent = Pick<
  TemplateStatusEvent,
  'templateId' | 'templateName' | 'language' | 'event' | 'reason'
> & { wabaId?: string };

export interface StatusChange {
  accountId: string;
  templateId: string;
  name: string;
  language: string;
  previousStatus: TemplateStatusValue;
  status: TemplateStatusValue;
  rejectedReason: string | null;
  platformStatus: string | null;
}

/** The lock an edit of a template holds across Meta's call. */
const editLockKey = (accountId: string, name: string) => `template-edits:${accountId}:${name}`;

/** The live events of an account's templates (libs/core LiveEvents), streamed by `GET /v2/template-events`. */
export const templateEventsTopic = (accountId: string) => `templates:${accountId}`;
export const TEMPLATE_STATUS_EVENT = 'template.status';
export type TemplateStatusSource = 'webhook' | 'sync' | 'status' | 'edit';
/** The data of a `template.status` event. */
export interface TemplateStatusLiveEvent {
  template_name: string;
  language: string;
  status: TemplateStatusValue;
  previous_status: TemplateStatusValue;
  rejected_reason: string | null;
  platform_status: string | null;
  source: TemplateStatusSource;
}

export type FindForSendResult = { ok: true; template: Template } | { ok: false; reason: string };

interface MappedStatus {
  status: TemplateStatusValue;
  rejectedReason: string | null;
  /** Meta's status when it is not one of the three SPEC states (kept for the detail view) */
  platformStatus: string | null;
}

/**
 * Meta's template statuses/events → SPEC §3's three states. null = no change (e.g. FLAGGED, which Meta
 * sends as a quality warning while the template stays sendable).
 * - APPROVED, REINSTATED → APPROVED
 * - PENDING, IN_APPEAL → PENDING
 * - REJECTED → REJECTED, rejected_reason = Meta's reason (INVALID_FORMAT, ...)
 * - PAUSED, DISABLED → kept as PAUSED / DISABLED (neither can be sent), rejected_reason = Meta's reason (null for NONE);
 *   a later APPROVED or REINSTATED brings it back
 * - LIMIT_EXCEEDED, PENDING_DELETION, DELETED, ARCHIVED → REJECTED (a template can be sent only when APPROVED),
 *   rejected_reason = the event (plus Meta's reason), platform_status = the event.
 */
export function mapPlatformStatus(event: string, reason?: string | null): MappedStatus | null {
  const e = String(event ?? '').toUpperCase();
  const why = reason && reason !== 'NONE' ? reason : null;
  switch (e) {
    case 'APPROVED':
    case 'REINSTATED':
      return { status: 'APPROVED', rejectedReason: null, platformStatus: null };
    case 'PENDING':
      return { status: 'PENDING', rejectedReason: null, platformStatus: null };
    case 'IN_APPEAL':
      return { status: 'PENDING', rejectedReason: null, platformStatus: e };
    case 'REJECTED':
      return { status: 'REJECTED', rejectedReason: why ?? 'NONE', platformStatus: null };
    case 'PAUSED':
    case 'DISABLED':
      return { status: e, rejectedReason: why, platformStatus: null };
    case 'LIMIT_EXCEEDED':
    case 'PENDING_DELETION':
    case 'DELETED':
    case 'ARCHIVED':
      return { status: 'REJECTED', rejectedReason: why ? `${e}: ${why}` : e, platformStatus: e };
    default:
      return null;
  }
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(workers);
  return out;
}

/** What a template says, as compared after a lost edit answer: its category, each component's type, format, text and buttons. */
function contentOf(template: { components: unknown; category: unknown }): unknown {
  const list = Array.isArray(template.components) ? (template.components as Array<Record<string, any>>) : [];
  return {
    category: template.category,
    components: list.map((c) => ({
      type: String(c.type ?? '').toUpperCase(),
      format: c.format ?? null,
      text: c.text ?? null,
      buttons: Array.isArray(c.buttons)
        ? c.buttons.map((b: Record<string, unknown>) => ({
            type: b.type ?? null,
            text: b.text ?? null,
            url: b.url ?? null,
            phone_number: b.phone_number ?? null,
          }))
        : null,
    })),
  };
}

/** A platform failure as our HTTP answer: 400 when Meta rejected the template itself, 502 when the platform failed us. */
function platformFailure(err: unknown): HttpException {
  const platform_error = platformErrorBody(err);
  if (isRequestRefusedByPlatform(err)) {
    return new BadRequestException({
      statusCode: 400,
      message: `The platform rejected the template: ${platformMessage(err)}`,
      platform_error,
    });
  }
  return new BadGatewayException({
    statusCode: 502,
    message: `The platform did not accept the request: ${platformMessage(err)}`,
    platform_error,
  });
}

@Injectable()
export class TemplatesService {
  private readonly logger = new Logger('TemplatesService');
  /** templates fetched from the platform at once during a sync */
  static readonly SYNC_CONCURRENCY = 4;

  /** findApprovedForSend's statement: every column, under its property name (built once from the entity) */
  private forSendSql?: string;

  constructor(
    @InjectRepository(Template) private readonly templates: Repository<Template>,
    private readonly accounts: AccountsService,
    private readonly dataSource: DataSource,
    // every API and worker process has it (LiveEventsModule is global); optional for processes that publish nothing
    @Optional() private readonly live?: LiveEvents,
  ) {}

  // ------------------------------------------------------------------ create

  /** SPEC §4 POST /templates/create: the stored template (PENDING), or a string message (name taken / unknown number). */
  async create(
    accountId: string,
    body: CreateTemplateBody,
  ): Promise<{ template: Template; phone: PhoneNumber } | string> {
    const compiled = this.compile(body.components);
    const phone = await this.accounts.findPhoneNumber(accountId, body.messagingPhoneId);
    if (!phone) return PHONE_NUMBER_NOT_FOUND;
    const client = await this.clientFor(phone.id);

    // Reserve the name first, then submit; undo the reservation if the platform refuses. A name is the account's once,
    // whatever the language, while the unique key is (account, name, language): concurrent creates of one name are
    // ordered by a lock on it (two languages at once both got in), and ON CONFLICT DO NOTHING lets the same name and
    // language lose quietly (no failed query in the logs).
    const inserted = await this.templates.manager.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
        `templates:${accountId}:${body.template_name}`,
      ]);
      if (await tx.getRepository(Template).existsBy({ accountId, name: body.template_name })) return null;
      return tx
        .getRepository(Template)
        .createQueryBuilder()
        .insert()
        .into(Template)
        .values({
          accountId,
          phoneNumberId: phone.id,
          platformTemplateId: null,
          name: body.template_name,
          language: body.language,
          category: body.category,
          status: 'PENDING',
          platformStatus: null,
          rejectedReason: null,
          categoryChangeAllowed: body.categoryChangeAllowed ?? false,
          ...this.compiledColumns(body.components, compiled),
        } as QueryDeepPartialEntity<Template>)
        .orIgnore()
        .returning(['id'])
        .execute();
    });
    if (!inserted?.raw?.length) return TEMPLATE_NAME_TAKEN;
    const row = await this.templates.findOneByOrFail({ id: String(inserted.raw[0].id) });

    let created: { id: string; status: string; category: string } | undefined;
    try {
      created = await client.createTemplate({
        name: row.name,
        language: row.language,
        category: row.category,
        parameter_format: 'NAMED',
        allow_category_change: row.categoryChangeAllowed,
        components: compiled.platformComponents,
      });
    } catch (err) {
      // A lost answer (timeout, cut-off body, 5xx) is no refusal: the platform may hold the template now. Deleting the
      // reservation then made a retry answer "name already exists" for a template sync could never find.
      if (mayHaveBeenDone(err)) created = await this.findOnPlatform(client, row).catch(() => undefined);
      if (!created) {
        await this.templates.delete({ id: row.id });
        if (err instanceof CloudApiError && err.subcode === 2388024) return TEMPLATE_NAME_TAKEN; // on the WABA already
        this.logger.warn({
          msg: 'template create refused by the platform',
          accountId,
          name: row.name,
          err: platformMessage(err),
        });
        throw platformFailure(err);
      }
      this.logger.warn({
        msg: 'template create answer lost; found the template on the platform',
        accountId,
        name: row.name,
        err: platformMessage(err),
      });
    }
    const mapped = mapPlatformStatus(created.status) ?? {
      status: 'PENDING' as const,
      rejectedReason: null,
      platformStatus: null,
    };
    const category = (TEMPLATE_CATEGORIES as readonly string[]).includes(created.category) ? created.category : null;
    // Only while no status webhook has found the row first (it sets the platform id): an approval that came before
    // this answer was written back to PENDING, and no webhook comes again.
    await this.templates.query(
      `UPDATE templates SET platform_template_id = $2,
              status = CASE WHEN platform_template_id IS NULL THEN $3 ELSE status END,
              rejected_reason = CASE WHEN platform_template_id IS NULL THEN $4 ELSE rejected_reason END,
              platform_status = CASE WHEN platform_template_id IS NULL THEN $5 ELSE platform_status END,
              category = CASE WHEN platform_template_id IS NULL THEN COALESCE($6, category) ELSE category END,
              updated_at = now()
        WHERE id = $1`,
      [row.id, String(created.id), mapped.status, mapped.rejectedReason, mapped.platformStatus, category],
    );
    return { template: await this.templates.findOneByOrFail({ id: row.id }), phone };
  }

  // ------------------------------------------------------------------ reads

  /**
   * GET /v2/templates (and MCP's list_templates, which also wants each template's preview): newest first, the page
   * and the total in one round trip (templateListSql).
   */
  async list(accountId: string, query: ListTemplatesQuery, options: { preview?: boolean } = {}) {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const phoneRowIds = query.messagingPhoneId
      ? await this.numbersSharingTemplatesWith(accountId, query.messagingPhoneId)
      : undefined;
    const plan = templateListSql(accountId, query, { ...options, phoneRowIds });
    const rows = await queryPlan(this.dataSource, plan);
    return { ...templateListPage(rows), page, pageSize };
  }

  listApproved(accountId: string): Promise<Template[]> {
    return this.templates.find({ where: { accountId, status: 'APPROVED' }, order: { name: 'ASC', language: 'ASC' } });
  }

  /** The account's template by name (the first language created, when there are several), or 404. */
  async getByName(accountId: string, name: string): Promise<Template> {
    const row = await this.templates.findOne({ where: { accountId, name }, order: { id: 'ASC' } });
    if (!row) throw new NotFoundException({ message: TEMPLATE_NOT_FOUND });
    return row;
  }

  /** The account's numbers (row ids) whose templates this one can send: those of its WhatsApp Business Account. */
  private async numbersSharingTemplatesWith(accountId: string, messagingPhoneId: string): Promise<string[]> {
    const { phoneNumbers } = await this.accounts.getAccount(accountId);
    const number = phoneNumbers.find((p) => p.messagingPhoneId === messagingPhoneId);
    if (!number)
      throw validationException([
        { field: 'messagingPhoneId', message: `messagingPhoneId ${messagingPhoneId} is not a number of this account` },
      ]);
    return phoneNumbers.filter((p) => p.businessAccountId === number.businessAccountId).map((p) => String(p.id));
  }

  /** messagingPhoneId of each of the account's numbers, by phone_numbers.id. */
  async phoneIds(accountId: string): Promise<Map<string, string>> {
    const { phoneNumbers } = await this.accounts.getAccount(accountId);
    return new Map(phoneNumbers.map((p) => [p.id, p.messagingPhoneId]));
  }

  /**
   * GET /templates/status: the stored status; a PENDING template is first refreshed from the platform
   * (best effort: when the platform does not answer, the stored status is returned).
   */
  async status(accountId: string, name: string): Promise<Template> {
    const row = await this.getByName(accountId, name);
    if (row.status !== 'PENDING' || !row.platformTemplateId) return row;
    try {
      const remote = await (await this.clientFor(row.phoneNumberId, 5_000)).getTemplate(row.platformTemplateId);
      const mapped = mapPlatformStatus(remote.status, remote.rejected_reason);
      if (mapped) await this.transition(row.id, mapped, 'status');
      return (await this.templates.findOneBy({ id: row.id })) ?? row;
    } catch (err) {
      this.logger.warn({
        msg: 'status refresh failed; answering the stored status',
        accountId,
        name,
        err: platformMessage(err),
      });
      return row;
    }
  }

  // ------------------------------------------------------------------ sync

  /**
   * POST /v2/templates/sync: fetches every template of the account from the platform (SYNC_CONCURRENCY at a time;
   * one failure never stops the others). `updated` lists only the templates whose status changed.
   */
  async sync(accountId: string) {
    const rows = await this.templates.find({ where: { accountId }, order: { id: 'ASC' } });
    const clients = new Map<string, Promise<CloudApiClient>>();
    const clientFor = (phoneId: string) => {
      if (!clients.has(phoneId)) clients.set(phoneId, this.clientFor(phoneId));
      return clients.get(phoneId)!;
    };
    const results = await mapLimit(rows, TemplatesService.SYNC_CONCURRENCY, async (row) => {
      try {
        const client = await clientFor(row.phoneNumberId);
        let remote: MessageTemplate | undefined;
        if (row.platformTemplateId) {
          remote = await client.getTemplate(row.platformTemplateId);
        } else {
          // a create that crashed between the platform's answer and our save: find it by name
          remote = await this.findOnPlatform(client, row);
          if (!remote)
            return { error: { name: row.name, language: row.language, message: 'Template not found on the platform' } };
          await this.templates.update({ id: row.id }, { platformTemplateId: String(remote.id) });
        }
        const mapped = mapPlatformStatus(remote.status, remote.rejected_reason);
        if (!mapped) return {};
        const change = await this.transition(row.id, mapped, 'sync');
        return change
          ? {
              updated: {
                name: row.name,
                language: row.language,
                status: change.status,
                rejected_reason: change.rejectedReason,
              },
            }
          : {};
      } catch (err) {
        return { error: { name: row.name, language: row.language, message: platformMessage(err) } };
      }
    });
    return {
      updated: results.flatMap((r) => (r.updated ? [r.updated] : [])),
      errors: results.flatMap((r) => (r.error ? [r.error] : [])),
    };
  }

  /** The platform's template of this name and language, looked up by name (its id is not known here). */
  private async findOnPlatform(
    client: CloudApiClient,
    row: Pick<Template, 'name' | 'language'>,
  ): Promise<MessageTemplate | undefined> {
    const found = await client.listTemplates({ name: row.name, limit: 100 });
    return found.data.find((t) => t.name === row.name && t.language === row.language);
  }

  // ------------------------------------------------------------------ update

  /**
   * PUT /templates/update: edits on the platform (a new review), then stores the edit with status PENDING. One edit of
   * a template at a time (a session advisory lock across the platform call): a refused edit puts back the status it
   * read, which a concurrent edit's PENDING must not have replaced.
   */
  async update(accountId: string, name: string, body: UpdateTemplateBody): Promise<Template> {
    // null as absent (an optional field): an edit of nothing went to the platform and came back as its 400
    if (body.components == null && body.category == null) {
      throw validationException([{ field: 'components', message: 'give components and/or category to update' }]);
    }
    const compiled = body.components != null ? this.compile(body.components) : undefined;
    return withAdvisoryLock(this.dataSource, editLockKey(accountId, name), () =>
      this.applyUpdate(accountId, name, body, compiled),
    );
  }

  private async applyUpdate(
    accountId: string,
    name: string,
    body: UpdateTemplateBody,
    compiled: CompiledTemplate | undefined,
  ): Promise<Template> {
    const row = await this.getByName(accountId, name);
    if (!row.platformTemplateId) {
      throw new ConflictException({
        statusCode: 409,
        message: 'The template is not on the platform yet: run POST /v2/templates/sync first',
      });
    }
    const client = await this.clientFor(row.phoneNumberId);
    // Under review from before the edit is submitted: the platform's verdict on the edit (a webhook, possibly within
    // the same second) then finds PENDING and moves it on. PENDING written after the call overwrote an approval.
    const before = { status: row.status, rejectedReason: row.rejectedReason, platformStatus: row.platformStatus };
    await this.templates.update({ id: row.id }, { status: 'PENDING', rejectedReason: null, platformStatus: null });
    // told as it is written (before the call): a verdict applied while the call is out comes after it, as it did
    const underReview = before.status !== 'PENDING' || before.platformStatus !== null;
    const change = (
      from: TemplateStatusValue,
      to: TemplateStatusValue,
      fields: Pick<StatusChange, 'rejectedReason' | 'platformStatus'> = { rejectedReason: null, platformStatus: null },
    ) =>
      this.publishStatus(
        {
          accountId: row.accountId,
          templateId: row.id,
          name: row.name,
          language: row.language,
          previousStatus: from,
          status: to,
          ...fields,
        },
        'edit',
      );
    if (underReview) await change(before.status, 'PENDING');
    try {
      await client.editTemplate(row.platformTemplateId, {
        ...(compiled ? { components: compiled.platformComponents } : {}),
        ...(body.category ? { category: body.category } : {}),
      });
    } catch (err) {
      if (mayHaveBeenDone(err) && (await this.editLanded(client, row, body, compiled))) {
        this.logger.warn({ msg: 'template edit answer lost; the platform has the edit', accountId, name });
      } else {
        // refused: the template is as it was, unless a status event has moved it meanwhile
        const put = await this.templates.update(
          { id: row.id, status: 'PENDING', rejectedReason: IsNull(), platformStatus: IsNull() },
          before,
        );
        if (underReview && put.affected)
          await change('PENDING', before.status, {
            rejectedReason: before.rejectedReason,
            platformStatus: before.platformStatus,
          });
        this.logger.warn({ msg: 'template edit refused by the platform', accountId, name, err: platformMessage(err) });
        throw platformFailure(err);
      }
    }
    await this.templates.update({ id: row.id }, {
      ...(compiled ? this.compiledColumns(body.components!, compiled) : {}),
      ...(body.category ? { category: body.category as TemplateCategoryValue } : {}),
    } as QueryDeepPartialEntity<Template>);
    return this.templates.findOneByOrFail({ id: row.id });
  }

  /**
   * After an edit whose answer was lost: whether the platform's template now has what the edit sent (the components'
   * types, formats, texts and buttons, and the category; Meta may answer other fields, such as media examples, in its
   * own form). An edit that changes none of that cannot be told apart, nor one whose template cannot be read: both
   * count as refused (our row keeps what it had).
   */
  private async editLanded(
    client: CloudApiClient,
    row: Template,
    body: UpdateTemplateBody,
    compiled: CompiledTemplate | undefined,
  ): Promise<boolean> {
    const sent = contentOf({
      components: compiled?.platformComponents ?? row.platformComponents,
      category: body.category ?? row.category,
    });
    if (isDeepStrictEqual(sent, contentOf({ components: row.platformComponents, category: row.category })))
      return false;
    const remote = await client.getTemplate(row.platformTemplateId!).catch(() => undefined);
    return !!remote && isDeepStrictEqual(contentOf(remote), sent);
  }

  // ------------------------------------------------------------------ for the webhook processor and messaging

  /**
   * Applies Meta's `message_template_status_update` (SPEC §3 via the webhook). Finds the template by Meta's id
   * (falling back to WABA + name + language), moves its status (see `mapPlatformStatus`) and records a
   * `template_status_update` account event, in one transaction. Idempotent: a repeated event changes nothing and
   * records nothing. Returns the changes made (empty when unknown or unchanged).
   */
  async applyPlatformStatus(event: PlatformStatusEvent): Promise<StatusChange[]> {
    const mapped = mapPlatformStatus(event.event, event.reason);
    if (!mapped) return [];
    let rows = await this.templates.find({ where: { platformTemplateId: String(event.templateId) } });
    if (rows.length === 0 && event.wabaId) {
      const numbers = await this.accounts.phoneNumbersOfBusinessAccount(String(event.wabaId));
      rows = numbers.length
        ? await this.templates.find({
            where: { phoneNumberId: In(numbers.map((p) => p.id)), name: event.templateName, language: event.language },
          })
        : [];
    }
    const changes: StatusChange[] = [];
    for (const row of rows) {
      if (!row.platformTemplateId && event.templateId)
        await this.templates.update({ id: row.id }, { platformTemplateId: String(event.templateId) });
      const change = await this.transition(row.id, mapped, 'webhook');
      if (change) changes.push(change);
    }
    return changes;
  }

  /**
   * Which of these template names the account cannot send (workflow validation: send_template nodes): missing
   * (`status` null), or with no APPROVED language (the best status over its languages: APPROVED wins, else the
   * platform's own status such as PAUSED when kept).
   */
  async unusableTemplates(accountId: string, names: string[]): Promise<Array<{ name: string; status: string | null }>> {
    if (names.length === 0) return [];
    const rows = await this.templates.find({
      select: { name: true, status: true, platformStatus: true },
      where: { accountId, name: In(names) },
    });
    const best = new Map<string, string>();
    for (const r of rows) {
      const status = r.status === 'APPROVED' ? 'APPROVED' : (r.platformStatus ?? r.status);
      const prev = best.get(r.name);
      if (prev !== 'APPROVED' && (prev === undefined || status === 'APPROVED' || status < prev))
        best.set(r.name, status);
    }
    return names.filter((n) => best.get(n) !== 'APPROVED').map((name) => ({ name, status: best.get(name) ?? null }));
  }

  /**
   * Applies Meta's `template_category_update`: the template (by Meta's id, else WABA + name + language) takes the new
   * category, keeps the one before in `previous_category`, and a `template_category_update` account event records
   * old and new. An announcement (`correct_category` only: Meta will change it later) records the event and changes
   * nothing. Idempotent: a repeated update changes nothing and records nothing. Returns how many templates changed.
   */
  async applyPlatformCategory(event: PlatformCategoryEvent): Promise<number> {
    const rows = await this.templatesOfPlatformEvent(event);
    let changed = 0;
    for (const row of rows) {
      const next = TEMPLATE_CATEGORIES.includes(event.newCategory as TemplateCategoryValue)
        ? (event.newCategory as TemplateCategoryValue)
        : null;
      await this.dataSource.transaction(async (m: EntityManager) => {
        const [updated] = next
          ? ((await m.query(
              `UPDATE templates SET previous_category = category, category = $2, category_updated_at = now(), updated_at = now()
                WHERE id = $1 AND category <> $2 RETURNING previous_category`,
              [row.id, next],
            )) as [Array<{ previous_category: string }>, number])
          : [[]];
        if (next && !updated.length) return; // already in that category
        if (!next && !event.correctCategory) return;
        await recordAccountEvent(m, row.accountId, TEMPLATE_CATEGORY_UPDATE, {
          template_name: row.name,
          language: row.language,
          previous_category: updated[0]?.previous_category ?? event.previousCategory ?? row.category,
          new_category: next,
          ...(event.correctCategory ? { correct_category: event.correctCategory } : {}),
        });
        if (next) changed++;
      });
    }
    return changed;
  }

  private async templatesOfPlatformEvent(event: {
    templateId: string;
    wabaId?: string;
    templateName: string;
    language: string;
  }): Promise<Template[]> {
    const rows = event.templateId
      ? await this.templates.find({ where: { platformTemplateId: String(event.templateId) } })
      : [];
    if (rows.length > 0 || !event.wabaId) return rows;
    const numbers = await this.accounts.phoneNumbersOfBusinessAccount(String(event.wabaId));
    if (numbers.length === 0) return [];
    return this.templates.find({
      where: {
        phoneNumberId: In(numbers.map((p) => p.id)),
        name: event.templateName,
        ...(event.language ? { language: event.language } : {}),
      },
    });
  }

  /** For sends: the APPROVED template (with variables, header type, buttons, carousel), or the reason it cannot be sent. */
  async findApprovedForSend(accountId: string, name: string, language?: string): Promise<FindForSendResult> {
    // every automation step's send of a moment asks this: a named statement, not a find() (its query builder cost
    // the worker ~0.5 ms of CPU per call, 4 % of its time in the send_template bench)
    this.forSendSql ??= `SELECT ${this.templates.metadata.columns.map((c) => `${c.databaseName} AS "${c.propertyName}"`).join(', ')}
      FROM templates WHERE account_id = $1 AND name = $2 AND ($3::text IS NULL OR language = $3) ORDER BY id`;
    const rows = await namedQuery<Template>(this.dataSource, 'template_for_send', this.forSendSql, [
      accountId,
      name,
      language || null,
    ]);
    if (rows.length === 0) return { ok: false, reason: NO_TEMPLATE_FOUND };
    const approved = rows.find((r) => r.status === 'APPROVED');
    if (approved) return { ok: true, template: approved };
    const r = rows[0];
    return {
      ok: false,
      reason: notApprovedReason(r.status, r.rejectedReason),
    };
  }

  // ------------------------------------------------------------------ plumbing

  /** Moves one template to `mapped` and records the account event, atomically; null when nothing changed. */
  private async transition(
    id: string,
    mapped: MappedStatus,
    source: 'webhook' | 'sync' | 'status',
  ): Promise<StatusChange | null> {
    const change = await this.recordTransition(id, mapped, source);
    if (change) await this.publishStatus(change, source);
    return change;
  }

  /** The change as the account's live template events (`GET /v2/template-events`), after it committed. */
  private async publishStatus(change: StatusChange, source: TemplateStatusSource): Promise<void> {
    const event: TemplateStatusLiveEvent = {
      template_name: change.name,
      language: change.language,
      status: change.status,
      previous_status: change.previousStatus,
      rejected_reason: change.rejectedReason,
      platform_status: change.platformStatus,
      source,
    };
    await this.live?.publishQuietly(templateEventsTopic(change.accountId), TEMPLATE_STATUS_EVENT, event);
  }

  private async recordTransition(
    id: string,
    mapped: MappedStatus,
    source: 'webhook' | 'sync' | 'status',
  ): Promise<StatusChange | null> {
    return this.dataSource.transaction(async (m: EntityManager) => {
      const row = await m
        .getRepository(Template)
        .createQueryBuilder('t')
        .setLock('pessimistic_write')
        .where('t.id = :id', { id })
        .getOne();
      if (!row) return null;
      // A sync or status check reads Meta while an edit may be out: Meta's answer may be from before the edit, whose
      // PENDING it would undo (the template then sendable while Meta reviews it). The edit's own verdict comes by webhook.
      if (source !== 'webhook' && (await advisoryLockHeld(m, editLockKey(String(row.accountId), row.name))))
        return null;
      if (
        row.status === mapped.status &&
        row.rejectedReason === mapped.rejectedReason &&
        row.platformStatus === mapped.platformStatus
      )
        return null;
      await m
        .getRepository(Template)
        .update(
          { id },
          { status: mapped.status, rejectedReason: mapped.rejectedReason, platformStatus: mapped.platformStatus },
        );
      const change: StatusChange = {
        accountId: row.accountId,
        templateId: row.id,
        name: row.name,
        language: row.language,
        previousStatus: row.status,
        status: mapped.status,
        rejectedReason: mapped.rejectedReason,
        platformStatus: mapped.platformStatus,
      };
      await recordAccountEvent(m, row.accountId, TEMPLATE_STATUS_UPDATE, {
        template_name: row.name,
        language: row.language,
        status: mapped.status,
        previous_status: row.status,
        rejected_reason: mapped.rejectedReason,
        platform_status: mapped.platformStatus,
        source,
      });
      // account webhooks (libs/webhooks): the same change, in the same transaction
      await recordWebhookEvent(m, {
        accountId: row.accountId,
        type: 'template_status_update',
        data: {
          templateName: row.name,
          language: row.language,
          category: row.category,
          previousStatus: row.status,
          status: mapped.status,
          reason: mapped.rejectedReason,
          platformStatus: mapped.platformStatus,
          platformTemplateId: row.platformTemplateId,
          source,
        },
      });
      return change;
    });
  }

  private compile(components: unknown): CompiledTemplate {
    const result = compileComponents(components);
    if (!result.ok) throw validationException(result.errors);
    return result.value;
  }

  private compiledColumns(components: unknown[], compiled: CompiledTemplate) {
    return {
      components,
      platformComponents: compiled.platformComponents,
      variables: compiled.variables,
      headerType: compiled.headerType,
      buttons: compiled.buttons,
      carousel: compiled.carousel,
    };
  }

  private async clientFor(phoneNumberRowId: string, timeoutMs?: number): Promise<CloudApiClient> {
    return new CloudApiClient(await this.accounts.connectionFor(phoneNumberRowId), timeoutMs ? { timeoutMs } : {});
  }
}
