import { ListConversationMessagesQuery, ListConversationsQuery } from '@switchboard/messaging';
import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, defined, type ToolDefinition, validateDto } from '../tool-kit';

/** How to reach the customer: +number, or the business-scoped user id of one known only by a WhatsApp username. */
function addressOf(c: { contact_number: string | null; whatsapp_user_id?: string | null }): string {
  return c.contact_number ? `+${c.contact_number}` : `user id ${c.whatsapp_user_id}`;
}

export function conversationTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'list_conversations',
      title: 'List conversations',
      description:
        'Conversations of the account (one per contact), most recent activity first: the contact, the last message, how many customer messages ' +
        'await a reply (unread_count), and the 24-hour window (window.open, window.expires_at): while it is open send_session_message works.',
      grant: '/conversations',
      input: z.object({
        page: z.number().int().optional().describe('page number, from 1 (default 1)'),
        pageSize: z.number().int().optional().describe('conversations per page, 1 to 100 (default 20)'),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args, client) {
        const query = await validateDto(ListConversationsQuery, defined(args));
        const { data } = await s.conversations.list(client.accountId, query);
        const lines = data.conversations.map(
          (c) =>
            `${c.contact.name ?? '(no name)'} ${addressOf(c.contact)} (contact_id ${c.contact.contact_id}, ${c.unread_count} unread, window ${c.window.open ? `open until ${c.window.expires_at}` : 'closed'})`,
        );
        return {
          data,
          text: `${lines.length} of ${data.total} conversation(s)${lines.length ? `: ${lines.join('; ')}` : ''}`,
        };
      },
    }),
    defineTool({
      name: 'get_conversation_messages',
      title: 'Get the messages of a conversation',
      description:
        "A contact's messages in both directions, newest first, with their text, type, template and delivery status (sent, delivered, read, failed, replied).",
      grant: '/conversations',
      input: z.object({
        contact_id: z.number().int().describe('contact_id (list_conversations or search_contacts)'),
        direction: z
          .enum(['inbound', 'outbound'])
          .optional()
          .describe("only the customer's (inbound) or only our (outbound) messages"),
        page: z.number().int().optional().describe('page number, from 1 (default 1)'),
        pageSize: z.number().int().optional().describe('messages per page, 1 to 100 (default 50)'),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run({ contact_id, ...args }, client) {
        const query = await validateDto(ListConversationMessagesQuery, defined(args));
        const { data } = await s.conversations.messages(client.accountId, String(contact_id), query);
        const lines = (
          data.messages as Array<{
            direction: string;
            text: string | null;
            type: string;
            status: string;
            template_name: string | null;
          }>
        )
          .slice(0, 10)
          .map(
            (m) =>
              `${m.direction === 'inbound' ? 'customer' : 'us'}: ${m.template_name ? `template ${m.template_name}` : (m.text ?? `(${m.type})`)} [${m.status}]`,
          );
        return {
          data,
          text: `${data.messages.length} of ${data.total} message(s) with ${addressOf(data.contact)}${lines.length ? `, newest first: ${lines.join(' | ')}` : ''}`,
        };
      },
    }),
  ];
}
