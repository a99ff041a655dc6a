import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { ListRunsQuery, SaveWorkflowDto } from './dto';
import { WorkflowRunsService } from './workflow-runs.service';
import { WorkflowsService } from './workflows.service';

@ApiTags('Workflows')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/workflows')
@Controller()
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runs: WorkflowRunsService,
  ) {}

  @Get('workflows/active')
  @ApiOperation({ summary: "The account's active workflows (SPEC §4)" })
  async active(@AccountId() accountId: string) {
    return { message: 'Active Workflows :', data: await this.workflows.listActive(accountId) };
  }

  @Post('v1/workflows')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create (mode create) or edit (mode edit, with id) a workflow; an edit with a definition creates a new version' })
  async save(@AccountId() accountId: string, @Body() body: SaveWorkflowDto) {
    return { success: true, data: await this.workflows.save(accountId, body) };
  }

  @Get('v1/workflows/:id')
  @ApiOperation({ summary: 'A workflow with its current definition, version and webhook URL' })
  async get(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.workflows.getWithDefinition(accountId, id) };
  }

  @Get('v1/workflows/:id/runs')
  @ApiOperation({ summary: "A workflow's runs, newest first (page, pageSize ≤ 100, status filter)" })
  async listRuns(@AccountId() accountId: string, @Param('id') id: string, @Query() query: ListRunsQuery) {
    return { success: true, ...(await this.runs.listRuns(accountId, id, query)) };
  }

  @Get('v1/workflow-runs/:runId')
  @ApiOperation({ summary: 'A run: status, current node, what it waits for, history, error, input payload' })
  async getRun(@AccountId() accountId: string, @Param('runId') runId: string) {
    return { success: true, data: await this.runs.getRun(accountId, runId) };
  }
}
