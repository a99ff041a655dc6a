import { validationException } from '@switchboard/core';
import { isBodyKey, recipientOf, validateSessionBody } from '@switchboard/messaging';
import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, renameWords, ToolError, type ToolDefinition } from '../tool-kit';

const to = z.string().describe('recipient phone number with country code, e.g. +4915112345678 (`+` optional)');
const sessionTo = z
  .string()
  .describe(
    'recipient phone number with country code, e.g. +4915112345678 (`+` optional), or the business-scoped user id of a customer known only by a WhatsApp username (whatsapp_user_id in list_conversations)',
  );
const from = z
  .string()
  .optional()
  .describe("messagingPhoneId of the account's number to send from (get_account); default: the account's first number");
const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe(
    'any unique string for this message (e.g. order-81723-shipped): a retry with the same key returns the first message and sends nothing again. Strongly recommended.',
  );

/**
 * Values given under the template's own variable names ({"order": "A-1", "first": "Ann"} for "Hi {{first}}, order
 * {{order}}") are put in the template's order, as the REST body's positional custom* keys: the REST rule (key order)
 * filled "Order Ann for A-1" when an agent named them in another order. Anything else is passed on unchanged.
 */
async function byTemplateNames(
  s: McpServices,
  accountId: string,
  templateName: string,
  variables: Record<string, string | number | boolean> | undefined,
): Promise<Record<string, string | number | boolean> | undefined> {
  if (!variables) return variables;
  const found = await s.templates.findApprovedForSend(accountId, templateName);
  if (!found.ok) return variables; // the send answers why
  const { variables: names, category } = found.template as { variables: string[]; category: string };
  if (category === 'AUTHENTICATION' || !names.length || !names.every((n) => Object.hasOwn(variables, n)))
    return variables;
  const others = Object.entries(variables).filter(([key]) => !names.includes(key) && !isBodyKey(key));
  return Object.fromEntries([...names.map((n, i) => [`custom_${i + 1}`, variables[n]]), ...others]);
}

