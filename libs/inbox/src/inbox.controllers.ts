import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { grantRequired, Public, RequireGrant } from '@switchboard/auth';
import { LiveEvents } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountPrincipal, EmbedPrincipal, EmbedSessionGuard } from './embed-session.guard';
import { InboxListQuery, SendTemplateDto, SendTextDto, ThreadQuery } from './inbox.dto';
import { InboxRoutes } from './inbox-routes';
import { InboxService, type InboxPrincipal } from './inbox.service';

/** An API client or console person sends only with `/send-message` (SPEC's 403 naming the grant, as everywhere). */
function requireSendGrant(p: InboxPrincipal): void {
  if (!p.permissions.includes('send')) throw grantRequired('/send-message');
}

const conversationExample = {
  contactId: '42',
  name: 'Ana',
  contactNumber: '15550001111',
  messagingPhoneId: '106540352242922',
  lastMessage: { id: '0b7…', direction: 'inbound', type: 'text', text: 'Hi!', status: 'received' },
  lastActivityAt: '2026-11-25T10:00:00.000Z',
  unreadCount: 1,
  window: { open: true, expiresAt: '2026-11-26T10:00:00.000Z' },
};
const templateExample = {
  name: 'order_update',
  language: 'en',
  variables: ['name'],
  links: [{ variable: 'cta_link', button: 'Track', url: 'https://shop.example.com/t/{{1}}' }],
  preview: 'Hi {{name}}',
};
const ok = (data: unknown) => ({ schema: { type: 'object', example: { success: true, data } } });
const SEND_OK = {
  status: 200,
  description: 'sent through the send pipeline (ticks follow as message.status events)',
  schema: {
    type: 'object',
    example: {
      success: true,
      message: 'Message sent to whatsapp successfully!',
      messageId: '0b7…',
      status: 'accepted',
    },
  },
};

/** The embedded inbox's API: the session token from POST /v1/embed/session in Authorization. */
@ApiTags('Embedded inbox')
@ApiHeader({ name: 'Authorization', description: 'the inbox session token (POST /v1/embed/session)', required: true })
@Public()
@SkipThrottle()
@UseGuards(EmbedSessionGuard)
@Controller('v1/embed/inbox')
export class EmbedInboxController {
  private readonly routes: InboxRoutes;
  constructor(inbox: InboxService, live: LiveEvents) {
    this.routes = new InboxRoutes(inbox, live);
  }

  @Get('conversations')
  @ApiOperation({ summary: 'Conversations in scope, newest activity first, with unread counts and the 24-hour window' })
  @ApiResponse({ status: 200, ...ok({ conversations: [conversationExample], unreadTotal: 1, nextBefore: null }) })
  list(@EmbedPrincipal() p: InboxPrincipal, @Query() query: InboxListQuery) {
    return this.routes.list(p, query);
  }

  @Get('conversations/:contactId')
  @ApiOperation({ summary: 'One conversation (404 when out of scope)' })
  @ApiResponse({ status: 200, ...ok(conversationExample) })
  conversation(@EmbedPrincipal() p: InboxPrincipal, @Param('contactId') contactId: string) {
    return this.routes.conversation(p, contactId);
  }

  @Get('conversations/:contactId/messages')
  @ApiOperation({ summary: "A conversation's messages, paged backwards (before = a message id), oldest first" })
  @ApiResponse({ status: 200, ...ok({ conversation: conversationExample, messages: [], hasMore: false }) })
  thread(@EmbedPrincipal() p: InboxPrincipal, @Param('contactId') contactId: string, @Query() query: ThreadQuery) {
    return this.routes.thread(p, contactId, query);
  }

  @Post('conversations/:contactId/messages')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send text (or quick replies) inside the 24-hour window; 409 outside it' })
  @ApiResponse(SEND_OK)
  sendText(
    @EmbedPrincipal() p: InboxPrincipal,
    @Param('contactId') contactId: string,
    @Body() body: SendTextDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.routes.sendText(p, contactId, body, reply);
  }

  @Post('conversations/:contactId/templates')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send an APPROVED template (any time)' })
  @ApiResponse(SEND_OK)
  sendTemplate(
    @EmbedPrincipal() p: InboxPrincipal,
    @Param('contactId') contactId: string,
    @Body() body: SendTemplateDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.routes.sendTemplate(p, contactId, body, reply);
  }

  @Post('conversations/:contactId/read')
  @HttpCode(200)
  @ApiOperation({ summary: 'Mark the conversation read' })
  @ApiResponse({ status: 200, ...ok({ contactId: '42', unreadCount: 0 }) })
  markRead(@EmbedPrincipal() p: InboxPrincipal, @Param('contactId') contactId: string) {
    return this.routes.markRead(p, contactId);
  }

