import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { IsIntInRange, PaginationQuery, toStrictInt } from '@switchboard/core';
import { Transform } from 'class-transformer';
import { RUN_STATUSES, type WorkflowRunStatus } from './entities';

/**
 * Body of POST /v1/workflows. `trigger`, `startNodeId` and `nodes` are the engine's definition format
 * (libs/engine/README.md), validated by `validateDefinition` in the service, not here.
 */
export class SaveWorkflowDto {
  @ApiProperty({ enum: ['create', 'edit'] })
  @IsIn(['create', 'edit'], { message: 'mode must be one of: create, edit' })
  mode: 'create' | 'edit';

  @ApiPropertyOptional({ description: 'required with mode edit: the workflow to edit' })
  @ValidateIf((o: SaveWorkflowDto) => o.mode === 'edit' || o.id !== undefined)
  @Max(Number.MAX_SAFE_INTEGER) // larger ids cannot be ours (and would overflow bigint)
  @Min(1)
  @IsInt({ message: 'id must be an integer (the workflow to edit)' }) // listed last: its message comes first
  id?: number;

  @ApiPropertyOptional({ description: 'required with mode create', maxLength: 200 })
  @ValidateIf((o: SaveWorkflowDto) => o.mode === 'create' || o.name !== undefined)
  @IsString()
  @IsNotEmpty()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ default: true })
  @ValidateIf((o: SaveWorkflowDto) => o.isActive !== undefined) // null is refused (it was written as NULL: a 500)
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ description: '{ "type": "webhook" } or { "type": "keyword", "keywords": [...] }' })
  @Allow()
  trigger?: unknown;

  @ApiPropertyOptional({ type: 'string', description: 'the id of the first node (one of nodes[].id)' })
  @Allow()
  startNodeId?: unknown;

  @ApiPropertyOptional({
    description: 'the child automations (nodes); see docs/automations.md',
    type: 'array',
    items: { type: 'object' },
  })
  @Allow()
  nodes?: unknown;

  @ApiPropertyOptional({
    description:
      'mode create only: true creates the workflow unpublished (version 0) with this definition as its draft, which need not be valid yet (the console\'s "New workflow"); publish it with POST /v1/workflows/{id}/publish',
  })
  @ValidateIf((o: SaveWorkflowDto) => o.asDraft !== undefined)
  @IsBoolean()
  asDraft?: boolean;

  @ApiPropertyOptional({
    description:
      'node positions for the console: { nodes: { <nodeId>: { x, y } }, trigger?: { x, y } }; ignored by the engine',
  })
  @Allow()
  layout?: unknown;
}

export class ListWorkflowsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({ description: 'filter by name (case-insensitive substring)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;
}

export class SaveDraftDto {
  @ApiProperty({ description: 'the draft revision you last saw (0 when there is no draft yet); a stale one gets 409' })
  @Allow()
  revision: number;

  @ApiPropertyOptional({ maxLength: 200 })
  @Allow()
  name?: string;

  @ApiProperty({
    description: '{ trigger, startNodeId, nodes }: may be incomplete (drafts are not validated until publish)',
  })
  @Allow()
  definition: unknown;

  @ApiPropertyOptional({ description: '{ nodes: { <nodeId>: { x, y } }, trigger?: { x, y } }' })
  @Allow()
  layout?: unknown;
}

export class PublishDraftDto {
  @ApiProperty({ description: 'the draft revision to publish; a stale one gets 409' })
  @Allow()
  revision: number;

  @ApiPropertyOptional({
    description:
      'the live version the publish may replace (default: the one the draft was started from). A version published ' +
      'since (through POST /v1/workflows, say) gets 409 with currentVersion, so that its changes are not undone unseen',
  })
  @Allow()
  replaces?: number;
}

export class TestRunDto {
  @ApiPropertyOptional({
    description: 'the payload the run starts with, as if POSTed to the webhook',
    type: 'object',
    additionalProperties: true,
  })
  @Allow()
  payload?: unknown;
}

export class ListRunsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES, { message: `status must be one of: ${RUN_STATUSES.join(', ')}` })
  status?: WorkflowRunStatus;
}

/** GET /v1/workflow-runs?contact_id=: the runs a contact is in, newest first. */
export class ListContactRunsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiProperty({ type: 'integer', example: 42, description: 'a contact of your account (GET /v2/contacts)' })
  @Transform(toStrictInt)
  @IsIntInRange(1, Number.MAX_SAFE_INTEGER, { message: 'contact_id is required: a positive integer' })
  contact_id: number;

  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES, { message: `status must be one of: ${RUN_STATUSES.join(', ')}` })
  status?: WorkflowRunStatus;
}

export class ContactRunItem {
  @ApiProperty({ example: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' }) runId: string;
  @ApiProperty({ example: 7 }) workflowId: number;
  @ApiProperty({ example: 'Order check' }) workflowName: string;
  @ApiProperty({ example: 3 }) workflowVersion: number;
  @ApiProperty({ enum: RUN_STATUSES, example: 'waiting' }) status: string;
  @ApiProperty({ example: 'wait_for_reply_1', nullable: true, type: String }) currentNodeId: string | null;
  @ApiProperty({ example: '15550102030', nullable: true, type: String }) contactPhone: string | null;
  @ApiProperty({ example: null, nullable: true, type: String }) error: string | null;
  @ApiProperty({ example: '2026-11-25T09:00:00.000Z' }) createdAt: string;
  @ApiProperty({ example: '2026-11-25T09:00:01.000Z' }) updatedAt: string;
  @ApiProperty({ example: null, nullable: true, type: String }) finishedAt: string | null;
}

export class ContactRunsPagination {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) pageSize: number;
  @ApiProperty({ example: 1 }) total: number;
  @ApiProperty({ example: 1 }) totalPages: number;
}

export class ContactRunsResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: [ContactRunItem] }) data: ContactRunItem[];
  @ApiProperty({ type: ContactRunsPagination }) pagination: ContactRunsPagination;
}

export class SandboxReplyDto {
  @ApiProperty({ description: 'what the customer writes' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  text: string;
}