export function messageTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'send_template_message',
      title: 'Send a template message',
      description:
        'Sends an APPROVED message template to a phone number; works at any time (outside the 24-hour window too). variables fill the ' +
        "template's variables by name when every one of them is given under its name (see list_templates / get_template); otherwise " +
        '`name`, `email` and `custom*` keys fill the body in key order, ' +
        '`cta_link` the dynamic part of a URL button, `code` an authentication code. A missing contact is created. Returns the message id and status. ' +
        'Pass an idempotency_key so that a retry never sends twice.',
      grant: '/send-message',
      input: z.object({
        to,
        template: z.string().describe('name of an APPROVED template (list_templates)'),
        variables: z
          .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
          .optional()
          .describe('variable name → value, e.g. {"name": "Ann"}'),
        recipient_name: z.string().optional().describe('name for the contact when it is created'),
        media_url: z
          .string()
          .optional()
          .describe('public http(s) URL of the header image, video or document (templates with a media header)'),
        carousel_data: z
          .array(
            z.object({
              media_url: z.string().optional().describe("this card's header image or video (default: the template's)"),
              cta_link: z.string().optional().describe("the dynamic part of the card's URL button, when it has one"),
            }),
          )
          .optional()
          .describe('carousel templates: one entry per card, in order (get_template shows the cards)'),
        messagingPhoneId: from,
        idempotency_key: idempotencyKey,
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      renameFields: renameWords({
        templateName: 'template',
        receipentName: 'recipient_name',
        mediaUrl: 'media_url',
        carouselData: 'carousel_data',
        'Idempotency-Key': 'idempotency_key',
      }),
      async run(args, client) {
        const phone = await s.sendingNumber(client.accountId, args.messagingPhoneId);
        const body = {
          to: args.to,
          templateName: args.template,
          variables: await byTemplateNames(s, client.accountId, args.template, args.variables),
          receipentName: args.recipient_name,
          mediaUrl: args.media_url,
          carouselData: args.carousel_data?.map((card) => ({ mediaUrl: card.media_url, cta_link: card.cta_link })),
        };
        const { body: result } = await s.messages.sendTemplates(
          client.accountId,
          phone.messagingPhoneId,
          body,
          args.idempotency_key,
        );
        const item = result.results[0];
        if (!item.success)
          throw new ToolError(item.message, {
            ...(item.messageId ? { messageId: item.messageId, status: item.status } : {}),
            to: args.to,
            template: args.template,
          });
        const data = {
          messageId: item.messageId,
          status: item.status,
          message: item.message,
          contact: item.contact,
          template: args.template,
          messagingPhoneId: phone.messagingPhoneId,
        };
        return {
          data,
          text: `Template ${args.template} to ${item.contact.contact_number}: ${item.message} (message id ${item.messageId}, status ${item.status})`,
        };
      },
    }),
    defineTool({
      name: 'send_session_message',
      title: 'Send a free-form message (24-hour window)',
      description:
        'Sends a free-form text, optionally with up to 3 quick-reply buttons, to a customer who wrote to the number in the last 24 hours ' +
        '(the customer-care window; list_conversations shows it per contact). Outside the window it fails and nothing is sent: use ' +
        'send_template_message with an approved template instead.',
      grant: '/send-message',
      input: z.object({
        to: sessionTo,
        message: z.string().describe('the text (at most 4096 characters; 1024 with quick replies)'),
        quick_replies: z
          .array(z.string())
          .optional()
          .describe('up to 3 button titles (at most 20 characters each) the customer can tap'),
        messagingPhoneId: from,
        idempotency_key: idempotencyKey,
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      renameFields: (text) =>
        renameWords({ receipentPhone: 'to', buttons: 'quick_replies' })(
          text
            .replace(/buttons\[(\d+)\]\.text/g, 'quick_replies[$1]')
            .replace(/quick_reply allows at most (\d+) buttons/, 'quick_replies must have at most $1 items'),
        ),
      async run(args, client) {
        const replies = args.quick_replies ?? [];
        const body = replies.length
          ? {
              typOfmsg: 'quick_reply',
              receipentPhone: args.to,
              message: args.message,
              buttons: replies.map((text) => ({ text })),
            }
          : { typOfmsg: 'normal_message', receipentPhone: args.to, message: args.message };
        const checked = validateSessionBody(body);
        if (!checked.value) throw validationException(checked.errors);
        const phone = await s.sendingNumber(client.accountId, args.messagingPhoneId);
        // valid: checked above; a customer known only by a business-scoped user id has its window under that id
        const customer = recipientOf(args.to)!;
        const window = await s.conversations.window(phone.id, customer);
        // a retry of a send accepted while the window was open replays that answer (or is refused as another message)
        const retry = async () =>
          args.idempotency_key !== undefined && (await s.messages.keyUsed(client.accountId, args.idempotency_key));
        if (!window.open && !(await retry())) {
          const templates = client.grants.includes('/templates')
            ? (await s.templates.list(client.accountId, { status: 'APPROVED', page: 1, pageSize: 5 })).templates.map(
                (t) => t.name,
              )
            : [];
          const since = window.expires_at
            ? `it closed at ${window.expires_at}`
            : 'the customer has never written to this number';
          throw new ToolError(
            `Outside the 24-hour customer-care window with ${customer} (${since}): a session message cannot be sent and nothing was sent. ` +
              `Send an approved template with send_template_message instead${templates.length ? ` (e.g. ${templates.join(', ')})` : ''}.`,
            {
              code: 'window_closed',
              window,
              suggestion: { tool: 'send_template_message', approved_templates: templates },
            },
          );
        }
        const { body: result } = await s.messages.sendSession(
          client.accountId,
          phone.messagingPhoneId,
          body,
          args.idempotency_key,
        );
        if (!result.success)
          throw new ToolError(result.message, {
            messageId: result.messageId,
            status: result.status,
            code: result.code ?? null,
          });
        const data = {
          messageId: result.messageId,
          status: result.status,
          message: result.message,
          to: customer,
          messagingPhoneId: phone.messagingPhoneId,
          window,
        };
        return {
          data,
          text: `${result.message} (message id ${result.messageId}, status ${result.status}; ${window.open ? 'window open until' : 'window closed at'} ${window.expires_at})`,
        };
      },
    }),
  ];
}
