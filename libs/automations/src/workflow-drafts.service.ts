import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { validateDefinition } from '@switchboard/engine';
import { DataSource, type EntityManager } from 'typeorm';
import { parseLayout, type WorkflowLayout } from './layout';
import { WORKFLOW_NOT_FOUND, WorkflowsService } from './workflows.service';

export const NO_DRAFT = { message: 'This workflow has no draft' };
export const VERSION_NOT_FOUND = { message: 'Workflow version not found' };
/** Drafts are work in progress, so they are only bounded, not validated; 1 MiB of JSON is far past 500 nodes. */
const MAX_DRAFT_BYTES = 1024 * 1024;

interface LockedWorkflow {
  id: string;
  name: string;
  current_version: number;
  draft_revision: number;
}

interface DraftRow {
  workflow_id: string;
  revision: number;
  base_version: number;
  name: string;
  definition: unknown;
  layout: WorkflowLayout | null;
  updated_at: Date;
}

export interface DraftInput {
  /** The revision the caller last saw: 0 when it started from the published version. */
  revision: number;
  name?: string;
  definition: unknown;
  layout?: unknown;
}

/**
 * The builder's storage (docs/console.md "Drafts and versions"): one server-side draft per workflow, saved with
 * optimistic concurrency (a stale `revision` gets 409), published as the next immutable version, discarded, or
 * recreated from an earlier version. Editing never touches runs: they keep the version they started with.
 */
@Injectable()
export class WorkflowDraftsService {
  constructor(
    private readonly db: DataSource,
    private readonly workflows: WorkflowsService,
  ) {}

  async getDraft(accountId: string, workflowId: string) {
    const workflow = await this.workflows.get(accountId, workflowId);
    const [row]: DraftRow[] = await this.db.query(`SELECT * FROM workflow_drafts WHERE workflow_id = $1`, [
      workflow.id,
    ]);
    if (!row) throw new NotFoundException(NO_DRAFT);
    return this.shape(row);
  }

  /** Saves the draft when `revision` is the current one (0: there is none yet); returns the new revision. */
  async saveDraft(accountId: string, workflowId: string, input: DraftInput) {
    if (!Number.isInteger(input.revision) || input.revision < 0)
      throw badField('revision', 'revision must be an integer ≥ 0 (0 when there is no draft yet)');
    if (typeof input.definition !== 'object' || input.definition === null || Array.isArray(input.definition))
      throw badField('definition', 'definition must be an object { trigger, startNodeId, nodes }');
    if (JSON.stringify(input.definition).length > MAX_DRAFT_BYTES)
      throw badField('definition', 'definition is larger than 1 MiB');
    if (
      input.name !== undefined &&
      (typeof input.name !== 'string' || input.name.trim() === '' || input.name.length > 200)
    )
      throw badField('name', 'name must be a non-empty string of at most 200 characters');
    const layout = parseLayout(input.layout);
    return this.db.transaction(async (tx) => {
      const workflow = await this.lockWorkflow(tx, accountId, workflowId);
      const [current]: DraftRow[] = await tx.query(`SELECT revision FROM workflow_drafts WHERE workflow_id = $1`, [
        workflow.id,
      ]);
      const currentRevision = current?.revision ?? 0;
      if (currentRevision !== input.revision) throw staleDraft(currentRevision);
      const revision = await this.nextRevision(tx, workflow);
      const [row]: DraftRow[] = await tx.query(
        `INSERT INTO workflow_drafts (workflow_id, revision, base_version, name, definition, layout) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (workflow_id) DO UPDATE SET revision = EXCLUDED.revision, name = EXCLUDED.name, definition = EXCLUDED.definition,
           layout = EXCLUDED.layout, updated_at = now()
         RETURNING *`,
        [
          workflow.id,
          revision,
          workflow.current_version,
          input.name?.trim() ?? workflow.name,
          JSON.stringify(input.definition),
          layout ? JSON.stringify(layout) : null,
        ],
      );
      return this.shape(row);
    });
  }

