import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AppConfig, validationException, type FieldError } from '@switchboard/core';
import { templateNamesUsed, validateDefinition, type WorkflowDefinition } from '@switchboard/engine';
import { randomBytes } from 'node:crypto';
import { DataSource, Repository } from 'typeorm';
import type { SaveWorkflowDto } from './dto';
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
   * 400 naming every node and field at fault.
   */
  async checkDefinition(accountId: string, body: SaveWorkflowDto): Promise<WorkflowDefinition> {
    const result = validateDefinition({ trigger: body.trigger, startNodeId: body.startNodeId, nodes: body.nodes });
    if (!result.ok) {
      const errors: DefinitionFieldError[] = result.errors.map((e) => ({ ...(e.nodeId !== undefined ? { nodeId: e.nodeId } : {}), field: e.field, message: e.message }));
      throw this.definitionException(errors);
    }
    const unusable = new Map((await this.templates.unusableTemplates(accountId, templateNamesUsed(result.definition))).map((t) => [t.name, t.status]));
    if (unusable.size > 0) {
      const errors = result.definition.nodes
        .filter((n): n is Extract<typeof n, { type: 'send_template' }> => n.type === 'send_template' && unusable.has(n.templateName))
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
    body.message = first ? `${first.nodeId !== undefined ? `node "${first.nodeId}": ` : ''}${first.field ? `${first.field}: ` : ''}${first.message}` : 'Invalid workflow definition';
    return exception;
  }

  async save(accountId: string, body: SaveWorkflowDto) {
    const hasDefinition = body.trigger !== undefined || body.startNodeId !== undefined || body.nodes !== undefined;
    const definition = body.mode === 'create' || hasDefinition ? await this.checkDefinition(accountId, body) : null;

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
          .where('w.id = :id AND w.account_id = :accountId', { id: String(body.id), accountId })
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
        await tx.query(`INSERT INTO workflow_versions (workflow_id, version, definition) VALUES ($1, $2, $3)`, [
          workflow.id,
          workflow.currentVersion,
          JSON.stringify(definition),
        ]);
      }
      return this.summary(workflow);
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
    const rows = await this.workflows.find({ where: { accountId, isActive: true }, order: { id: 'ASC' } });
    return rows.map((w) => ({ id: Number(w.id), name: w.name, isActive: w.isActive }));
  }

  /** The caller's workflow, or 404. */
  async get(accountId: string, id: string): Promise<Workflow> {
    const workflowId = parseId(id);
    const workflow = workflowId ? await this.workflows.findOneBy({ id: workflowId, accountId }) : null;
    if (!workflow) throw new NotFoundException(WORKFLOW_NOT_FOUND);
    return workflow;
  }

  async getWithDefinition(accountId: string, id: string) {
    const workflow = await this.get(accountId, id);
    const version = await this.versions.findOneByOrFail({ workflowId: workflow.id, version: workflow.currentVersion });
    return {
      ...this.summary(workflow),
      trigger: version.definition.trigger,
      startNodeId: version.definition.startNodeId,
      nodes: version.definition.nodes,
      createdAt: workflow.createdAt.toISOString(),
      updatedAt: workflow.updatedAt.toISOString(),
    };
  }
}
