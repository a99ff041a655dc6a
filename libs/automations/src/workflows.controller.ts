import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Put,
  Query,
  Req,
  Sse,
  type MessageEvent,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccountsService } from '@switchboard/accounts';
import { CONTACT_NOT_FOUND, ContactsService } from '@switchboard/contacts';
import { accessCheckOf, AppConfig, endWhenAccessEnds, KnownQueryParameters } from '@switchboard/core';
import {
  concat,
  concatMap,
  distinctUntilChanged,
  endWith,
  from,
  interval,
  map,
  merge,
  Observable,
  of,
  takeWhile,
} from 'rxjs';
import { RunEvents } from './run-events';
import {
  ApiBadRequestResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import {
  ContactRunsResponse,
  ListContactRunsQuery,
  ListRunsQuery,
  ListWorkflowsQuery,
  PublishDraftDto,
  SandboxReplyDto,
  SaveDraftDto,
  SaveWorkflowDto,
  TestRunDto,
} from './dto';
import { WorkflowDraftsService } from './workflow-drafts.service';
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
    private readonly drafts: WorkflowDraftsService,
    private readonly runEvents: RunEvents,
    private readonly accounts: AccountsService,
    private readonly config: AppConfig,
    private readonly contacts: ContactsService,
  ) {}

  @Sse('v1/workflow-runs/:runId/events')
  @ApiOperation({
    summary:
      'Server-Sent Events: the run (as GET /v1/workflow-runs/{runId}) now and after every step; a ping every 15 s',
  })
  async runEventsStream(
    @AccountId() accountId: string,
    @Param('runId') runId: string,
    @Req() request: FastifyRequest,
  ): Promise<Observable<MessageEvent>> {
    const first = await this.runs.getRun(accountId, runId); // 404 before the stream starts
    // `first` is shown at once; the run is read again once its changes are listened to (a step taken in between
    // notified nobody), and after each change. A snapshot equal to the one before is not sent.
    const snapshots = this.runEvents.watch(runId).pipe(concatMap(() => from(this.runs.getRun(accountId, runId))));
    const runs = concat(of(first), snapshots).pipe(
      map((run) => JSON.stringify(run)),
      distinctUntilChanged(),
      map((json): MessageEvent => ({ type: 'run', data: json })),
    );
    const pings = interval(15_000).pipe(map((): MessageEvent => ({ type: 'ping', data: '' })));
    // the stream ends when the run's changes do (the browser reconnects), pings or not
    const end: MessageEvent = { type: 'end', data: '' };
    return merge(runs.pipe(endWith(end)), pings).pipe(
      takeWhile((event) => event !== end),
      endWhenAccessEnds(accessCheckOf(request)),
    );
  }

  @Post('v1/workflow-runs/:runId/sandbox-reply')
  @HttpCode(200)
  @ApiOperation({
    summary: "Development only: play the run's customer replying, through the Cloud API sandbox the number points at",
  })
  async sandboxReply(@AccountId() accountId: string, @Param('runId') runId: string, @Body() body: SandboxReplyDto) {
    if (this.config.isProduction)
      throw new NotFoundException({ message: 'Only available in development (with the Cloud API sandbox)' });
    const run = await this.runs.getRun(accountId, runId);
    const phone = (run.contact as { phone?: string }).phone;
    if (!phone) throw new BadRequestException({ message: 'This run has no contact phone to reply from' });
    const { phoneNumbers } = await this.accounts.getAccount(accountId);
    const number = phoneNumbers[0];
    if (!number) throw new BadRequestException({ message: 'The account has no phone number' });
    const response = await fetch(`${number.apiBaseUrl.replace(/\/$/, '')}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        from: String(phone).replace(/\D/g, ''),
        phone_number_id: number.messagingPhoneId,
        text: body.text,
      }),
    }).catch((error: Error) => {
      throw new BadRequestException({
        message: `The sandbox did not answer at ${number.apiBaseUrl}: ${error.message}`,
      });
    });
    if (!response.ok)
      throw new BadRequestException({
        message: `The sandbox refused the reply (${response.status}): ${await response.text()}`,
      });
    return { success: true, message: 'Reply sent as the customer' };
  }

  @Get('v1/workflows')
  @ApiOperation({
    summary:
      "The account's workflows, newest first (page, pageSize ≤ 100, search): version, draft, runs waiting and failed in 24 h",
  })
  async list(@AccountId() accountId: string, @Query() query: ListWorkflowsQuery) {
    return { success: true, ...(await this.workflows.list(accountId, query)) };
  }

  @Delete('v1/workflows/:id')
  @ApiOperation({
    summary: 'Archive a workflow: inactive, its webhook answers 404, gone from the API; its runs stay readable',
  })
  async archive(@AccountId() accountId: string, @Param('id') id: string) {
    await this.workflows.archive(accountId, id);
    return { success: true, message: 'Workflow archived' };
  }

  @Get('v1/workflows/:id/draft')
  @ApiOperation({
    summary: "The workflow's draft (404 when there is none): definition, layout, revision, validation errors",
  })
  async getDraft(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.drafts.getDraft(accountId, id) };
  }

  @Put('v1/workflows/:id/draft')
  @ApiOperation({
    summary:
      'Save the draft (optimistic concurrency: send the revision you last saw, 0 for none; a stale one gets 409)',
  })
  async saveDraft(@AccountId() accountId: string, @Param('id') id: string, @Body() body: SaveDraftDto) {
    return { success: true, data: await this.drafts.saveDraft(accountId, id, body) };
  }

  @Delete('v1/workflows/:id/draft')
  @ApiOperation({ summary: 'Discard the draft' })
  async discardDraft(@AccountId() accountId: string, @Param('id') id: string) {
    await this.drafts.discardDraft(accountId, id);
    return { success: true, message: 'Draft discarded' };
  }

  @Post('v1/workflows/:id/publish')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Publish the draft as the next version (validated: 400 naming node and field; stale revision: 409)',
  })
  async publish(@AccountId() accountId: string, @Param('id') id: string, @Body() body: PublishDraftDto) {
    return { success: true, data: await this.drafts.publish(accountId, id, body.revision, body.replaces) };
  }

  @Get('v1/workflows/:id/versions')
  @ApiOperation({ summary: "The workflow's versions, newest first" })
  async versions(@AccountId() accountId: string, @Param('id') id: string) {
    return { success: true, data: await this.drafts.listVersions(accountId, id) };
  }

  @Get('v1/workflows/:id/versions/:version')
  @ApiOperation({ summary: 'One version: its definition and layout (read-only)' })
  async version(@AccountId() accountId: string, @Param('id') id: string, @Param('version') version: string) {
    return { success: true, data: await this.drafts.getVersion(accountId, id, version) };
  }

  @Post('v1/workflows/:id/versions/:version/restore')
  @HttpCode(200)
  @ApiOperation({ summary: 'Make a version the draft (replacing any draft); publish it to make it current again' })
  async restore(@AccountId() accountId: string, @Param('id') id: string, @Param('version') version: string) {
    return { success: true, data: await this.drafts.restore(accountId, id, version) };
  }

  @Post('v1/workflows/:id/test-runs')
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Start a run of the current version with a sample payload (as if posted to the webhook; also while inactive)',
  })
  async testRun(@AccountId() accountId: string, @Param('id') id: string, @Body() body: TestRunDto) {
    return { success: true, data: await this.runs.startTestRun(accountId, id, body.payload) };
  }

  @Get('workflows/active')
  @ApiOperation({ summary: "The account's active workflows (SPEC §4)" })
  async active(@AccountId() accountId: string) {
    return { message: 'Active Workflows :', data: await this.workflows.listActive(accountId) };
  }

  @Post('v1/workflows')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Create (mode create) or edit (mode edit, with id) a workflow; an edit with a definition creates a new version',
  })
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

  @Get('v1/workflow-runs')
  @KnownQueryParameters(ListContactRunsQuery)
  @ApiOperation({
    summary: 'The runs a contact is in (contact_id required), newest first, with their workflow; status filter',
    description:
      'Runs bound to the contact by id or by its number. A contact of another account is a 404 `Contact not found`.',
  })
  @ApiOkResponse({ type: ContactRunsResponse })
  @ApiBadRequestResponse({ description: 'contact_id missing or not a positive integer, or an unknown query parameter' })
  @ApiNotFoundResponse({ description: '`Contact not found`' })
  async listRunsOfContact(@AccountId() accountId: string, @Query() query: ListContactRunsQuery) {
    const contact = await this.contacts.findById(accountId, String(query.contact_id));
    if (!contact) throw new NotFoundException({ message: CONTACT_NOT_FOUND });
    return {
      success: true,
      ...(await this.runs.listRunsOfContact(
        accountId,
        { id: contact.id, number: contact.contactNumber ?? contact.whatsappUserId },
        query,
      )),
    };
  }

  @Get('v1/workflow-runs/:runId')
  @ApiOperation({ summary: 'A run: status, current node, what it waits for, history, error, input payload' })
  async getRun(@AccountId() accountId: string, @Param('runId') runId: string) {
    return { success: true, data: await this.runs.getRun(accountId, runId) };
  }
}