  async discardDraft(accountId: string, workflowId: string): Promise<void> {
    const workflow = await this.workflows.get(accountId, workflowId);
    // DELETE ... RETURNING answers [rows, rowCount] through TypeORM.
    const [deleted]: [unknown[], number] = await this.db.query(
      `DELETE FROM workflow_drafts WHERE workflow_id = $1 RETURNING workflow_id`,
      [workflow.id],
    );
    if (deleted.length === 0) throw new NotFoundException(NO_DRAFT);
  }

  /**
   * Publishes the draft as the next version: validated like POST /v1/workflows (400 naming the node and field),
   * then the draft is gone. `revision` must be the draft's current one (409 otherwise). The live version must be the
   * one the draft was started from, or `replaces`: a version published meanwhile (an edit through the API, which
   * leaves drafts alone) gets 409 instead of having its changes undone by a draft that never saw them.
   */
  async publish(accountId: string, workflowId: string, revision: unknown, replaces?: unknown) {
    if (typeof revision !== 'number' || !Number.isInteger(revision) || revision < 1)
      throw badField('revision', 'revision must be the draft revision to publish (an integer ≥ 1)');
    if (replaces !== undefined && (typeof replaces !== 'number' || !Number.isInteger(replaces) || replaces < 0))
      throw badField('replaces', 'replaces must be the live version the publish replaces (an integer ≥ 0)');
    const draft = await this.getDraft(accountId, workflowId);
    if (draft.revision !== revision) throw staleDraft(draft.revision);
    const definition = await this.workflows.checkDefinition(accountId, draft.definition);
    return this.db.transaction(async (tx) => {
      // The workflow row lock orders publish against saves: the draft read here is the one published.
      const workflow = await this.lockWorkflow(tx, accountId, workflowId);
      const [now]: DraftRow[] = await tx.query(`SELECT revision FROM workflow_drafts WHERE workflow_id = $1`, [
        workflow.id,
      ]);
      if (now?.revision !== revision) throw staleDraft(now?.revision ?? 0);
      const base = (replaces as number | undefined) ?? draft.baseVersion;
      if (workflow.current_version !== base) throw replacedSince(workflow.current_version, base);
      const version = workflow.current_version + 1;
      await tx.query(
        `INSERT INTO workflow_versions (workflow_id, version, definition, layout) VALUES ($1, $2, $3, $4)`,
        [workflow.id, version, JSON.stringify(definition), draft.layout ? JSON.stringify(draft.layout) : null],
      );
      await tx.query(
        `UPDATE workflows SET current_version = $2, trigger_type = $3, name = $4, updated_at = now() WHERE id = $1`,
        [workflow.id, version, definition.trigger.type, draft.name],
      );
      await tx.query(`DELETE FROM workflow_drafts WHERE workflow_id = $1`, [workflow.id]);
      return { id: Number(workflow.id), version };
    });
  }

  async listVersions(accountId: string, workflowId: string) {
    const workflow = await this.workflows.get(accountId, workflowId);
    const rows: Array<{ version: number; created_at: Date; node_count: number }> = await this.db.query(
      `SELECT version, created_at, json_array_length(definition->'nodes') AS node_count FROM workflow_versions WHERE workflow_id = $1 ORDER BY version DESC`,
      [workflow.id],
    );
    return rows.map((r) => ({
      version: r.version,
      current: r.version === workflow.currentVersion,
      nodeCount: r.node_count,
      createdAt: r.created_at.toISOString(),
    }));
  }

