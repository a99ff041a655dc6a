import { campaignView, ListCampaignsQuery } from '@switchboard/campaigns';
import { pageMeta } from '@switchboard/core';
import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, defined, renameWords, type ToolDefinition, validateDto } from '../tool-kit';

const campaignId = z.number().int().describe('campaign_id (list_campaigns)');

export function campaignTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'list_campaigns',
      title: 'List campaigns',
      description:
        'Prepared campaigns of the account, newest first: name, status (draft, running, paused, completed, cancelled), number, template and default variables.',
      grant: '/campaigns',
      input: z.object({
        page: z.number().int().optional().describe('page number, from 1 (default 1)'),
        pageSize: z.number().int().optional().describe('campaigns per page, 1 to 100 (default 20)'),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args, client) {
        const query = await validateDto(ListCampaignsQuery, defined(args));
        const { campaigns, total } = await s.campaigns.list(client.accountId, query);
        const items = campaigns.map((c) => campaignView(c));
        const lines = items.map(
          (c) => `${c.name} (campaign_id ${c.campaign_id}, ${c.status}, template ${c.templateName})`,
        );
        return {
          data: { campaigns: items, ...pageMeta(query, total) },
          text: `${items.length} of ${total} campaign(s)${lines.length ? `: ${lines.join('; ')}` : ''}`,
        };
      },
    }),
    defineTool({
      name: 'get_campaign_progress',
      title: 'Get campaign progress',
      description:
        'One campaign with live progress counts: audience, recipients, pending, queued, sent, delivered, read, failed, replied, skipped_blocked, cancelled.',
      grant: '/campaigns',
      input: z.object({ campaign_id: campaignId }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run({ campaign_id }, client) {
        const campaign = await s.campaigns.find(client.accountId, String(campaign_id));
        const progress = await s.campaigns.progress(campaign.id);
        const counts = Object.entries(progress)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        return {
          data: { campaign: campaignView(campaign, progress) },
          text: `${campaign.name} (${campaign.status}): ${counts}`,
        };
      },
    }),
    defineTool({
      name: 'trigger_campaign',
      title: 'Trigger a campaign for contacts',
      description:
        "Sends the campaign's template to these contacts (found or created by number), each with its own variables over the campaign's defaults. " +
        'Contacts already in the audience are skipped unless include_existing_contacts is true; opted-out contacts are skipped. idempotency_key is ' +
        'required: a retry with the same key sends nothing new. Follow up with get_campaign_progress.',
      grant: '/campaigns',
      input: z.object({
        campaign_id: campaignId,
        contacts: z
          .array(
            z.object({
              phoneNumber: z.string().describe('with country code'),
              name: z.string().optional(),
              email: z.string().optional(),
              variables: z
                .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
                .optional()
                .describe('this contact\'s template variables, e.g. {"name": "Ann"}'),
            }),
          )
          .describe('1 to 1000 recipients'),
        idempotency_key: z
          .string()
          .describe(
            'a unique string for this trigger (e.g. the id of the event that caused it); a retry with the same key does nothing new',
          ),
        include_existing_contacts: z
          .boolean()
          .optional()
          .describe('also send to contacts already in the campaign audience (default false)'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      renameFields: renameWords({ 'Idempotency-Key': 'idempotency_key' }),
      async run({ campaign_id, contacts, idempotency_key, include_existing_contacts }, client) {
        const { triggerId, created } = await s.campaigns.trigger(
          client.accountId,
          String(campaign_id),
          { contacts },
          include_existing_contacts === true,
          idempotency_key,
        );
        const progress = await s.campaigns.progress(String(campaign_id));
        return {
          data: {
            campaign_id,
            trigger_id: Number(triggerId),
            accepted: true,
            repeated: !created,
            contacts: contacts.length,
            progress,
          },
          text: created
            ? `Campaign ${campaign_id} triggered for ${contacts.length} contact(s) (trigger ${triggerId}); sending is paced in the background`
            : `Campaign ${campaign_id}: idempotency key already used (trigger ${triggerId}); nothing new was sent`,
        };
      },
    }),
  ];
}
