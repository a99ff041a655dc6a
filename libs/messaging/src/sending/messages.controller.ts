import { Body, Controller, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import type { FastifyReply } from 'fastify';
import { MessagesService } from './messages.service';

const IDEMPOTENCY_KEY = 'idempotency-key';

@ApiTags('Messages')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@ApiHeader({
  name: 'Idempotency-Key',
  description: 'optional: a repeated key returns the first message instead of sending again',
  required: false,
})
@RequireGrant('/send-message')
@Controller()
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @Post('send-message/:messagingPhoneId')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Template message(s): one object, or an array (bulk, up to MAX_BULK_SEND = 1000 by default)',
  })
  @ApiBody({ schema: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] } })
  @ApiResponse({
    status: 200,
    description:
      '`All messages sent successfully`; results[] {success: true, message, contact {contact_id, contact_number}, messageId}',
  })
  @ApiResponse({
    status: 207,
    description: '`Some messages failed to send`; failed results {success: false, message: reason, contact: as given}',
  })
  async sendTemplate(
    @AccountId() accountId: string,
    @Param('messagingPhoneId') messagingPhoneId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Headers(IDEMPOTENCY_KEY) idempotencyKey?: string,
  ) {
    const result = await this.messages.sendTemplates(accountId, messagingPhoneId, body, idempotencyKey || undefined);
    reply.status(result.httpStatus);
    return result.body;
  }

  @Post('v1/send-message/:messagingPhoneId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Session message (normal_message, quick_reply, cta) inside the 24-hour window' })
  @ApiResponse({
    status: 200,
    description: '{success: true, message: `Message sent to whatsapp successfully!`, messageId}',
  })
  @ApiResponse({
    status: 500,
    description: "{success: false, message: the platform's reason} (e.g. the 24-hour window is closed)",
  })
  async sendSession(
    @AccountId() accountId: string,
    @Param('messagingPhoneId') messagingPhoneId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Headers(IDEMPOTENCY_KEY) idempotencyKey?: string,
  ) {
    const result = await this.messages.sendSession(accountId, messagingPhoneId, body, idempotencyKey || undefined);
    reply.status(result.httpStatus);
    return result.body;
  }
}
