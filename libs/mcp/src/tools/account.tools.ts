import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, type ToolDefinition } from '../tool-kit';

/** The account and its numbers as an agent needs them (the callback signing secret is left out on purpose). */
export async function accountView(s: McpServices, accountId: string) {
  const { account, phoneNumbers } = await s.accounts.getAccount(accountId);
  return {
    id: Number(account.id),
    name: account.name,
    phone_numbers: phoneNumbers.map((p) => ({
      messagingPhoneId: p.messagingPhoneId,
      display_phone_number: p.displayPhoneNumber,
      verified_name: p.verifiedName,
      status: p.status,
      messages_per_second: p.messagesPerSecond,
    })),
  };
}

export function accountTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'get_account',
      title: 'Get account',
      description:
        'The WhatsApp business account this token belongs to and its connected numbers: messagingPhoneId (pass it as `messagingPhoneId` ' +
        'to the send tools when the account has several numbers), display number, verified name, status and sending rate (messages per second).',
      grant: '/account',
      input: z.object({}),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(_args, client) {
        const account = await accountView(s, client.accountId);
        const numbers = account.phone_numbers.map((p) => `${p.display_phone_number} (messagingPhoneId ${p.messagingPhoneId}, ${p.status}, ${p.messages_per_second} msg/s)`);
        return { data: { account }, text: `${account.name}: ${numbers.length} number(s): ${numbers.join('; ') || 'none'}` };
      },
    }),
  ];
}
