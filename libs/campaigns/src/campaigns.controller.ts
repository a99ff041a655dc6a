import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { LiveEvents, pageMeta, PaginationQuery, validationException } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CampaignLiveService, campaignTopic } from './campaign-live';
import { CampaignAction, CampaignProgress, CampaignRow, CampaignsService } from './campaigns.service';

export class ListCampaignsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {}

/** The campaign as the API shows it (snake_case ids like the rest of the SPEC's records, camelCase inputs echoed). */
export function campaignView(c: CampaignRow, progress?: CampaignProgress) {
  return {
    campaign_id: Number(c.id),
    name: c.name,
    status: c.status,
    messagingPhoneId: c.messaging_phone_id,
    templateName: c.template_name,
    language: c.template_language,
    variables: c.variables,
    mediaUrl: c.media_url,
    documentName: c.document_name,
    callback_url: c.callback_url,
    event: c.callback_events,
    group_ids: c.group_ids.map(Number),
    created_at: new Date(c.created_at).toISOString(),
    updated_at: new Date(c.updated_at).toISOString(),
    started_at: c.started_at ? new Date(c.started_at).toISOString() : null,
    completed_at: c.completed_at ? new Date(c.completed_at).toISOString() : null,
    scheduledAt: c.scheduled_at ? new Date(c.scheduled_at).toISOString() : null,
    schedule_error: c.schedule_error ?? null,
    paused_reason: c.paused_reason ?? null,
    ...(progress ? { progress } : {}),
  };
}

@ApiTags('Campaigns')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/campaigns')
@Controller()
export class CampaignsController {
  constructor(
    private readonly campaigns: CampaignsService,
    private readonly liveView: CampaignLiveService,
    private readonly live: LiveEvents,
  ) {}

