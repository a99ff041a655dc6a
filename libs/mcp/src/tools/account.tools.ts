import { CloudApiClient } from '@switchboard/whatsapp';
import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, type ToolDefinition } from '../tool-kit';

/** The number's quality rating and messaging tier as the platform reports them now; null when it does not answer in time. */
async function platformQuality(s: McpServices, phoneNumberRowId: string) {
  try {
    const details = await new CloudApiClient(await s.accounts.connectionFor(phoneNumberRowId), {
      timeoutMs: 3000,
    }).getPhoneNumber();
    return {
      quality_rating: details.quality_rating ?? null,
      messaging_limit_tier: details.messaging_limit_tier ?? null,
    };
  } catch {
    return { quality_rating: null, messaging_limit_tier: null };
  }
}

/** The account and its numbers as an agent needs them (the callback signing secret is left out on purpose). */
export async function accountView(s: McpServices, accountId: string) {
  const { account, phoneNumbers } = await s.accounts.getAccount(accountId);
  const quality = await Promise.all(phoneNumbers.map((p) => platformQuality(s, p.id)));
  return {
    id: Number(account.id),
    name: account.name,
    phone_numbers: phoneNumbers.map((p, i) => ({
      messagingPhoneId: p.messagingPhoneId,
      display_phone_number: p.displayPhoneNumber,
      verified_name: p.verifiedName,
      status: p.status,
      messages_per_second: p.messagesPerSecond,
      ...quality[i],
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
        'to the send tools when the account has several numbers), display number, verified name, status, sending rate (messages per second) ' +
        'and the quality rating (GREEN, YELLOW, RED) and messaging limit tier the platform reports now (null if it did not answer).',
      grant: '/account',
      input: z.object({}),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(_args, client) {
        const account = await accountView(s, client.accountId);
        const numbers = account.phone_numbers.map(
          (p) =>
            `${p.display_phone_number} (messagingPhoneId ${p.messagingPhoneId}, ${p.status}, ${p.messages_per_second} msg/s, quality ${p.quality_rating ?? 'unknown'})`,
        );
        return {
          data: { account },
          text: `${account.name}: ${numbers.length} number(s): ${numbers.join('; ') || 'none'}`,
        };
      },
    }),
  ];
}
