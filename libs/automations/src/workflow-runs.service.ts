import { ConflictException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { triggerMatchesMessage, type InboundReply, type RunState, type Trigger } from '@switchboard/engine';
import { namedQuery, queryPlan } from '@switchboard/core/database';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { contactFromPayload, digitsOnly } from './contact-binding';
import type { ListRunsQuery } from './dto';
import { AUTOMATION_DRIVER, type AutomationDriver } from './driver/automation-driver';
import type { WorkflowRunStatus } from './entities';
import { runListPage, runListSql } from './run-list';
import { RememberedRunTotals } from './run-totals';
import { parseId, WORKFLOW_NOT_FOUND } from './workflows.service';
import { isoOrNull, isUuid, MicroBatcher, otherWhatsAppForms, SameMomentCache } from '@switchboard/core';

export const RUN_NOT_FOUND = { message: 'Workflow run not found' };

interface NewRun {
  accountId: string;
  workflowId: string;
  version: number;
  payload: unknown;
  contactPhone: string | null;
  messagingPhoneId: string | null;
  idempotencyKey: string | null;
}

/** An inbound customer message, as the messaging module hands it over. */
export interface InboundMessage extends InboundReply {
  /** Profile name of the customer, when the platform gives one. */
  name?: string;
}

interface RunRow {
  id: string;
  workflow_id: string;
  workflow_version: number;
  status: WorkflowRunStatus;
  payload: unknown;
  state: RunState | null;
  current_node_id: string | null;
  contact_id: string | null;
  contact_phone: string | null;
  waiting_kind: string | null;
  waiting_seq: number | null;
  wake_at: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/**
 * The webhook's one round trip, for every request of the moment: find each active workflow and insert its run
 * (prepared: it is the hot path). Returns the ids inserted (a retried idempotency key inserts nothing).
 * Rows go in the order of the idempotency index: another process inserting the same keys (a shop's retries) waits
 * for this one key by key in the same order instead of deadlocking.
 */
const START_FROM_WEBHOOK_SQL = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::uuid[], $3::json[], $4::text[], $5::text[]) AS i(identifier, id, payload, phone, key)),
  w AS (SELECT id, account_id, current_version, identifier FROM workflows
         WHERE identifier IN (SELECT identifier FROM input) AND is_active AND current_version > 0)
  INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, payload, contact_phone, idempotency_key)
  SELECT i.id, w.account_id, w.id, w.current_version, 'pending', i.payload, i.phone, i.key FROM input i JOIN w USING (identifier)
  ORDER BY w.id, i.key
  ON CONFLICT (workflow_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id`;

interface WebhookRun {
  identifier: string;
  id: string;
  payload: string;
  phone: string | null;
  idempotencyKey: string | null;
}

/**
 * Starting runs and routing events to them (the public face of the automation driver for other modules):
 * - `startFromWebhook`: the inbound workflow webhook;
 * - `startFromInboundMessage`: keyword-triggered workflows, for the messaging module's inbound messages;
 * - `deliverReply`: a customer message resumes the runs waiting for that contact's reply.
 * A run row is committed before the driver (AUTOMATION_DRIVER: embedded or Temporal) is asked to start it.
 */
@Injectable()
export class WorkflowRunsService {
  /** runs of the webhook requests of one moment, inserted together */
  private readonly webhookRuns = new MicroBatcher((runs: WebhookRun[]) => this.insertWebhookRuns(runs), {
    maxItems: 100,
  });

  /** an account's keyword-triggered workflows, read once for the customer messages of one moment */
  private readonly keywordWorkflows = new SameMomentCache<
    Array<{ id: string; current_version: number; trigger: Trigger }>
  >();
  /** the runs each customer message of one moment may resume, in one query */
  private readonly replyTargets = new MicroBatcher((senders: ReplySender[]) => this.findReplyTargets(senders), {
    maxItems: 200,
  });
  /** totals of long run lists, counted about once a second instead of on every page */
  private readonly runTotals = new RememberedRunTotals();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(AUTOMATION_DRIVER) private readonly driver: AutomationDriver,
  ) {}

  /** Whether each run was inserted (false: no active workflow with that identifier, or its idempotency key was used). */
  private async insertWebhookRuns(runs: WebhookRun[]): Promise<boolean[]> {
    const column = <K extends keyof WebhookRun>(key: K) => runs.map((run) => run[key]);
    const inserted = await namedQuery<{ id: string }>(this.dataSource, 'runs_from_webhook', START_FROM_WEBHOOK_SQL, [
      column('identifier'),
      column('id'),
      column('payload'),
      column('phone'),
      column('idempotencyKey'),
    ]);
    const ids = new Set(inserted.map((row) => row.id));
    return runs.map((run) => ids.has(run.id));
  }

  /**
   * Starts a run of the active workflow with this webhook identifier (null when there is none). With an
   * idempotency key, a retry returns the first run (`created: false`) instead of starting another.
   */
  async startFromWebhook(
    identifier: string,
    payload: unknown,
    idempotencyKey: string | null,
  ): Promise<{ runId: string; created: boolean } | null> {
    const id = randomUUID();
    const phone = contactFromPayload(payload).phone ?? null;
    const inserted = await this.webhookRuns.add({
      identifier,
      id,
      payload: JSON.stringify(payload ?? null),
      phone,
      idempotencyKey,
    });
    let result: { runId: string; created: boolean } | null = inserted ? { runId: id, created: true } : null;
    if (!result && idempotencyKey !== null) {
      // Unknown/inactive workflow, or a retry of an accepted request.
      const [existing]: Array<{ id: string }> = await this.dataSource.query(
        `SELECT r.id FROM workflow_runs r JOIN workflows w ON w.id = r.workflow_id
          WHERE w.identifier = $1 AND w.is_active AND r.idempotency_key = $2`,
        [identifier, idempotencyKey],
      );
      if (existing) result = { runId: existing.id, created: false };
    }
    if (result) await this.enqueueStart(result.runId);
    return result;
  }

  /**
   * A test run from the console (POST /v1/workflows/{id}/test-runs): the current version with the given payload, as
   * if it came to the webhook, also while the workflow is inactive.
   */
  async startTestRun(accountId: string, workflowId: string, payload: unknown): Promise<{ runId: string }> {
    const id = parseId(workflowId);
    const [workflow]: Array<{ id: string; current_version: number }> = id
      ? await this.dataSource.query(
          `SELECT id, current_version FROM workflows WHERE id = $1 AND account_id = $2 AND archived_at IS NULL`,
          [id, accountId],
        )
      : [];
    if (!workflow) throw new NotFoundException(WORKFLOW_NOT_FOUND);
    if (workflow.current_version === 0)
      throw new ConflictException({ message: 'This workflow has no published version yet: publish its draft first' });
    const { runId } = await this.insertRun(this.dataSource.manager, {
      accountId,
      workflowId: String(workflow.id),
      version: workflow.current_version,
      payload: payload ?? {},
      contactPhone: contactFromPayload(payload).phone ?? null,
      messagingPhoneId: null,
      idempotencyKey: null,
    });
    await this.enqueueStart(runId);
    return { runId };
  }

  /**
   * Starts a run of every active keyword-triggered workflow of the account whose keywords match the message
   * (whole text, trimmed, case-insensitive). The payload is the message plus `from` and `messagingPhoneId`; the
   * contact is the sender. A message redelivered with the same messageId starts nothing new.
   */
  async startFromInboundMessage(
    accountId: string,
    messagingPhoneId: string | null,
    contactPhone: string,
    message: InboundMessage,
  ): Promise<string[]> {
    const text = typeof message.text === 'string' && message.text.trim() !== '' ? message.text : message.buttonText;
    if (typeof text !== 'string' || text.trim() === '') return [];
    const candidates = await this.keywordWorkflows.get(accountId, () =>
      this.dataSource.query(
        `SELECT w.id, w.current_version, v.definition->'trigger' AS trigger
           FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id AND v.version = w.current_version
          WHERE w.account_id = $1 AND w.is_active AND w.trigger_type = 'keyword' ORDER BY w.id`,
        [accountId],
      ),
    );
    const phone = digitsOnly(contactPhone) || null;
    const runIds: string[] = [];
    for (const workflow of candidates.filter((w) => triggerMatchesMessage(w.trigger, text))) {
      const { runId, created } = await this.insertRun(this.dataSource.manager, {
        accountId,
        workflowId: String(workflow.id),
        version: workflow.current_version,
        payload: { ...message, from: phone, messagingPhoneId },
        contactPhone: phone,
        messagingPhoneId,
        idempotencyKey:
          typeof message.messageId === 'string' && message.messageId ? `inbound:${message.messageId}` : null,
      });
      if (created) runIds.push(runId);
      await this.enqueueStart(runId);
    }
    return runIds;
  }

  /**
   * A customer message from `contactPhone`: resumes every run of the account waiting for that contact's reply
   * (restricted to runs bound to `messagingPhoneId` or to no number). Returns the runs it was delivered to; the
   * engine decides per run whether a branch matches (an unmatched reply leaves the run waiting). Pass the
   * platform's message id as `reply.messageId` so a redelivered webhook is ignored.
   */
  async deliverReply(
    accountId: string,
    messagingPhoneId: string | null | undefined,
    contactPhone: string,
    reply: InboundReply,
  ): Promise<string[]> {
    const phone = digitsOnly(contactPhone);
    if (!phone) return [];
    const messageId = typeof reply.messageId === 'string' && reply.messageId ? reply.messageId : null;
    // a run bound to another form of the same WhatsApp user's number (Mexico, Brazil, Argentina) is theirs too
    const runs = (
      await Promise.all(
        [phone, ...otherWhatsAppForms(phone)].map((form) =>
          this.replyTargets.add({ accountId, phone: form, messagingPhoneId: messagingPhoneId ?? null, messageId }),
        ),
      )
    ).flat();
    const delivered: string[] = [];
    for (const run of runs) {
      const target = { id: run.id, status: run.status, waitingKind: run.waiting_kind, waitingSeq: run.waiting_seq };
      if (await this.driver.deliverReply(target, reply)) delivered.push(run.id);
    }
    return delivered;
  }

  /**
   * Embedded: the runs whose row waits for a reply or for a step's effect (the driver keeps a reply that arrives while
   * the send before the wait is still performed). Temporal: every running/waiting run of the contact (the workflow
   * buffers such a reply). Restricted to runs bound to the message's number or to no number.
   */
  private async findReplyTargets(senders: ReplySender[]): Promise<ReplyTargetRow[][]> {
    const targets =
      this.driver.replyTargets === 'active'
        ? `r.status IN ('running', 'waiting')`
        : `r.waiting_kind IN ('reply', 'effect')`;
    const rows: Array<ReplyTargetRow & { n: number }> = await this.dataSource.query(
      `SELECT s.n, r.id, r.status, r.waiting_kind, r.waiting_seq
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY
              AS s(account_id, phone, messaging_phone_id, message_id, n)
         JOIN workflow_runs r ON r.account_id = s.account_id AND r.contact_phone = s.phone AND ${targets}
          AND (s.messaging_phone_id IS NULL OR r.messaging_phone_id IS NULL OR r.messaging_phone_id = s.messaging_phone_id)
          -- a keyword message delivered again (Meta's redelivery, a retried job) does not answer the run it started
          AND (s.message_id IS NULL OR r.idempotency_key IS DISTINCT FROM 'inbound:' || s.message_id)`,
      [
        senders.map((s) => s.accountId),
        senders.map((s) => s.phone),
        senders.map((s) => s.messagingPhoneId),
        senders.map((s) => s.messageId),
      ],
    );
    const runsOf = senders.map((): ReplyTargetRow[] => []);
    for (const { n, ...run } of rows) runsOf[Number(n) - 1].push(run);
    return runsOf;
  }

  private async insertRun(db: EntityManager, run: NewRun): Promise<{ runId: string; created: boolean }> {
    const id = randomUUID();
    const inserted: Array<{ id: string }> = await db.query(
      `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, payload, contact_phone, messaging_phone_id, idempotency_key)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8)
       ON CONFLICT (workflow_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING id`,
      [
        id,
        run.accountId,
        run.workflowId,
        run.version,
        JSON.stringify(run.payload ?? null),
        run.contactPhone,
        run.messagingPhoneId,
        run.idempotencyKey,
      ],
    );
    if (inserted.length > 0) return { runId: id, created: true };
    const [existing]: Array<{ id: string }> = await db.query(
      `SELECT id FROM workflow_runs WHERE workflow_id = $1 AND idempotency_key = $2`,
      [run.workflowId, run.idempotencyKey],
    );
    return { runId: existing.id, created: false };
  }

  /** The run is committed: the driver starts it (a failure is logged by the driver; the recovery sweep retries). */
  private async enqueueStart(runId: string): Promise<void> {
    await this.driver.startRun({ id: runId });
  }

  async listRuns(accountId: string, workflowId: string, query: ListRunsQuery) {
    const id = parseId(workflowId);
    if (!id) throw new NotFoundException(WORKFLOW_NOT_FOUND);
    const totalKey = `${id}:${query.status ?? ''}`;
    const remembered = this.runTotals.get(totalKey);
    const rows = await queryPlan(
      this.dataSource,
      runListSql(accountId, id, query, { total: remembered === undefined }),
    );
    if (remembered === undefined && rows.length) this.runTotals.counted(totalKey, Number(rows[0].total));
    const answer = runListPage(rows, query, remembered);
    if (!answer) throw new NotFoundException(WORKFLOW_NOT_FOUND);
    return answer;
  }

  /**
   * The account's runs a contact is in (GET /v1/workflow-runs?contact_id=), newest first: the runs bound to it by id,
   * or by its number (webhook-started runs know only the phone). The caller resolves the contact within the account.
   */
  async listRunsOfContact(
    accountId: string,
    contact: { id: string; number: string | null },
    query: { page: number; pageSize: number; status?: WorkflowRunStatus },
  ) {
    const params: unknown[] = [accountId, contact.id, contact.number];
    let filter = '';
    if (query.status) {
      params.push(query.status);
      filter = `AND r.status = $${params.length}`;
    }
    const where = `r.account_id = $1 AND (r.contact_id = $2 OR r.contact_phone = $3) ${filter}`;
    const [[{ total }], rows] = await Promise.all([
      this.dataSource.query(`SELECT count(*)::int AS total FROM workflow_runs r WHERE ${where}`, params),
      this.dataSource.query(
        `SELECT r.*, w.name AS workflow_name FROM workflow_runs r JOIN workflows w ON w.id = r.workflow_id
          WHERE ${where} ORDER BY r.created_at DESC, r.id DESC
          LIMIT ${query.pageSize} OFFSET ${(query.page - 1) * query.pageSize}`,
        params,
      ) as Promise<Array<RunRow & { workflow_name: string }>>,
    ]);
    return {
      data: rows.map((r) => ({
        runId: r.id,
        workflowId: Number(r.workflow_id),
        workflowName: r.workflow_name,
        workflowVersion: r.workflow_version,
        status: r.status,
        currentNodeId: r.current_node_id,
        contactPhone: r.contact_phone,
        error: r.state?.error?.message ?? null,
        createdAt: isoOrNull(r.created_at),
        updatedAt: isoOrNull(r.updated_at),
        finishedAt: isoOrNull(r.finished_at),
      })),
      pagination: { page: query.page, pageSize: query.pageSize, total, totalPages: Math.ceil(total / query.pageSize) },
    };
  }

  async getRun(accountId: string, runId: string) {
    const [r]: RunRow[] = isUuid(runId)
      ? await this.dataSource.query(`SELECT * FROM workflow_runs WHERE id = $1 AND account_id = $2`, [runId, accountId])
      : [];
    if (!r) throw new NotFoundException(RUN_NOT_FOUND);
    const state = r.state;
    const waiting = state?.waitingFor ?? null;
    return {
      runId: r.id,
      workflowId: Number(r.workflow_id),
      workflowVersion: r.workflow_version,
      status: r.status,
      currentNodeId: r.current_node_id,
      waitingFor: waiting
        ? {
            kind: waiting.kind,
            nodeId: waiting.nodeId,
            seq: waiting.seq,
            ...(waiting.kind === 'effect' ? { effect: waiting.effect.type } : {}),
            ...(r.wake_at ? { until: isoOrNull(r.wake_at) } : {}),
          }
        : null,
      error: state?.error ?? null,
      payload: r.payload,
      contact: state?.context.contact ?? (r.contact_phone ? { phone: r.contact_phone } : {}),
      reply: state?.context.reply ?? null,
      vars: state?.context.vars ?? {},
      history: state?.history ?? [],
      historyCount: state?.historyCount ?? 0,
      createdAt: isoOrNull(r.created_at),
      updatedAt: isoOrNull(r.updated_at),
      finishedAt: isoOrNull(r.finished_at),
    };
  }
}

interface ReplySender {
  accountId: string;
  phone: string;
  messagingPhoneId: string | null;
  /** the platform's id of the message: the keyword run it started is no run it answers */
  messageId: string | null;
}

interface ReplyTargetRow {
  id: string;
  status: string;
  waiting_kind: string | null;
  waiting_seq: number | null;
}
