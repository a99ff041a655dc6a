import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import type { FastifyReply } from 'fastify';
import { Flow, FlowResponse } from './flow.entity';
import {
  CreateFlowBody,
  DeleteFlowBody,
  ListFlowResponsesQuery,
  ListFlowsQuery,
  SendFlowBody,
  UpdateFlowBody,
} from './flows.dto';
import { FLOW_QUEUED, FLOW_SENT, FlowsService } from './flows.service';

/** GET /v2/flows item */
export function flowSummary(f: Flow, messagingPhoneId: string | undefined) {
  return {
    flow_id: f.platformFlowId,
    name: f.name,
    categories: f.categories,
    status: f.status,
    messagingPhoneId: messagingPhoneId ?? null,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
  };
}

/** GET /v2/flows/{flow_id}: the summary plus the definition (null after update_json), the Flow JSON and the state times. */
export function flowDetail(f: Flow, messagingPhoneId: string | undefined) {
  return {
    ...flowSummary(f, messagingPhoneId),
    definition: f.screens ? { name: f.name, categories: f.categories, screens: f.screens } : null,
    flow_json: f.flowJson,
    published_at: f.publishedAt ? f.publishedAt.toISOString() : null,
    deprecated_at: f.deprecatedAt ? f.deprecatedAt.toISOString() : null,
  };
}

export function flowResponseView(r: FlowResponse) {
  return {
    response_id: r.id,
    flow_token: r.flowToken,
    contact_number: r.contactNumber,
    response: r.response,
    message_id: r.messageId,
    received_at: r.receivedAt.toISOString(),
  };
}

@ApiTags('Flows')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/flow')
@Controller()
export class FlowsController {
  constructor(private readonly flows: FlowsService) {}

  @Post('flow/create')
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Create a flow (draft): validated, translated to Flow JSON, created and uploaded on the platform. 404 unknown messagingPhoneId',
  })
  @ApiBody({ type: CreateFlowBody })
  async create(@AccountId() accountId: string, @Body() body: CreateFlowBody) {
    const flow = await this.flows.create(accountId, body);
    return { success: true, message: 'WhatsApp flow created successfully', flow_id: flow.platformFlowId };
  }

  @Put('flow/update')
  @ApiOperation({
    summary:
      'action update (definition in `flow`), update_json (Flow JSON in `flow_json`) or publish. 409 once published or deprecated',
  })
  @ApiBody({ type: UpdateFlowBody })
  async update(@AccountId() accountId: string, @Body() body: UpdateFlowBody) {
    const { flow, message } = await this.flows.update(accountId, body);
    return { success: true, message, flow_id: flow.platformFlowId, status: flow.status };
  }

  @Delete('flow/delete')
  @ApiOperation({
    summary: 'A draft is deleted; a published flow is deprecated (kept); a deprecated one: 200, unchanged',
  })
  @ApiBody({ type: DeleteFlowBody })
  async delete(@AccountId() accountId: string, @Body() body: DeleteFlowBody) {
    const { flowId, status, message } = await this.flows.delete(accountId, body.flow_id);
    return { success: true, message, flow_id: flowId, status };
  }

  @Get('v2/flows')
  @ApiOperation({
    summary: 'Flows of the account, newest first, paginated (pageSize default 20, max 100), optional status filter',
  })
  async list(@AccountId() accountId: string, @Query() query: ListFlowsQuery) {
    const [{ flows, page, pageSize, total }, phones] = await Promise.all([
      this.flows.list(accountId, query),
      this.flows.phoneIds(accountId),
    ]);
    return {
      success: true,
      data: { flows: flows.map((f) => flowSummary(f, phones.get(f.phoneNumberId))), page, pageSize, total },
    };
  }

  @Get('v2/flows/:flow_id')
  @ApiOperation({ summary: 'One flow: status, definition, Flow JSON. 404 Flow not found' })
  async get(@AccountId() accountId: string, @Param('flow_id') flowId: string) {
    const [flow, phones] = await Promise.all([this.flows.getOwned(accountId, flowId), this.flows.phoneIds(accountId)]);
    return { success: true, data: flowDetail(flow, phones.get(flow.phoneNumberId)) };
  }

  @Get('v2/flows/:flow_id/responses')
  @ApiOperation({ summary: 'Completed forms of a flow sent through this API, newest first, paginated' })
  async responses(
    @AccountId() accountId: string,
    @Param('flow_id') flowId: string,
    @Query() query: ListFlowResponsesQuery,
  ) {
    const { responses, page, pageSize, total } = await this.flows.listResponses(accountId, flowId, query);
    return { success: true, data: { responses: responses.map(flowResponseView), page, pageSize, total } };
  }

  @Post('v2/flows/:flow_id/send')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send a published flow as an interactive message (inside the 24-hour window). 409 draft or deprecated',
  })
  @ApiBody({ type: SendFlowBody })
  async send(
    @AccountId() accountId: string,
    @Param('flow_id') flowId: string,
    @Body() body: SendFlowBody,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = await this.flows.send(accountId, flowId, body);
    reply.status(r.httpStatus);
    return {
      success: true,
      message: r.httpStatus === 200 ? FLOW_SENT : FLOW_QUEUED,
      flow_id: r.flowId,
      flow_token: r.flowToken,
      message_id: r.messageId,
      wamid: r.wamid,
    };
  }
}
