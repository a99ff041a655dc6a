import {
  BadGatewayException,
  BadRequestException,
  ConflictException,
  ForbiddenException,
  HttpException,
  Injectable,
  InternalServerErrorException,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { AccountsService, PhoneNumber } from '@switchboard/accounts';
import {
  forbiddenTextProblem,
  jsonStructureProblem,
  normalizePhone,
  pageMeta,
  pageOffset,
  PHONE_FORMAT_HINT,
  validationException,
} from '@switchboard/core';
import { withAdvisoryLock } from '@switchboard/core/database';
import { ContactsService } from '@switchboard/contacts';
import { CONTACT_OPTED_OUT, failureReason, SendQueueService, type OutboundMessage } from '@switchboard/messaging';
import {
  CloudApiClient,
  CloudApiError,
  flowMessage,
  FlowValidationError,
  isRequestRefusedByPlatform,
  mayHaveBeenDone,
  platformErrorBody,
  platformMessage,
} from '@switchboard/whatsapp';
import { randomUUID } from 'node:crypto';
import { DataSource, Repository } from 'typeorm';
import { FlowCategoryValue, FlowScreen, toFlowJson, validateDefinition } from './definition';
import { Flow, FlowResponse, FlowStatusValue } from './flow.entity';
import { CreateFlowBody, ListFlowResponsesQuery, ListFlowsQuery, SendFlowBody, UpdateFlowBody } from './flows.dto';

export const FLOW_NOT_FOUND = 'Flow not found';
export const PHONE_NUMBER_NOT_FOUND = 'Phone number not found';
export const FLOW_NOT_EDITABLE = 'Flow is published and can no longer be edited';
export const FLOW_ALREADY_PUBLISHED = 'Flow is already published';
export const FLOW_DEPRECATED_NOT_EDITABLE = 'Flow is deprecated and can no longer be edited or published';
export const FLOW_DRAFT_NOT_SENDABLE = 'Flow is a draft: publish it before sending';
export const FLOW_DEPRECATED_NOT_SENDABLE = 'Flow is deprecated and can no longer be sent';

/** Meta's Flows error codes for "not in a state that allows this" (139001 update, 139002 publish, 139003 deprecate, 139004 delete). */
const FLOW_STATE_CODES = new Set([139001, 139002, 139003, 139004]);

/** A platform failure of a flow operation: 409 for Meta's flow-state errors, 400 when Meta refused the request, else 502. */
function platformFailure(err: unknown): HttpException {
  const platform_error = platformErrorBody(err);
  if (err instanceof CloudApiError && FLOW_STATE_CODES.has(err.code)) {
    return new ConflictException({
      statusCode: 409,
      message: `The platform refused: ${platformMessage(err)}`,
      platform_error,
    });
  }
  if (isRequestRefusedByPlatform(err)) {
    return new BadRequestException({
      statusCode: 400,
      message: `The platform rejected the flow: ${platformMessage(err)}`,
      platform_error,
    });
  }
  return new BadGatewayException({
    statusCode: 502,
    message: `The platform did not accept the request: ${platformMessage(err)}`,
    platform_error,
  });
}

/** The platform's validation_errors of an uploaded Flow JSON, as our 400. */
function flowJsonRejected(errors: FlowValidationError[]): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    message: `The platform rejected the Flow JSON: ${errors[0]?.message ?? 'validation failed'}`,
    validation_errors: errors,
  });
}

/** Meta's "object does not exist" (already deleted on the platform). */
const isUnknownObject = (err: unknown) => err instanceof CloudApiError && err.code === 100 && err.subcode === 33;

export interface UpdateResult {
  flow: Flow;
  message: string;
}

export interface DeleteResult {
  flowId: string;
  status: FlowStatusValue | 'deleted';
  message: string;
}

export interface SendResult {
  /** 200 accepted by the platform, 202 still queued when the wait ended (it goes out; statuses follow) */
  httpStatus: 200 | 202;
  flowId: string;
  flowToken: string;
  messageId: string;
  wamid: string | null;
}

