import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  type MessageEvent,
  Param,
  Post,
  Put,
  Query,
  Req,
  Sse,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { accessCheckOf, endWhenAccessEnds, isStreamId, KnownQueryParameters, LiveEvents } from '@switchboard/core';
import type { Observable } from 'rxjs';
import { templateEventStream } from './template-event-stream';
import { AccountId, RequireGrant } from '@switchboard/auth';
import type { TemplateListRow } from './template-list';
import { Template } from './template.entity';
import {
  CreateTemplateBody,
  ListTemplatesQuery,
  TemplateEventsQuery,
  TemplateNameQuery,
  UpdateTemplateBody,
} from './templates.dto';
import { templateEventsTopic, TemplatesService } from './templates.service';

/** GET /v2/templates item (SPEC §4) */
export function templateSummary(t: Pick<Template, 'name' | 'category' | 'language' | 'status' | 'variables'>) {
  return {
    template_name: t.name,
    category: t.category,
    language: t.language,
    status: t.status,
    variables: t.variables,
  };
}

/** GET /v2/templates item: the SPEC fields, plus why it cannot be sent (REJECTED / PAUSED / DISABLED) and when it changed. */
export function templateListItem(t: TemplateListRow) {
  return {
    ...templateSummary(t),
    rejected_reason: sendBlockedReason(t),
    updated_at: t.updatedAt.toISOString(),
  };
}

function sendBlockedReason(t: Pick<Template, 'status' | 'rejectedReason'>): string | null {
  return t.status === 'REJECTED' || t.status === 'PAUSED' || t.status === 'DISABLED' ? t.rejectedReason : null;
}

/** The template as the detail, create, update and get-templates endpoints answer it. */
export function templateDetail(t: Template, messagingPhoneId: string | undefined) {
  return {
    ...templateSummary(t),
    rejected_reason: sendBlockedReason(t),
    ...(t.platformStatus ? { platform_status: t.platformStatus } : {}),
    ...(t.previousCategory ? { previous_category: t.previousCategory } : {}),
    messagingPhoneId: messagingPhoneId ?? null,
    categoryChangeAllowed: t.categoryChangeAllowed,
    components: t.components,
    header_type: t.headerType,
    platform_template_id: t.platformTemplateId,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

@ApiTags('Templates')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/templates')
@Controller()
export class TemplatesController {
  constructor(
    private readonly templates: TemplatesService,
    private readonly live: LiveEvents,
  ) {}

  @Sse('v2/template-events')
  @ApiOperation({
    summary: "Server-Sent Events: every status change of the account's templates (event template.status)",
    description:
      'Published when a change commits (review webhook, sync, status check, edit). Reconnect with Last-Event-ID to get ' +
      "what was missed; a ping event every 15 s. Only the caller's account (docs/templates.md).",
  })
  @KnownQueryParameters(TemplateEventsQuery)
  events(
    @AccountId() accountId: string,
    @Query() query: TemplateEventsQuery,
    @Req() request: FastifyRequest,
    @Headers('last-event-id') lastEventIdHeader?: string,
  ): Observable<MessageEvent> {
    const header = lastEventIdHeader && isStreamId(lastEventIdHeader) ? lastEventIdHeader : undefined;
    return templateEventStream(this.live, templateEventsTopic(accountId), header ?? query.lastEventId).pipe(
      endWhenAccessEnds(accessCheckOf(request)),
    );
  }

  @Post('templates/create')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Create a template and submit it for review (PENDING). data is a string when the name is taken or the number unknown',
  })
  @ApiBody({ type: CreateTemplateBody })
  async create(@AccountId() accountId: string, @Body() body: CreateTemplateBody) {
    const result = await this.templates.create(accountId, body);
    if (typeof result === 'string') return { success: false, data: result };
    return { success: true, data: templateDetail(result.template, result.phone.messagingPhoneId) };
  }

  @Get('v2/templates')
  @ApiOperation({
    summary:
      'Templates of the account, newest first, paginated (pageSize default 50, max 100); each with rejected_reason and updated_at',
  })
  async list(@AccountId() accountId: string, @Query() query: ListTemplatesQuery) {
    const { templates, page, pageSize, total } = await this.templates.list(accountId, query);
    return { success: true, data: { templates: templates.map(templateListItem), page, pageSize, total } };
  }

  @Get('templates/get-templates')
  @ApiOperation({ summary: 'All APPROVED templates, no pagination (older endpoint)' })
  async approved(@AccountId() accountId: string) {
    const [rows, phones] = await Promise.all([
      this.templates.listApproved(accountId),
      this.templates.phoneIds(accountId),
    ]);
    return { success: true, data: rows.map((t) => templateDetail(t, phones.get(t.phoneNumberId))) };
  }

  @Get('templates/status')
  @ApiOperation({ summary: 'Approval status of one template (rejected_reason when REJECTED)' })
  async status(@AccountId() accountId: string, @Query() query: TemplateNameQuery) {
    const t = await this.templates.status(accountId, query.template_name);
    return {
      success: true,
      data: {
        template_name: t.name,
        language: t.language,
        status: t.status,
        ...(t.status === 'REJECTED' || t.status === 'PAUSED' || t.status === 'DISABLED'
          ? { rejected_reason: t.rejectedReason }
          : {}),
        ...(t.platformStatus ? { platform_status: t.platformStatus } : {}),
      },
    };
  }

  @Post('v2/templates/sync')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Pull the latest status of every template from the platform; updated[] lists the changed ones',
  })
  async sync(@AccountId() accountId: string) {
    return { success: true, data: await this.templates.sync(accountId) };
  }

  @Put('templates/update')
  @ApiOperation({ summary: 'Edit components and/or category: a new review, status back to PENDING' })
  @ApiBody({ type: UpdateTemplateBody })
  async update(@AccountId() accountId: string, @Query() query: TemplateNameQuery, @Body() body: UpdateTemplateBody) {
    const t = await this.templates.update(accountId, query.template_name, body);
    const phones = await this.templates.phoneIds(accountId);
    return { success: true, data: templateDetail(t, phones.get(t.phoneNumberId)) };
  }

  @Get('v2/templates/:name')
  @ApiOperation({ summary: 'One template with its variables; 404 Template not found' })
  async get(@AccountId() accountId: string, @Param('name') name: string) {
    const t = await this.templates.getByName(accountId, name);
    const phones = await this.templates.phoneIds(accountId);
    return { success: true, data: templateDetail(t, phones.get(t.phoneNumberId)) };
  }
}
