import { ForbiddenException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LiveEvents } from '@switchboard/core';
import { inboxTopic } from '@switchboard/messaging';
import type { InboxListQuery, SendTemplateDto, SendTextDto, ThreadQuery } from './inbox.dto';
import { CANNOT_READ, InboxService, type InboxPrincipal } from './inbox.service';

/** A session minted without `read` sends (and picks templates) but reads no conversation. */
function mayRead(p: InboxPrincipal): void {
  if (!p.permissions.includes('read')) throw new ForbiddenException({ message: CANNOT_READ });
}

/** The inbox's handlers, shared by the embedded (/v1/embed/inbox) and the console (/v1/inbox) controllers. */
export class InboxRoutes {
  constructor(
    private readonly inbox: InboxService,
    private readonly live: LiveEvents,
  ) {}

  async list(p: InboxPrincipal, query: InboxListQuery) {
    mayRead(p);
    return { success: true, data: await this.inbox.list(p, query) };
  }

  async conversation(p: InboxPrincipal, contactId: string) {
    mayRead(p);
    return { success: true, data: await this.inbox.conversation(p, contactId) };
  }

  async thread(p: InboxPrincipal, contactId: string, query: ThreadQuery) {
    mayRead(p);
    return { success: true, data: await this.inbox.thread(p, contactId, query) };
  }

  async sendText(p: InboxPrincipal, contactId: string, body: SendTextDto, reply: FastifyReply) {
    const result = await this.inbox.sendText(p, contactId, body);
    void reply.status(result.httpStatus);
    return result.body;
  }

  async sendTemplate(p: InboxPrincipal, contactId: string, body: SendTemplateDto, reply: FastifyReply) {
    const result = await this.inbox.sendTemplate(p, contactId, body);
    void reply.status(result.httpStatus);
    return result.body;
  }

  async templates(p: InboxPrincipal) {
    return { success: true, data: { templates: await this.inbox.approvedTemplates(p) } };
  }

  async markRead(p: InboxPrincipal, contactId: string) {
    mayRead(p);
    return { success: true, data: await this.inbox.markRead(p, contactId) };
  }

  async events(p: InboxPrincipal, request: FastifyRequest, reply: FastifyReply) {
    mayRead(p);
    const inScope = await this.inbox.eventFilter(p);
    await this.live.sse(request, reply, inboxTopic(p.accountId), {
      filter: (event) => inScope((event.data ?? {}) as Record<string, unknown>),
      stillValid: p.stillValid,
    });
  }
}