  @Get('templates')
  @ApiOperation({ summary: 'APPROVED templates with their variables and a preview' })
  @ApiResponse({
    status: 200,
    ...ok({ templates: [templateExample] }),
  })
  templates(@EmbedPrincipal() p: InboxPrincipal) {
    return this.routes.templates(p);
  }

  @Get('events')
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: 'Server-Sent Events: message.created, message.status, conversation.updated (Last-Event-ID)',
  })
  @ApiResponse({
    status: 200,
    description: 'an event stream',
    content: { 'text/event-stream': { example: 'id: 1764064800000-0\nevent: message.created\ndata: {…}\n\n' } },
  })
  events(@EmbedPrincipal() p: InboxPrincipal, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.routes.events(p, request, reply);
  }
}

/** The console's inbox (agents) and API clients with `/conversations`: the whole account. */
@ApiTags('Inbox')
@ApiHeader({
  name: 'Authorization',
  description: 'access token as issued (or the console session cookie)',
  required: false,
})
@RequireGrant('/conversations')
@Controller('v1/inbox')
export class InboxController {
  private readonly routes: InboxRoutes;
  constructor(inbox: InboxService, live: LiveEvents) {
    this.routes = new InboxRoutes(inbox, live);
  }

  @Get('conversations')
  @ApiOperation({ summary: 'Conversations, newest activity first, with unread counts and the 24-hour window' })
  @ApiResponse({ status: 200, ...ok({ conversations: [conversationExample], unreadTotal: 1, nextBefore: null }) })
  list(@AccountPrincipal() p: InboxPrincipal, @Query() query: InboxListQuery) {
    return this.routes.list(p, query);
  }

  @Get('conversations/:contactId')
  @ApiOperation({ summary: 'One conversation' })
  @ApiResponse({ status: 200, ...ok(conversationExample) })
  conversation(@AccountPrincipal() p: InboxPrincipal, @Param('contactId') contactId: string) {
    return this.routes.conversation(p, contactId);
  }

  @Get('conversations/:contactId/messages')
  @ApiOperation({ summary: "A conversation's messages, paged backwards (before = a message id), oldest first" })
  @ApiResponse({ status: 200, ...ok({ conversation: conversationExample, messages: [], hasMore: false }) })
  thread(@AccountPrincipal() p: InboxPrincipal, @Param('contactId') contactId: string, @Query() query: ThreadQuery) {
    return this.routes.thread(p, contactId, query);
  }

  @Post('conversations/:contactId/messages')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send text (or quick replies) inside the 24-hour window; 409 outside it' })
  @ApiResponse(SEND_OK)
  sendText(
    @AccountPrincipal() p: InboxPrincipal,
    @Param('contactId') contactId: string,
    @Body() body: SendTextDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    requireSendGrant(p);
    return this.routes.sendText(p, contactId, body, reply);
  }

  @Post('conversations/:contactId/templates')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send an APPROVED template (any time)' })
  @ApiResponse(SEND_OK)
  sendTemplate(
    @AccountPrincipal() p: InboxPrincipal,
    @Param('contactId') contactId: string,
    @Body() body: SendTemplateDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    requireSendGrant(p);
    return this.routes.sendTemplate(p, contactId, body, reply);
  }

  @Post('conversations/:contactId/read')
  @HttpCode(200)
  @ApiOperation({ summary: 'Mark the conversation read' })
  @ApiResponse({ status: 200, ...ok({ contactId: '42', unreadCount: 0 }) })
  markRead(@AccountPrincipal() p: InboxPrincipal, @Param('contactId') contactId: string) {
    return this.routes.markRead(p, contactId);
  }

  @Get('templates')
  @ApiOperation({ summary: 'APPROVED templates with their variables and a preview' })
  @ApiResponse({
    status: 200,
    ...ok({ templates: [templateExample] }),
  })
  templates(@AccountPrincipal() p: InboxPrincipal) {
    return this.routes.templates(p);
  }

  @Get('events')
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: 'Server-Sent Events: message.created, message.status, conversation.updated (Last-Event-ID)',
  })
  @ApiResponse({
    status: 200,
    description: 'an event stream',
    content: { 'text/event-stream': { example: 'id: 1764064800000-0\nevent: message.created\ndata: {…}\n\n' } },
  })
  events(@AccountPrincipal() p: InboxPrincipal, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.routes.events(p, request, reply);
  }
}
