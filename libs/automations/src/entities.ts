import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { RunState, WorkflowDefinition } from '@switchboard/engine';
import type { WorkflowLayout } from './layout';

/** A workflow: its name, state and public webhook identifier. The definition lives in workflow_versions. */
@Entity('workflows')
export class Workflow {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column()
  name: string;

  @Column({ name: 'is_active' })
  isActive: boolean;

  /** Unguessable: the last path segment of the inbound webhook URL. */
  @Column()
  identifier: string;

  /** `webhook` or `keyword` (copied from the current definition, so keyword triggers can be found fast). */
  @Column({ name: 'trigger_type' })
  triggerType: string;

  @Column({ name: 'current_version', type: 'int' })
  currentVersion: number;

  /** Archived (DELETE /v1/workflows/{id}): inactive and gone from the API; its runs stay readable. */
  @Column({ name: 'archived_at', type: 'timestamptz', nullable: true })
  archivedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** One immutable version of a workflow's definition; runs pin the version they started with. */
@Entity('workflow_versions')
export class WorkflowVersion {
  @PrimaryColumn({ name: 'workflow_id', type: 'bigint' })
  workflowId: string;

  @PrimaryColumn({ type: 'int' })
  version: number;

  @Column({ type: 'json' })
  definition: WorkflowDefinition;

  /** Node positions for the builder (libs/automations/src/layout.ts); the engine ignores it. */
  @Column({ type: 'json', nullable: true })
  layout: WorkflowLayout | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export const RUN_STATUSES = ['pending', 'running', 'waiting', 'completed', 'failed'] as const;
export type WorkflowRunStatus = (typeof RUN_STATUSES)[number];

/**
 * One execution of a workflow version. `state` is the engine's RunState (null while `pending`, i.e. accepted
 * but not started yet); the other columns are copies of what the driver needs to query.
 */
@Entity('workflow_runs')
export class WorkflowRun {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column({ name: 'workflow_id', type: 'bigint' })
  workflowId: string;

  @Column({ name: 'workflow_version', type: 'int' })
  workflowVersion: number;

  @Column({ type: 'text' })
  status: WorkflowRunStatus;

  @Column({ type: 'json', nullable: true })
  payload: unknown;

  @Column({ type: 'json', nullable: true })
  state: RunState | null;

  @Column({ name: 'current_node_id', type: 'text', nullable: true })
  currentNodeId: string | null;

  @Column({ name: 'contact_id', type: 'text', nullable: true })
  contactId: string | null;

  @Column({ name: 'contact_phone', type: 'text', nullable: true })
  contactPhone: string | null;

  @Column({ name: 'messaging_phone_id', type: 'text', nullable: true })
  messagingPhoneId: string | null;

  @Column({ name: 'waiting_kind', type: 'text', nullable: true })
  waitingKind: 'effect' | 'timer' | 'reply' | null;

  @Column({ name: 'waiting_seq', type: 'int', nullable: true })
  waitingSeq: number | null;

  @Column({ name: 'wake_at', type: 'timestamptz', nullable: true })
  wakeAt: Date | null;

  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

export const AUTOMATION_ENTITIES = [Workflow, WorkflowVersion, WorkflowRun];