  async getVersion(accountId: string, workflowId: string, versionParam: string) {
    const workflow = await this.workflows.get(accountId, workflowId);
    const version = /^[1-9][0-9]{0,8}$/.test(versionParam) ? Number(versionParam) : null;
    const [row]: Array<{
      version: number;
      definition: Record<string, unknown>;
      layout: WorkflowLayout | null;
      created_at: Date;
    }> = version
      ? await this.db.query(
          `SELECT version, definition, layout, created_at FROM workflow_versions WHERE workflow_id = $1 AND version = $2`,
          [workflow.id, version],
        )
      : [];
    if (!row) throw new NotFoundException(VERSION_NOT_FOUND);
    return {
      id: Number(workflow.id),
      version: row.version,
      current: row.version === workflow.currentVersion,
      definition: row.definition,
      layout: row.layout,
      createdAt: row.created_at.toISOString(),
    };
  }

  /**
   * Makes an earlier (or the current) version the draft, replacing any draft there was. Its base is the live version:
   * restoring is choosing to replace that one.
   */
  async restore(accountId: string, workflowId: string, versionParam: string) {
    const source = await this.getVersion(accountId, workflowId, versionParam);
    return this.db.transaction(async (tx) => {
      const workflow = await this.lockWorkflow(tx, accountId, workflowId);
      const [row]: DraftRow[] = await tx.query(
        `INSERT INTO workflow_drafts (workflow_id, revision, base_version, name, definition, layout) VALUES ($1, $6, $2, $3, $4, $5)
         ON CONFLICT (workflow_id) DO UPDATE SET revision = EXCLUDED.revision, base_version = EXCLUDED.base_version,
           definition = EXCLUDED.definition, layout = EXCLUDED.layout, updated_at = now()
         RETURNING *`,
        [
          workflow.id,
          workflow.current_version,
          workflow.name,
          JSON.stringify(source.definition),
          source.layout ? JSON.stringify(source.layout) : null,
          await this.nextRevision(tx, workflow),
        ],
      );
      return this.shape(row);
    });
  }

  /** The workflow row, locked; 404 when it is not the account's or was archived (even a moment ago). */
  private async lockWorkflow(tx: EntityManager, accountId: string, workflowId: string) {
    await this.workflows.get(accountId, workflowId);
    const [workflow]: LockedWorkflow[] = await tx.query(
      `SELECT id, name, current_version, draft_revision FROM workflows
        WHERE id = $1 AND account_id = $2 AND archived_at IS NULL FOR UPDATE`,
      [workflowId, accountId],
    );
    if (!workflow) throw new NotFoundException(WORKFLOW_NOT_FOUND);
    return workflow;
  }

  /**
   * The next draft revision of a (locked) workflow. Never one handed out before, even after a publish or discard
   * deleted the draft: an editor still holding a deleted draft's revision gets a 409 instead of overwriting a new one.
   */
  private async nextRevision(tx: EntityManager, workflow: LockedWorkflow): Promise<number> {
    const revision = workflow.draft_revision + 1;
    await tx.query(`UPDATE workflows SET draft_revision = $2 WHERE id = $1`, [workflow.id, revision]);
    workflow.draft_revision = revision;
    return revision;
  }

  private shape(row: DraftRow) {
    const check = validateDefinition(row.definition);
    return {
      workflowId: Number(row.workflow_id),
      revision: row.revision,
      baseVersion: row.base_version,
      name: row.name,
      definition: row.definition,
      layout: row.layout,
      /** The engine's verdict on the draft as it stands (the same code the console runs); publish needs none. */
      errors: check.ok ? [] : check.errors,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }
}

function replacedSince(currentVersion: number, baseVersion: number) {
  return new ConflictException({
    statusCode: 409,
    message:
      `Version ${currentVersion} was published after this draft was started from version ${baseVersion}: ` +
      `publishing would undo its changes. Compare them, then publish with replaces: ${currentVersion}`,
    currentVersion,
    baseVersion,
  });
}

function badField(field: string, message: string) {
  return new BadRequestException({ statusCode: 400, message, errors: [{ field, message }] });
}

function staleDraft(currentRevision: number) {
  return new ConflictException({
    message: `The draft was changed elsewhere (it is at revision ${currentRevision}): reload it before saving`,
    currentRevision,
  });
}
