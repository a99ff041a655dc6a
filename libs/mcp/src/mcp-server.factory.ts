import { Injectable } from '@nestjs/common';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { AuthenticatedClient } from '@switchboard/auth';
import { z } from 'zod';
import { McpServices } from './mcp-services';
import { runTool, type ToolDefinition } from './tool-kit';
import { accountTools, accountView } from './tools/account.tools';
import { campaignTools } from './tools/campaigns.tools';
import { contactTools } from './tools/contacts.tools';
import { conversationTools } from './tools/conversations.tools';
import { messageTools } from './tools/messages.tools';
import { templatePreview, templateTools } from './tools/templates.tools';
import { workflowTools } from './tools/workflows.tools';
import { draftTemplatePrompt } from './prompts';

export const SERVER_INFO = { name: 'switchboard', version: '1.0.0' };

const INSTRUCTIONS =
  'Switchboard sends WhatsApp messages for one business account. Template messages (send_template_message, approved templates only) ' +
  "can be sent at any time; free-form messages (send_session_message) only within 24 hours of the customer's last message. " +
  'Always pass an idempotency_key when sending or triggering so that a retry never sends twice. The tools listed are the ones this ' +
  "client's grants allow.";

/** `forbidden` when the token's grants do not cover the tool (checked again at every call, like the REST grant guard). */
function grantError(grant: string) {
  return {
    isError: true,
    content: [{ type: 'text' as const, text: `Unauthorized to make this request (required grant: ${grant})` }],
    structuredContent: { error: 'Unauthorized to make this request', required_grant: grant },
  };
}

/** What a request asks of the server: the tools its `tools/call` messages name; `onlyCalls` when nothing else. */
export interface ToolCalls {
  tools: string[];
  onlyCalls: boolean;
  listsTools: boolean;
}

const NO_CALLS: ToolCalls = { tools: [], onlyCalls: false, listsTools: false };

/**
 * Builds one McpServer per request (stateless Streamable HTTP) for one authenticated client: only the tools, resources
 * and prompts its grants allow. The tool definitions are built once; a server costs a few object allocations.
 */
@Injectable()
export class McpServerFactory {
  readonly tools: ToolDefinition[];
  /** Each Server would otherwise build its own Ajv instance (about a millisecond); it is only used for elicitation. */
  private readonly jsonSchemaValidator = new AjvJsonSchemaValidator();

  constructor(private readonly services: McpServices) {
    const s = services;
    this.tools = [
      accountTools,
      templateTools,
      messageTools,
      contactTools,
      conversationTools,
      campaignTools,
      workflowTools,
    ].flatMap((group) => group(s));
  }

  /** The tools a client with these grants may list and call. */
  toolsFor(grants: readonly string[]): ToolDefinition[] {
    return this.tools.filter((t) => grants.includes(t.grant));
  }

  /**
   * A request (one message or a batch) of `tools/call`s only needs the tools it calls, no other tool, resource or
   * prompt (a stateless server answers exactly one request): saves registering the rest on every call. A call of a
   * known tool outside the grants gets the tool, whose handler answers which grant it needs, unless the request also
   * lists tools (the list shows the granted ones only).
   */
  create(client: AuthenticatedClient, calls: ToolCalls = NO_CALLS): McpServer {
    const server = new McpServer(SERVER_INFO, {
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: this.jsonSchemaValidator,
    });
    const called = this.tools.filter((t) => calls.tools.includes(t.name));
    const onlyCalls = calls.onlyCalls && called.length > 0; // none known: answered as usual ("Tool not found")
    const tools = onlyCalls
      ? called
      : [...new Set([...this.toolsFor(client.grants), ...(calls.listsTools ? [] : called)])];
    for (const tool of tools) {
      server.registerTool(
        tool.name,
        { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: tool.annotations },
        async (args, extra) => {
          const grants = extra.authInfo?.scopes ?? [];
          if (!grants.includes(tool.grant)) return grantError(tool.grant);
          return runTool(tool, args, client);
        },
      );
    }
    if (tools.length === 0) {
      // A client whose grants cover no tool still has a (empty) tool list rather than "method not found".
      server.server.registerCapabilities({ tools: {} });
      server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
    }
    if (!onlyCalls) this.registerResources(server, client);
    return server;
  }

  private registerResources(server: McpServer, client: AuthenticatedClient) {
    const s = this.services;
    const json = (uri: URL, value: unknown) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
    });
    if (client.grants.includes('/account')) {
      server.registerResource(
        'account',
        'switchboard://account',
        {
          title: 'The account',
          description: 'The business account and its connected numbers (messagingPhoneId, status, rate)',
          mimeType: 'application/json',
        },
        async (uri) => json(uri, await accountView(s, client.accountId)),
      );
    }
    if (client.grants.includes('/templates')) {
      server.registerResource(
        'approved-templates',
        'switchboard://templates',
        {
          title: 'Approved templates',
          description: 'Every APPROVED template: name, language, category, variables and preview text',
          mimeType: 'application/json',
        },
        async (uri) => {
          const rows = await s.templates.listApproved(client.accountId);
          return json(
            uri,
            rows.map((t) => ({
              template_name: t.name,
              language: t.language,
              category: t.category,
              variables: t.variables,
              preview: templatePreview(t),
            })),
          );
        },
      );
      server.registerPrompt(
        'draft_template',
        {
          title: 'Draft a message template',
          description: 'Drafts a WhatsApp message template for a purpose, as a valid POST /templates/create payload',
          argsSchema: {
            purpose: z
              .string()
              .describe(
                'what the message is for, e.g. "tell a customer their order has shipped, with a tracking link"',
              ),
            category: z.string().optional().describe('MARKETING, UTILITY or AUTHENTICATION (default: choose)'),
            language: z.string().optional().describe('language code, e.g. en_US (default en_US)'),
          },
        },
        async (args) =>
          draftTemplatePrompt(
            args,
            (await s.templates.phoneIds(client.accountId)).values().next().value ??
              '<messagingPhoneId from get_account>',
          ),
      );
    }
  }
}