export const FLOW_SENT = 'Flow message sent';
export const FLOW_QUEUED = 'Flow message queued: the platform has not answered yet';

@Injectable()
export class FlowsService {
  private readonly logger = new Logger('FlowsService');

  constructor(
    @InjectRepository(Flow) private readonly flows: Repository<Flow>,
    @InjectRepository(FlowResponse) private readonly responses: Repository<FlowResponse>,
    private readonly accounts: AccountsService,
    private readonly contacts: ContactsService,
    private readonly sends: SendQueueService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  // ------------------------------------------------------------------ create

  /** POST /flow/create: validates, translates to Flow JSON, creates the flow on the platform, uploads the JSON, stores it as a draft. */
  async create(accountId: string, body: CreateFlowBody): Promise<Flow> {
    const checked = validateDefinition(body.flow);
    if (!checked.ok) throw validationException(checked.errors);
    const { name, categories, screens } = checked.value as {
      name: string;
      categories: FlowCategoryValue[];
      screens: FlowScreen[];
    };
    const phone = await this.accounts.findPhoneNumber(accountId, body.messagingPhoneId);
    if (!phone) throw new NotFoundException({ statusCode: 404, message: PHONE_NUMBER_NOT_FOUND });
    const flowJson = toFlowJson(screens);
    const client = await this.clientFor(phone.id);

    let platformFlowId: string;
    try {
      platformFlowId = String((await client.createFlow({ name, categories })).id);
    } catch (err) {
      this.logger.warn({ msg: 'flow create refused by the platform', accountId, name, err: platformMessage(err) });
      throw platformFailure(err);
    }
    try {
      const upload = await client.uploadFlowJson(platformFlowId, flowJson);
      if (upload.validation_errors?.length) throw flowJsonRejected(upload.validation_errors);
    } catch (err) {
      // nothing half-written: the platform's draft goes too
      await client
        .deleteFlow(platformFlowId)
        .catch((e) =>
          this.logger.warn({ msg: 'could not delete the refused draft flow', platformFlowId, err: platformMessage(e) }),
        );
      if (err instanceof HttpException) throw err;
      throw platformFailure(err);
    }
    return this.flows.save(
      this.flows.create({
        accountId,
        phoneNumberId: phone.id,
        platformFlowId,
        name,
        categories,
        status: 'draft',
        screens,
        flowJson,
        publishedAt: null,
        deprecatedAt: null,
      }),
    );
  }

  // ------------------------------------------------------------------ update / publish

  /** PUT /flow/update: `update` (new definition in `flow`), `update_json` (raw Flow JSON in `flow_json`), `publish`. */
  update(accountId: string, body: UpdateFlowBody): Promise<UpdateResult> {
    return this.oneAtATime(accountId, body.flow_id, () => this.applyUpdate(accountId, body));
  }

  private async applyUpdate(accountId: string, body: UpdateFlowBody): Promise<UpdateResult> {
    switch (body.action) {
      case 'update': {
        if (body.flow === undefined)
          throw validationException([
            { field: 'flow', message: 'flow is required for action update: {name?, categories?, screens}' },
          ]);
        // a published flow is a 409 whatever the definition holds (its errors would say nothing useful)
        const flow = await this.editable(accountId, body.flow_id);
        const checked = validateDefinition(body.flow, { partial: true });
        if (!checked.ok) throw validationException(checked.errors);
        const { name, categories, screens } = checked.value;
        const flowJson = toFlowJson(screens);
        const metadata = {
          ...(name !== undefined && name !== flow.name ? { name } : {}),
          ...(categories !== undefined && categories.join() !== flow.categories.join() ? { categories } : {}),
        };
        if (metadata.name !== undefined && (await this.flows.existsBy({ accountId, name: metadata.name }))) {
          // Meta wants flow names unique within the WhatsApp Business Account; checked here too for renames
          throw validationException([
            { field: 'flow.name', message: 'flow.name is already used by another flow of this account' },
          ]);
        }
        // metadata first (the platform checks the name), then the JSON; a refused JSON puts the old metadata back
        const client = await this.clientFor(flow.phoneNumberId);
        if (Object.keys(metadata).length) {
          try {
            await client.updateFlowMetadata(flow.platformFlowId, metadata);
          } catch (err) {
            throw platformFailure(err);
          }
        }
        try {
          await this.replaceJson(flow, flowJson);
        } catch (err) {
          if (Object.keys(metadata).length) {
            await client
              .updateFlowMetadata(flow.platformFlowId, { name: flow.name, categories: flow.categories })
              .catch((e) =>
                this.logger.warn({
                  msg: 'could not restore the flow metadata',
                  flowId: flow.platformFlowId,
                  err: platformMessage(e),
                }),
              );
          }
          throw err;
        }
        return {
          flow: await this.saveDraft(flow, { ...metadata, screens, flowJson }),
          message: 'Flow updated successfully',
        };
      }
      case 'update_json': {
        // a Flow JSON that is no JSON (or holds a NUL, or nests too deep) is a 400 first: it is the request's shape
        const flowJson = this.parseFlowJson(body.flow_json);
        const flow = await this.editable(accountId, body.flow_id);
        await this.replaceJson(flow, flowJson);
        return { flow: await this.saveDraft(flow, { screens: null, flowJson }), message: 'Flow updated successfully' };
      }
      case 'publish': {
        const flow = await this.getOwned(accountId, body.flow_id);
        if (flow.status === 'published')
          throw new ConflictException({ statusCode: 409, message: FLOW_ALREADY_PUBLISHED });
        if (flow.status === 'deprecated')
          throw new ConflictException({ statusCode: 409, message: FLOW_DEPRECATED_NOT_EDITABLE });
        const client = await this.clientFor(flow.phoneNumberId);
        try {
          await client.publishFlow(flow.platformFlowId);
        } catch (err) {
          if (!(await this.platformHas(client, flow.platformFlowId, err, 139002, 'PUBLISHED'))) {
            this.logger.warn({
              msg: 'flow publish refused by the platform',
              accountId,
              flowId: flow.platformFlowId,
              err: platformMessage(err),
            });
            throw platformFailure(err);
          }
        }
        await this.flows.update({ id: flow.id, status: 'draft' }, {
          status: 'published',
          publishedAt: () => 'now()',
        } as never);
        return { flow: await this.flows.findOneByOrFail({ id: flow.id }), message: 'Flow published successfully' };
      }
    }
  }

  // ------------------------------------------------------------------ delete

  /** DELETE /flow/delete: a draft is deleted (platform and here); a published flow is deprecated and kept; deprecated: idempotent. */
  delete(accountId: string, flowId: string): Promise<DeleteResult> {
    return this.oneAtATime(accountId, flowId, () => this.applyDelete(accountId, flowId));
  }

  private async applyDelete(accountId: string, flowId: string): Promise<DeleteResult> {
    const flow = await this.getOwned(accountId, flowId);
    const client = await this.clientFor(flow.phoneNumberId);
    switch (flow.status) {
      case 'draft':
        try {
          await client.deleteFlow(flow.platformFlowId);
        } catch (err) {
          if (!isUnknownObject(err)) throw platformFailure(err);
        }
        await this.flows.delete({ id: flow.id });
        return { flowId, status: 'deleted', message: 'Flow deleted successfully' };
      case 'published':
        try {
          await client.deprecateFlow(flow.platformFlowId);
        } catch (err) {
          if (!(await this.platformHas(client, flow.platformFlowId, err, 139003, 'DEPRECATED')))
            throw platformFailure(err);
        }
        await this.flows.update({ id: flow.id }, { status: 'deprecated', deprecatedAt: () => 'now()' } as never);
        return { flowId, status: 'deprecated', message: 'Flow is published: it was deprecated, not deleted' };
      case 'deprecated':
        return { flowId, status: 'deprecated', message: 'Flow is already deprecated' };
    }
  }

  /**
   * Whether a publish or deprecate that failed was done after all: its answer was lost (or a server error), or Meta
   * refused it as not allowed in the flow's state (`stateCode`: a retry after a lost answer, or a change made in Meta's
   * Flow Builder), and the platform now shows the flow in `status`. Our record then follows the platform; without this
   * the flow stayed a draft (or published) here for good, every retry refused.
   */
  private async platformHas(
    client: CloudApiClient,
    platformFlowId: string,
    err: unknown,
    stateCode: number,
    status: 'PUBLISHED' | 'DEPRECATED',
  ): Promise<boolean> {
    if (!mayHaveBeenDone(err) && !(err instanceof CloudApiError && err.code === stateCode)) return false;
    const onPlatform = await client.getFlow(platformFlowId).catch(() => null);
    return onPlatform?.status === status;
  }

  // ------------------------------------------------------------------ reads

  async list(accountId: string, query: ListFlowsQuery) {
    const where = { accountId, ...(query.status ? { status: query.status } : {}) };
    const [rows, total] = await this.flows.findAndCount({
      where,
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: pageOffset(query),
      take: query.pageSize,
    });
    return { flows: rows, ...pageMeta(query, total) };
  }

  /** The caller's flow by its flow_id, or 404 `Flow not found` (also for another account's flow). */
  async getOwned(accountId: string, flowId: string): Promise<Flow> {
    const flow = await this.flows.findOneBy({ accountId, platformFlowId: String(flowId) });
    if (!flow) throw new NotFoundException({ statusCode: 404, message: FLOW_NOT_FOUND });
    return flow;
  }

  /** messagingPhoneId of each of the account's numbers, by phone_numbers.id. */
  async phoneIds(accountId: string): Promise<Map<string, string>> {
    const { phoneNumbers } = await this.accounts.getAccount(accountId);
    return new Map(phoneNumbers.map((p) => [p.id, p.messagingPhoneId]));
  }

  async listResponses(accountId: string, flowId: string, query: ListFlowResponsesQuery) {
    const flow = await this.getOwned(accountId, flowId);
    const [rows, total] = await this.responses.findAndCount({
      where: { accountId, flowId: flow.id },
      order: { receivedAt: 'DESC', id: 'DESC' },
      skip: pageOffset(query),
      take: query.pageSize,
    });
    return { responses: rows, ...pageMeta(query, total) };
  }

  // ------------------------------------------------------------------ send

  /**
   * POST /v2/flows/{flow_id}/send: the outbound `flow` message goes through libs/messaging's send pipeline (stored,
   * paced, retried, statuses), with its flow_token recorded in the same transaction as the message; then waits (bounded)
   * for the platform's answer like a session send. Only published flows are sent (a draft is 409). The platform
   * enforces the 24-hour window: a refusal is a 500 carrying the platform's reason.
   */
  async send(accountId: string, flowId: string, body: SendFlowBody): Promise<SendResult> {
    const to = normalizePhone(body.to);
    if (!to) throw validationException([{ field: 'to', message: `to must be ${PHONE_FORMAT_HINT}` }]);
    const flow = await this.getOwned(accountId, flowId);
    if (flow.status === 'draft') throw new ConflictException({ statusCode: 409, message: FLOW_DRAFT_NOT_SENDABLE });
    if (flow.status === 'deprecated')
      throw new ConflictException({ statusCode: 409, message: FLOW_DEPRECATED_NOT_SENDABLE });
    const phone = await this.sendingNumber(accountId, flow, body.messagingPhoneId);
    // as every send: the customer's contact (the conversation shows the form) and their opt-out
    const { contact } = await this.contacts.findOrCreateByNumber(accountId, to);
    if (contact.isBlocked) throw new ForbiddenException({ success: false, message: CONTACT_OPTED_OUT });
    const flowToken = body.flowToken ?? `sb_${randomUUID()}`;
    const screens = (flow.flowJson as { screens?: Array<{ id?: unknown }> }).screens;
    const screen = Array.isArray(screens) && typeof screens[0]?.id === 'string' ? (screens[0].id as string) : undefined;

    const message: OutboundMessage = {
      id: randomUUID(),
      accountId,
      phoneNumberId: phone.id,
      contactId: contact.id,
      recipient: to,
      kind: 'flow',
      body: body.body,
      payload: flowMessage(to, {
        flowId: flow.platformFlowId,
        flowCta: body.cta,
        flowToken,
        flowAction: 'navigate',
        ...(screen ? { screen } : {}),
        body: body.body,
        ...(body.header ? { header: { type: 'text' as const, text: body.header } } : {}),
        ...(body.footer ? { footer: body.footer } : {}),
      }),
    };
    const messageId = message.id!;
    await this.db.transaction(async (tx) => {
      await this.sends.insert([message], 'api', tx);
      // The token is claimed by the INSERT itself: a send of the same token for another flow, committing meanwhile,
      // makes it wait and then conflict, and the owner is read after that (a read before the insert saw neither).
      const claimed = await tx.query(
        `INSERT INTO flow_sends (account_id, flow_token, flow_id, message_id) VALUES ($1, $2, $3, $4)
           ON CONFLICT (account_id, flow_token) DO NOTHING RETURNING flow_id`,
        [accountId, flowToken, flow.id, messageId],
      );
      if (claimed.length) return;
      const [owner] = await tx.query(`SELECT flow_id FROM flow_sends WHERE account_id = $1 AND flow_token = $2`, [
        accountId,
        flowToken,
      ]);
      if (owner && String(owner.flow_id) !== flow.id) {
        throw validationException([
          { field: 'flowToken', message: 'flowToken is already used for another flow of this account' },
        ]);
      }
    });
    // Committed: now queue (a crash before this is repaired by the send pipeline's sweep of queued messages).
    await this.sends.enqueue(
      [messageId],
      'api',
      new Map([[messageId, { phoneNumberId: phone.id, payload: message.payload }]]),
    );
    const outcome = (await this.sends.waitForOutcome([messageId])).get(messageId)!;
    if (outcome.status === 'failed') {
      this.logger.warn({ msg: 'flow message refused by the platform', messageId, code: outcome.errorCode });
      throw new InternalServerErrorException({
        statusCode: 500,
        success: false,
        message: failureReason(outcome),
        message_id: messageId,
        platform_error: {
          code: outcome.errorCode,
          ...(outcome.errorTitle ? { message: outcome.errorTitle } : {}),
          ...(outcome.errorMessage ? { details: outcome.errorMessage } : {}),
        },
      });
    }
    return {
      httpStatus: outcome.status === 'queued' ? 202 : 200,
      flowId: flow.platformFlowId,
      flowToken,
      messageId,
      wamid: outcome.wamid,
    };
  }

  // ------------------------------------------------------------------ plumbing

  /** The caller's draft flow, or 404 / 409 (published or deprecated flows can no longer be edited). */
  private async editable(accountId: string, flowId: string): Promise<Flow> {
    const flow = await this.getOwned(accountId, flowId);
    if (flow.status === 'published') throw new ConflictException({ statusCode: 409, message: FLOW_NOT_EDITABLE });
    if (flow.status === 'deprecated')
      throw new ConflictException({ statusCode: 409, message: FLOW_DEPRECATED_NOT_EDITABLE });
    return flow;
  }

  /**
   * Uploads `flowJson` as the flow's asset. When the platform answers validation errors, the previous JSON is uploaded
   * again (so the platform keeps what we store) and the errors are the caller's 400.
   */
  private async replaceJson(flow: Flow, flowJson: Record<string, unknown>): Promise<void> {
    const client = await this.clientFor(flow.phoneNumberId);
    let errors: FlowValidationError[];
    try {
      errors = (await client.uploadFlowJson(flow.platformFlowId, flowJson)).validation_errors ?? [];
    } catch (err) {
      throw platformFailure(err);
    }
    if (!errors.length) return;
    await client.uploadFlowJson(flow.platformFlowId, flow.flowJson).catch((e) =>
      this.logger.warn({
        msg: 'could not restore the previous Flow JSON',
        flowId: flow.platformFlowId,
        err: platformMessage(e),
      }),
    );
    throw flowJsonRejected(errors);
  }

  /** Stores an edit of a draft (only while it is still a draft: a concurrent publish wins). */
  private async saveDraft(
    flow: Flow,
    changes: Partial<Pick<Flow, 'name' | 'categories' | 'screens' | 'flowJson'>>,
  ): Promise<Flow> {
    const result = await this.flows.update({ id: flow.id, status: 'draft' }, changes as never);
    if (!result.affected) throw new ConflictException({ statusCode: 409, message: FLOW_NOT_EDITABLE });
    return this.flows.findOneByOrFail({ id: flow.id });
  }

  /** flow_json: a JSON string or an object; anything else is a 400 naming flow_json. */
  private parseFlowJson(raw: unknown): Record<string, unknown> {
    if (raw === undefined || raw === null)
      throw validationException([
        {
          field: 'flow_json',
          message: 'flow_json is required for action update_json (the Flow JSON, a string or an object)',
        },
      ]);
    let value = raw;
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch (err) {
        throw validationException([
          { field: 'flow_json', message: `flow_json is not valid JSON: ${(err as Error).message}` },
        ]);
      }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw validationException([
        { field: 'flow_json', message: "flow_json must be a JSON object (Meta's Flow JSON: {version, screens})" },
      ]);
    }
    // A string holds a second JSON document: it gets the same depth and character rules as the request body.
    const problem = jsonStructureProblem(value, 'flow_json') ?? forbiddenTextProblem(value, 'flow_json');
    if (problem) throw validationException([problem]);
    return value as Record<string, unknown>;
  }

