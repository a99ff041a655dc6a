import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AppConfig, validationException, type FieldError } from '@switchboard/core';
import { templateNamesUsed, validateDefinition, type WorkflowDefinition } from '@switchboard/engine';
import { randomBytes } from 'node:crypto';
import { DataSource, IsNull, MoreThan, Repository } from 'typeorm';
import type { ListWorkflowsQuery, SaveWorkflowDto } from './dto';
import { parseLayout } from './layout';
import { Workflow, WorkflowVersion } from './entities';
import { TemplatesService } from '@switchboard/templates';

/** A validation error of a definition: `nodeId` names the node when there is one. */
export interface DefinitionFieldError extends FieldError {
  nodeId?: string;
}

export const WORKFLOW_NOT_FOUND = { message: 'Workflow not found' };

/** A bigint id from a path: anything else is simply not found. */
export function parseId(value: string): string | null {
  return /^[1-9][0-9]{0,17}$/.test(value) ? value : null;
}

@Injectable()
export class WorkflowsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @InjectRepository(Workflow) private readonly workflows: Repository<Workflow>,
    @InjectRepository(WorkflowVersion) private readonly versions: Repository<WorkflowVersion>,
    private readonly templates: TemplatesService,
  ) {}

  webhookUrl(identifier: string): string {
    return `${this.config.inboundWebhookUrl}/webhook/workflow/${identifier}`;
  }

  /**
   * Validates the definition (engine rules, then template names against the account's templates) and throws a
   * 400 naming every node and field at fault. A draft is checked whole, as stored, so that a field the engine does
   * not know is refused as the draft's `errors` show it, not dropped.
   */
  async checkDefinition(accountId: string, definition: unknown): Promise<WorkflowDefinition> {
    const result = validateDefinition(definition);
    if (!result.ok) {
      const errors: DefinitionFieldError[] = result.errors.map((e) => ({
        ...(e.nodeId !== undefined ? { nodeId: e.nodeId } : {}),
        field: e.field,
        message: e.message,
      }));
      throw this.definitionException(errors);
    }
    const unusable = new Map(
      (await this.templates.unusableTemplates(accountId, templateNamesUsed(result.definition))).map((t) => [
        t.name,
        t.status,
      ]),
    );
    if (unusable.size > 0) {
      const errors = result.definition.nodes
        .filter(
          (n): n is Extract<typeof n, { type: 'send_template' }> =>
            n.type === 'send_template' && unusable.has(n.templateName),
        )
        .map((n) => {
          const status = unusable.get(n.templateName);
          const message = status
            ? `template "${n.templateName}" is ${status}; only an APPROVED template can be sent`
            : `template "${n.templateName}" does not exist in this account`;
          return { nodeId: n.id, field: 'templateName', message };
        });
      throw this.definitionException(errors);
    }
    return result.definition;
  }

  private definitionException(errors: DefinitionFieldError[]) {
    const first = errors[0];
    const exception = validationException(errors);
    const body = exception.getResponse() as Record<string, unknown>;
    body.message = first
      ? `${first.nodeId !== undefined ? `node "${first.nodeId}": ` : ''}${first.field ? `${first.field}: ` : ''}${first.message}`
      : 'Invalid workflow definition';
    return exception;
  }

  async save(accountId: string, body: SaveWorkflowDto) {
    if (body.mode === 'edit' && body.asDraft)
      // it would have gone live: an edit publishes at once
      throw validationException([
        {
          field: 'asDraft',
          message: 'asDraft is for mode create only: save a draft with PUT /v1/workflows/{id}/draft',
        },
      ]);
    if (body.mode === 'create' && body.asDraft) return this.createUnpublished(accountId, body);
    const hasDefinition = body.trigger !== undefined || body.startNodeId !== undefined || body.nodes !== undefined;
    const definition =
      body.mode === 'create' || hasDefinition
        ? await this.checkDefinition(accountId, {
            trigger: body.trigger,
            startNodeId: body.startNodeId,
            nodes: body.nodes,
          })
        : null;
    const layout = parseLayout(body.layout);

    return this.dataSource.transaction(async (tx) => {
      let workflow: Workflow;
      if (body.mode === 'create') {
        workflow = await tx.getRepository(Workflow).save(
          tx.getRepository(Workflow).create({
            accountId,
            name: body.name!.trim(),
            isActive: body.isActive ?? true,
            identifier: randomBytes(24).toString('base64url'),
            triggerType: definition!.trigger.type,
            currentVersion: 1,
          }),
        );
      } else {
        const found = await tx
          .getRepository(Workflow)
          .createQueryBuilder('w')
          .setLock('pessimistic_write')
          .where('w.id = :id AND w.account_id = :accountId AND w.archived_at IS NULL', {
            id: String(body.id),
            accountId,
          })
          .getOne();
        if (!found) throw new NotFoundException(WORKFLOW_NOT_FOUND);
        workflow = found;
        if (body.name !== undefined) workflow.name = body.name.trim();
        if (body.isActive !== undefined) workflow.isActive = body.isActive;
        if (definition) {
          workflow.currentVersion += 1;
          workflow.triggerType = definition.trigger.type;
        }
        workflow = await tx.getRepository(Workflow).save(workflow);
      }
      if (definition) {
        // Stored as sent (json keeps key order; template variables are filled in key order).
        await tx.query(
          `INSERT INTO workflow_versions (workflow_id, version, definition, layout) VALUES ($1, $2, $3, $4)`,
          [workflow.id, workflow.currentVersion, JSON.stringify(definition), layout ? JSON.stringify(layout) : null],
        );
      }
      return this.summary(workflow);
    });
  }

  /** A new workflow with only a draft (version 0): its webhook answers 404 until the draft is published. */
  private async createUnpublished(accountId: string, body: SaveWorkflowDto) {
    const definition = {
      trigger: body.trigger ?? { type: 'webhook' },
      startNodeId: body.startNodeId ?? '',
      nodes: body.nodes ?? [],
    };
    if (typeof definition.trigger !== 'object' || definition.trigger === null)
      throw validationException([{ field: 'trigger', message: 'trigger must be an object' }]);
    if (JSON.stringify(definition).length > 1024 * 1024)
      throw validationException([{ field: 'nodes', message: 'the definition is larger than 1 MiB' }]);
    const layout = parseLayout(body.layout);
    const triggerType = (definition.trigger as { type?: unknown }).type === 'keyword' ? 'keyword' : 'webhook';
    return this.dataSource.transaction(async (tx) => {
      const workflow = await tx.getRepository(Workflow).save(
        tx.getRepository(Workflow).create({
          accountId,
          name: body.name!.trim(),
          isActive: body.isActive ?? true,
          identifier: randomBytes(24).toString('base64url'),
          triggerType,
          currentVersion: 0,
        }),
      );
      await tx.query(
        `INSERT INTO workflow_drafts (workflow_id, revision, base_version, name, definition, layout) VALUES ($1, 1, 0, $2, $3, $4)`,
        [workflow.id, workflow.name, JSON.stringify(definition), layout ? JSON.stringify(layout) : null],
      );
      // revision 1 handed out (WorkflowDraftsService: revisions are never reused)
      await tx.query(`UPDATE workflows SET draft_revision = 1 WHERE id = $1`, [workflow.id]);
      return { ...this.summary(workflow), hasDraft: true };
    });
  }

  summary(workflow: Workflow) {
    return {
      id: Number(workflow.id),
      name: workflow.name,
      isActive: workflow.isActive,
      version: workflow.currentVersion,
      identifier: workflow.identifier,
      webhookUrl: this.webhookUrl(workflow.identifier),
    };
  }

  async listActive(accountId: string) {
    const rows = await this.workflows.find({
      // published ones only: a workflow created as a draft (version 0) cannot be started until it is
      where: { accountId, isActive: true, archivedAt: IsNull(), currentVersion: MoreThan(0) },
      order: { id: 'ASC' },
    });
    return rows.map((w) => ({ id: Number(w.id), name: w.name, isActive: w.isActive }));
  }

  /** The caller's workflow, or 404. */
  async get(accountId: string, id: string): Promise<Workflow> {
    const workflowId = parseId(id);
    const workflow = workflowId
      ? await this.workflows.findOneBy({ id: workflowId, accountId, archivedAt: IsNull() })
      : null;
    if (!workflow) throw new NotFoundException(WORKFLOW_NOT_FOUND);
    return workflow;
  }

  async getWithDefinition(accountId: string, id: string) {
    const workflow = await this.get(accountId, id);
    const hasDraft =
      (await this.dataSource.query(`SELECT 1 FROM workflow_drafts WHERE workflow_id = $1`, [workflow.id])).length > 0;
    if (workflow.currentVersion === 0) {
      // Not published yet: everything is in the draft.
      return {
        ...this.summary(workflow),
        trigger: null,
        startNodeId: null,
        nodes: [],
        layout: null,
        hasDraft,
        createdAt: workflow.createdAt.toISOString(),
        updatedAt: workflow.updatedAt.toISOString(),
      };
    }
    const version = await this.versions.findOneByOrFail({ workflowId: workflow.id, version: workflow.currentVersion });
    return {
      ...this.summary(workflow),
      trigger: version.definition.trigger,
      startNodeId: version.definition.startNodeId,
      nodes: version.definition.nodes,
      layout: version.layout,
      hasDraft,
      createdAt: workflow.createdAt.toISOString(),
      updatedAt: workflow.updatedAt.toISOString(),
    };
  }

  /**
   * The account's workflows (archived ones left out), newest first, with what the console's list shows: the runs
   * waiting now and those that failed in the last 24 hours.
   */
  async list(accountId: string, query: ListWorkflowsQuery) {
    const params: unknown[] = [accountId];
    let filter = '';
    if (query.search) {
      params.push(`%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      filter = `AND w.name ILIKE $${params.length}`;
    }
    const [{ total }] = await this.dataSource.query(
      `SELECT count(*)::int AS total FROM workflows w WHERE w.account_id = $1 AND w.archived_at IS NULL ${filter}`,
      params,
    );
    const rows: Array<{
      id: string;
      name: string;
      is_active: boolean;
      current_version: number;
      trigger_type: string;
      identifier: string;
      has_draft: boolean;
      waiting: number;
      failed: number;
      updated_at: Date;
    }> = await this.dataSource.query(
      `SELECT w.id, w.name, w.is_active, w.current_version, w.trigger_type, w.identifier, w.updated_at,
                EXISTS (SELECT 1 FROM workflow_drafts d WHERE d.workflow_id = w.id) AS has_draft,
                (SELECT count(*)::int FROM workflow_runs r WHERE r.workflow_id = w.id AND r.status = 'waiting') AS waiting,
                (SELECT count(*)::int FROM workflow_runs r WHERE r.workflow_id = w.id AND r.status = 'failed' AND r.finished_at > now() - interval '24 hours') AS failed
           FROM workflows w WHERE w.account_id = $1 AND w.archived_at IS NULL ${filter}
          ORDER BY w.updated_at DESC, w.id DESC LIMIT ${query.pageSize} OFFSET ${(query.page - 1) * query.pageSize}`,
      params,
    );
    return {
      data: rows.map((w) => ({
        id: Number(w.id),
        name: w.name,
        isActive: w.is_active,
        version: w.current_version,
        triggerType: w.trigger_type,
        webhookUrl: this.webhookUrl(w.identifier),
        hasDraft: w.has_draft,
        runsWaiting: w.waiting,
        runsFailed24h: w.failed,
        updatedAt: new Date(w.updated_at).toISOString(),
      })),
      pagination: { page: query.page, pageSize: query.pageSize, total, totalPages: Math.ceil(total / query.pageSize) },
    };
  }

  /** Archives the workflow: inactive (its webhook answers 404), gone from every workflow endpoint; runs stay readable. */
  async archive(accountId: string, id: string): Promise<void> {
    const workflow = await this.get(accountId, id);
    await this.dataSource.query(
      `UPDATE workflows SET archived_at = now(), is_active = false, updated_at = now() WHERE id = $1 AND archived_at IS NULL`,
      [workflow.id],
    );
  }
}
