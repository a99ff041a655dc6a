import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import {
  CreateWebhookEndpointDto,
  ListDeliveriesQuery,
  ListEventsQuery,
  ReplayDto,
  UpdateWebhookEndpointDto,
} from './webhooks.dto';

/** Account webhooks (docs/webhooks.md), grant /account. */
@ApiTags('Webhooks')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/account')
@Controller('v1')
export class WebhooksController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Post('webhook-endpoints')
  @ApiOperation({
    summary: 'Create a webhook endpoint; the answer carries its signing secret (whsec_…), shown only this once',
  })
  async create(@AccountId() accountId: string, @Body() body: CreateWebhookEndpointDto) {
    return { success: true, data: await this.endpoints.create(accountId, body) };
  }

  @Get('webhook-endpoints')
  @ApiOperation({ summary: "The account's webhook endpoints" })
  async list(@AccountId() accountId: string) {
    return { success: true, data: await this.endpoints.list(accountId) };
  }

  @Get('webhook-endpoints/:id')
  @ApiOperation({ summary: 'One webhook endpoint (enabled, disabled_reason, failing_since)' })
  async get(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.endpoints.get(accountId, id) };
  }

  @Patch('webhook-endpoints/:id')
  @ApiOperation({ summary: 'Change url, events, description or enabled (true re-enables a disabled endpoint)' })
  async update(@AccountId() accountId: string, @Param('id') id: string, @Body() body: UpdateWebhookEndpointDto) {
    return { success: true, data: await this.endpoints.update(accountId, id, body) };
  }

  @Delete('webhook-endpoints/:id')
  @ApiOperation({ summary: 'Delete a webhook endpoint and its delivery log' })
  async remove(@AccountId() accountId: string, @Param('id') id: string) {
    await this.endpoints.remove(accountId, id);
    return { success: true, message: 'Webhook endpoint deleted' };
  }

  @Post('webhook-endpoints/:id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new signing secret (shown once); the previous one keeps signing beside it for 24 h' })
  async rotate(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.endpoints.rotateSecret(accountId, id) };
  }

  @Post('webhook-endpoints/:id/test')
  @HttpCode(202)
  @ApiOperation({ summary: 'Sends a webhook.test event to this endpoint (see its deliveries for the outcome)' })
  async test(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.endpoints.sendTest(accountId, id) };
  }

  @Get('webhook-endpoints/:id/deliveries')
  @ApiOperation({
    summary: 'Delivery log, newest first: status, attempts (time, status code, latency, response excerpt), next retry',
  })
  async deliveries(@AccountId() accountId: string, @Param('id') id: string, @Query() query: ListDeliveriesQuery) {
    return { success: true, data: await this.endpoints.listDeliveries(accountId, id, query) };
  }

  @Post('webhook-endpoints/:id/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Sends again the events created in [since, until) (optionally of some types), with their original ids',
  })
  async replay(@AccountId() accountId: string, @Param('id') id: string, @Body() body: ReplayDto) {
    return { success: true, data: await this.endpoints.replay(accountId, id, body) };
  }

  @Post('webhook-deliveries/:id/retry')
  @HttpCode(202)
  @ApiOperation({ summary: 'Attempts a delivery again now (after a failure, or to re-send a delivered one)' })
  async retry(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.endpoints.retryDelivery(accountId, id) };
  }

  @Get('events')
  @ApiOperation({
    summary: "The account's events from `since`, oldest first (cursor-paged): reconcile what a receiver missed",
  })
  async events(@AccountId() accountId: string, @Query() query: ListEventsQuery) {
    return { success: true, data: await this.endpoints.listEvents(accountId, query) };
  }
}
