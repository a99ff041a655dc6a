import {
  Controller,
  ForbiddenException,
  Get,
  Headers,
  HttpCode,
  Logger,
  Post,
  Query,
  RawBodyRequest,
  Req,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '@switchboard/auth';
import { AppConfig } from '@switchboard/core';
import { verifySignature } from '@switchboard/whatsapp';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PlatformWebhooksService } from './platform-webhooks.service';

/** Meta's webhook endpoint: the verification handshake, then signed event deliveries. */
@ApiExcludeController()
@Public()
@SkipThrottle()
@Controller('webhooks/whatsapp')
export class PlatformWebhookController {
  private readonly logger = new Logger(PlatformWebhookController.name);

  constructor(
    private readonly webhooks: PlatformWebhooksService,
    private readonly config: AppConfig,
  ) {}

  @Get()
  verify(
    @Query('hub.mode') mode: string,
    @Query('hub.verify_token') token: string,
    @Query('hub.challenge') challenge: string,
    @Res() reply: FastifyReply,
  ) {
    if (mode !== 'subscribe' || token !== this.config.WHATSAPP_VERIFY_TOKEN)
      throw new ForbiddenException({ message: 'Webhook verification failed' });
    return reply.type('text/plain').send(challenge ?? '');
  }

  @Post()
  @HttpCode(200)
  async receive(@Req() request: RawBodyRequest<FastifyRequest>, @Headers('x-hub-signature-256') signature?: string) {
    if (!request.rawBody || !verifySignature(request.rawBody, signature, this.config.WHATSAPP_APP_SECRET)) {
      this.logger.warn({
        msg: 'Rejected platform webhook with a bad or missing signature',
        requestId: request.id,
        ip: request.ip,
      });
      throw new UnauthorizedException({ message: 'Invalid signature' });
    }
    const eventId = await this.webhooks.accept(request.rawBody);
    return { success: true, eventId };
  }
}
