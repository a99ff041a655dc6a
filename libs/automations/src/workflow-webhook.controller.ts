import {
  BadRequestException,
  Controller,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  NotFoundException,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '@switchboard/auth';
import { AppConfig } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RunBacklog } from './run-backlog';
import { WorkflowRunsService } from './workflow-runs.service';

export const WORKFLOW_ID_NOT_FOUND = { message: 'Workflow ID not found' };
const IDENTIFIER = /^[A-Za-z0-9_-]{1,100}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/**
 * SPEC §4 inbound workflow webhook: no token (the unguessable identifier is the secret), any JSON body becomes the
 * run's payload. Not counted against the REST rate limit (a shop's order events are not API calls); answers 429 with
 * Retry-After while the runs it accepted wait too long to start (RunBacklog, AUTOMATION_MAX_BACKLOG_MS).
 */
@ApiTags('Workflows')
@Public()
@SkipThrottle()
@Controller('webhook/workflow')
export class WorkflowWebhookController {
  constructor(
    private readonly runs: WorkflowRunsService,
    private readonly config: AppConfig,
    private readonly backlog: RunBacklog,
  ) {}

  @Post(':identifier')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Start a run of the workflow; the JSON body is its payload. Idempotency-Key: a retry returns the same runId',
  })
  async start(
    @Param('identifier') identifier: string,
    @Req() request: FastifyRequest & { rawBody?: Buffer },
    @Res({ passthrough: true }) reply: FastifyReply,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const limit = this.config.WORKFLOW_WEBHOOK_MAX_BODY_BYTES;
    const declared = Number(request.headers['content-length']);
    const size = Number.isFinite(declared) ? declared : (request.rawBody?.length ?? 0);
    if (size > limit) {
      throw new HttpException(
        { statusCode: 413, message: `Request body is too large (limit ${limit} bytes)` },
        HttpStatus.PAYLOAD_TOO_LARGE,
      );
    }
    const contentType = String(request.headers['content-type'] ?? '');
    const body = request.body;
    if (body !== undefined && body !== null && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
      throw new BadRequestException({ statusCode: 400, message: 'Body must be JSON (Content-Type: application/json)' });
    }
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new BadRequestException({
        statusCode: 400,
        message: 'Idempotency-Key must be 1 to 200 visible ASCII characters',
      });
    }
    if (!IDENTIFIER.test(identifier)) throw new NotFoundException(WORKFLOW_ID_NOT_FOUND);
    const refusal = await this.backlog.refusal();
    if (refusal) {
      reply.header('retry-after', String(refusal.retryAfterSeconds));
      throw new HttpException({ statusCode: 429, message: refusal.message }, HttpStatus.TOO_MANY_REQUESTS);
    }
    const started = await this.runs.startFromWebhook(identifier, body ?? {}, idempotencyKey ?? null);
    if (!started) throw new NotFoundException(WORKFLOW_ID_NOT_FOUND);
    return { success: true, message: 'Workflow started', runId: started.runId };
  }
}
