import type { FastifyReply, FastifyRequest } from 'fastify';
import { LiveEvents } from '@switchboard/core';
import { inboxTopic } from '@switchboard/messaging';
import type { InboxListQuery, SendTemplateDto, SendTextDto, ThreadQuery } from './inbox.dto';
import { InboxService, type InboxPrincipal } from './inbox.service';

/** The inbox's handlers, shared by the embedded (/v1/embed/inbox) and the console (/v1/inbox) controllers. */
export class InboxRoutes {
  constructor(
    private readonly inbox: InboxService,
    private readonly live: LiveEvents,
  ) {}

  async list(p: InboxPrincipal, query: InboxListQuery) {
    return { success: true, data: await this.inbox.list(p, query) };
  }

  async conversation(p: InboxPrincipal, contactId: string) {
    return { success: true, data: await this.inbox.conversation(p, contactId) };
  }

  async thread(p: InboxPrincipal, contactId: string, query: ThreadQuery) {
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
    return { success: true, data: await this.inbox.markRead(p, contactId) };
  }

  async events(p: InboxPrincipal, request: FastifyRequest, reply: FastifyReply) {
    const inScope = await this.inbox.eventFilter(p);
    await this.live.sse(request, reply, inboxTopic(p.accountId), {
      filter: (event) => inScope((event.data ?? {}) as Record<string, unknown>),
      stillValid: p.stillValid,
    });
  }
}
