import {
  ListTemplatesQuery,
  TEMPLATE_STATUSES,
  type Template,
  templateDetail,
  templateSummary,
} from '@switchboard/templates';
import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, defined, type ToolDefinition, validateDto } from '../tool-kit';

/**
 * The text a recipient would read (header, body, footer), with the {{variables}} still in place. list_templates has
 * the same made in SQL (templateListSql's `preview`).
 */
export function templatePreview(t: Partial<Pick<Template, 'platformComponents'>>): string {
  const parts = (t.platformComponents ?? [])
    .map((c) => c as { type?: string; text?: unknown })
    .filter((c) => ['HEADER', 'BODY', 'FOOTER'].includes(String(c.type).toUpperCase()) && typeof c.text === 'string')
    .map((c) => c.text as string);
  return parts.join('\n');
}

const page = z.number().int().optional().describe('page number, from 1 (default 1)');

export function templateTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'list_templates',
      title: 'List message templates',
      description:
        'Message templates of the account, newest first: name, category, language, review status (only APPROVED templates can be sent), ' +
        'the variables to pass when sending, and a preview of the text. Use it before send_template_message to pick a template and its variables.',
      grant: '/templates',
      input: z.object({
        status: z
          .enum(TEMPLATE_STATUSES)
          .optional()
          .describe('only templates in this review status; APPROVED ones can be sent'),
        search: z.string().optional().describe('part of the template name'),
        page,
        pageSize: z.number().int().optional().describe('templates per page, 1 to 100 (default 50)'),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args, client) {
        const query = await validateDto(ListTemplatesQuery, defined(args));
        const result = await s.templates.list(client.accountId, query, { preview: true });
        const templates = result.templates.map((t) => ({ ...templateSummary(t), preview: t.preview ?? '' }));
        const names = templates.map(
          (t) =>
            `${t.template_name} (${t.status}, ${t.language}${t.variables.length ? `, variables: ${t.variables.join(', ')}` : ''})`,
        );
        return {
          data: { templates, page: result.page, pageSize: result.pageSize, total: result.total },
          text: `${templates.length} of ${result.total} template(s)${names.length ? `: ${names.join('; ')}` : ''}`,
        };
      },
    }),
    defineTool({
      name: 'get_template',
      title: 'Get a message template',
      description:
        'One template by name: status (and the rejection reason), category, language, variables, preview text, header type and components.',
      grant: '/templates',
      input: z.object({ template_name: z.string().describe('the template name, e.g. order_update') }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run({ template_name }, client) {
        const t = await s.templates.getByName(client.accountId, template_name);
        const phones = await s.templates.phoneIds(client.accountId);
        const template = { ...templateDetail(t, phones.get(t.phoneNumberId)), preview: templatePreview(t) };
        return {
          data: { template },
          text: `${t.name}: ${t.status}${t.status === 'REJECTED' && t.rejectedReason ? ` (${t.rejectedReason})` : ''}, ${t.category}, ${t.language}; variables: ${t.variables.join(', ') || 'none'}; preview: ${template.preview}`,
        };
      },
    }),
  ];
}