  /** The number a flow message goes from: the given one (the caller's, in the flow's WhatsApp Business Account) or the flow's own. */
  private async sendingNumber(accountId: string, flow: Flow, messagingPhoneId?: string): Promise<PhoneNumber> {
    const { phoneNumbers } = await this.accounts.getAccount(accountId);
    const own = phoneNumbers.find((p) => p.id === flow.phoneNumberId);
    if (!messagingPhoneId) {
      if (!own) throw new NotFoundException({ statusCode: 404, message: PHONE_NUMBER_NOT_FOUND });
      if (own.status !== 'CONNECTED')
        throw new NotFoundException({
          statusCode: 404,
          message: `${PHONE_NUMBER_NOT_FOUND}: the flow's number ${own.messagingPhoneId} is not connected any more; send with the messagingPhoneId of a connected number of its WhatsApp Business Account`,
        });
      return own;
    }
    // a disconnected number is refused as an unknown one (its token was erased; sends from it are not ours to make)
    const phone = phoneNumbers.find((p) => p.messagingPhoneId === messagingPhoneId && p.status === 'CONNECTED');
    if (!phone) throw new NotFoundException({ statusCode: 404, message: PHONE_NUMBER_NOT_FOUND });
    if (own && phone.businessAccountId !== own.businessAccountId) {
      throw validationException([
        {
          field: 'messagingPhoneId',
          message: 'messagingPhoneId belongs to another WhatsApp Business Account than the flow',
        },
      ]);
    }
    return phone;
  }

  /**
   * One edit, publish or delete of a flow at a time: each reads the flow's state, calls the platform, then writes. An
   * update racing a publish left the platform serving the new JSON and our record the old one (and no longer
   * editable).
   */
  private oneAtATime<T>(accountId: string, flowId: unknown, work: () => Promise<T>): Promise<T> {
    return withAdvisoryLock(this.db, `flows:${accountId}:${String(flowId)}`, work);
  }

  private async clientFor(phoneNumberRowId: string): Promise<CloudApiClient> {
    return new CloudApiClient(await this.accounts.connectionFor(phoneNumberRowId));
  }
}
