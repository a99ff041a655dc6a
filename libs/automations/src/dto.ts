import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PaginationQuery } from '@switchboard/core';
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
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ description: '{ "type": "webhook" } or { "type": "keyword", "keywords": [...] }' })
  @Allow()
  trigger?: unknown;

  @ApiPropertyOptional()
  @Allow()
  startNodeId?: unknown;

  @ApiPropertyOptional({ description: 'the child automations (nodes); see docs/automations.md', type: 'array', items: { type: 'object' } })
  @Allow()
  nodes?: unknown;
}

export class ListRunsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES, { message: `status must be one of: ${RUN_STATUSES.join(', ')}` })
  status?: WorkflowRunStatus;
}