  @Get('v2/campaigns/audience-count')
  @ApiOperation({
    summary: 'How many contacts a campaign over these groups would reach (blocked contacts left out, counted apart)',
  })
  @ApiQuery({ name: 'group_ids', required: true, description: 'comma-separated group ids', example: '3,4' })
  async audienceCount(@AccountId() accountId: string, @Query('group_ids') groupIds: string | string[] | undefined) {
    const ids = [groupIds ?? '']
      .flat()
      .join(',')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!ids.length || ids.some((id) => !/^[1-9]\d{0,15}$/.test(id)))
      throw validationException([{ field: 'group_ids', message: 'group_ids must be comma-separated group ids' }]);
    const missing = await this.campaigns.missingGroupIds(accountId, ids);
    if (missing.length)
      throw validationException([{ field: 'group_ids', message: `unknown group ids: ${missing.join(', ')}` }]);
    return {
      success: true,
      data: { group_ids: ids.map(Number), ...(await this.campaigns.audienceCount(accountId, ids)) },
    };
  }

  @Post('v2/campaigns/:campaign_id/schedule')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Schedule the campaign (draft → scheduled) or move its time (scheduled): it starts by itself at scheduledAt',
    description:
      'Body: {scheduledAt: ISO 8601 with offset, in the future, within a year}. Checked like a start (409 when the template is no longer ' +
      'APPROVED or the variables do not fill it). The start is durable (a delayed job per time, and the worker sweep starts overdue ones ' +
      'after any restart) and happens once. Unschedule: POST …/unschedule (scheduled → draft); start now: …/start; cancel: …/cancel.',
  })
  @ApiParam({ name: 'campaign_id', type: 'integer' })
  async schedule(@AccountId() accountId: string, @Param('campaign_id') campaignId: string, @Body() body: unknown) {
    const campaign = await this.campaigns.schedule(accountId, campaignId, body);
    return { success: true, data: campaignView(campaign, await this.campaigns.progress(campaign.id)) };
  }

  @Get('v2/campaigns/:campaign_id/live')
  @ApiOperation({
    summary:
      'Live view as Server-Sent Events: `progress` events with the funnel (queued, sent, delivered, read, replied), failures by error code with their meaning, messages per second against the number’s rate, and the time left',
  })
  @ApiParam({ name: 'campaign_id', type: 'integer' })
  async liveEvents(
    @AccountId() accountId: string,
    @Param('campaign_id') campaignId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const campaign = await this.campaigns.find(accountId, campaignId); // 404 before the stream opens
    // the current state at once, to this client only (the worker publishes each change after it)
    await this.live.sse(request, reply, campaignTopic(campaign.id), {
      initial: async () => {
        const snapshot = await this.liveView.snapshot(campaign.id);
        return snapshot && { event: 'progress', data: snapshot };
      },
    });
  }

  @Post('v2/campaigns')
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Create a campaign (draft): number, APPROVED template, default variables, media, audience groups, callback',
    description:
      'Body: name, messagingPhoneId, templateName (APPROVED, else 400), variables (object; body variables are filled in key order), mediaUrl, documentName, ' +
      'group_ids (groups of this account; unknown ids: 400 with missingGroups), callback_url and event (any of sent, delivered, read, failed, replied).',
  })
  @ApiBody({ schema: { type: 'object' } })
  @ApiResponse({ status: 201, description: '{success: true, data: campaign}' })
  @ApiResponse({ status: 400, description: 'a field at fault: {statusCode, message, errors[{field, message}]}' })
  async create(@AccountId() accountId: string, @Body() body: unknown) {
    const campaign = await this.campaigns.create(accountId, body);
    return { success: true, data: campaignView(campaign, await this.campaigns.progress(campaign.id)) };
  }

  @Get('v2/campaigns')
  @ApiOperation({ summary: 'List campaigns, newest first (page from 1, pageSize default 20, at most 100)' })
  async list(@AccountId() accountId: string, @Query() query: ListCampaignsQuery) {
    const { campaigns, total } = await this.campaigns.list(accountId, query);
    return { success: true, data: { campaigns: campaigns.map((c) => campaignView(c)), ...pageMeta(query, total) } };
  }

  @Get('v2/campaigns/:campaign_id')
  @ApiOperation({
    summary:
      'One campaign with live progress: audience, recipients, pending, queued, sent, delivered, read, failed, replied, skipped_blocked, cancelled',
  })
  @ApiParam({ name: 'campaign_id', type: 'integer' })
  @ApiResponse({ status: 404, description: "`Campaign not found` (also for another account's campaign)" })
  async get(@AccountId() accountId: string, @Param('campaign_id') campaignId: string) {
    const { campaign, progress } = await this.campaigns.report(accountId, campaignId);
    return { success: true, data: campaignView(campaign, progress) };
  }

  @Post('v2/campaigns/:campaign_id/:action')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'State machine: start (draft → running: sends to the groups), pause (running → paused), resume (paused → running), cancel (draft, running or paused → cancelled)',
  })
  @ApiParam({ name: 'action', enum: ['start', 'pause', 'resume', 'cancel', 'unschedule'] })
  @ApiResponse({ status: 409, description: 'the action is not allowed from the current state; message names both' })
  async act(@AccountId() accountId: string, @Param('campaign_id') campaignId: string, @Param('action') action: string) {
    if (!['start', 'pause', 'resume', 'cancel', 'unschedule'].includes(action)) {
      throw validationException([
        {
          field: 'action',
          message: `action must be one of start, pause, resume, cancel, unschedule, schedule (got ${action})`,
        },
      ]);
    }
    const campaign = await this.campaigns.transition(accountId, campaignId, action as CampaignAction);
    return { success: true, data: campaignView(campaign, await this.campaigns.progress(campaign.id)) };
  }

  @Post('campaigns/trigger_campaign-api/:campaign_id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Trigger the campaign for these contacts (SPEC §4): 200 with an empty body once durably accepted',
    description:
      'Body: contacts[] of {phoneNumber, name, email, variables}. Each contact is found or created (normalised number), added to the audience and sent ' +
      "the campaign's template with its variables over the campaign's defaults. Contacts already in the audience are sent only with includeExistingContacts=true. " +
      'Blocked contacts are skipped (counted as skipped_blocked). A repeated Idempotency-Key does nothing new. At most 1000 contacts per request.',
  })
  @ApiParam({ name: 'campaign_id', type: 'integer' })
  @ApiQuery({ name: 'includeExistingContacts', required: false, enum: ['true', 'false'] })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'a retried trigger with the same key does nothing new (200 again)',
  })
  @ApiBody({ schema: { type: 'object', properties: { contacts: { type: 'array', items: { type: 'object' } } } } })
  @ApiResponse({ status: 200, description: 'empty body' })
  @ApiResponse({ status: 400, description: 'a contact at fault, named `contacts[i].field`; nothing is recorded' })
  @ApiResponse({ status: 404, description: '`Campaign not found`' })
  @ApiResponse({ status: 409, description: 'the campaign is cancelled, or its template can no longer be sent' })
  async trigger(
    @AccountId() accountId: string,
    @Param('campaign_id') campaignId: string,
    @Body() body: unknown,
    @Query('includeExistingContacts') includeExisting: string | undefined,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    if (includeExisting !== undefined && includeExisting !== 'true' && includeExisting !== 'false') {
      throw validationException([
        { field: 'includeExistingContacts', message: 'includeExistingContacts must be true or false' },
      ]);
    }
    await this.campaigns.trigger(accountId, campaignId, body, includeExisting === 'true', idempotencyKey);
    reply.status(200).send();
  }
}
