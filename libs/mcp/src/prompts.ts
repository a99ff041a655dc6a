import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The `draft_template` prompt: asks the model for a POST /templates/create payload in Switchboard's component format
 * (docs/templates.md), which the agent (or a person) can then submit.
 */
export function draftTemplatePrompt(
  args: { purpose: string; category?: string; language?: string },
  messagingPhoneId: string,
): GetPromptResult {
  const example = {
    template_name: 'order_shipped',
    category: 'UTILITY',
    language: args.language || 'en_US',
    messagingPhoneId,
    components: [
      { type: 'header', parameters: [{ type: 'text', text: 'Your order is on its way' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Hi {{name}}, order {{custom_order}} has shipped.' },
          { type: 'variable', variable: { text: 'name', value: 'Ann' } },
          { type: 'variable', variable: { text: 'custom_order', value: '81723' } },
        ],
      },
      { type: 'footer', parameters: [{ type: 'text', text: 'Reply STOP to opt out' }] },
      {
        type: 'button',
        parameters: [{ type: 'cta', cta: { text: 'URL', value: 'Track', url: 'https://shop.example.com/track' } }],
      },
    ],
  };
  const text = [
    `Draft a WhatsApp message template for this purpose: ${args.purpose}.`,
    `Category: ${args.category || 'choose MARKETING, UTILITY or AUTHENTICATION (UTILITY for transactional updates)'}. Language: ${args.language || 'en_US'}.`,
    "Answer with only a JSON object that is a valid body for Switchboard's POST /templates/create, in this format:",
    JSON.stringify(example, null, 2),
    'Rules: template_name is lowercase letters, digits and underscores. Body variables are named in double braces ({{name}}); every one needs a',
    '{type: "variable", variable: {text, value}} entry with an example value; name them name, email or custom_<something> so that sends can fill',
    'them. Body at most 1024 characters, header and footer at most 60, button text at most 25; up to 10 buttons ({type: "quick_reply",',
    'quick_reply: {value}} or {type: "cta", cta: {text: "URL" | "Phone", value: label, url}}). Do not start or end the body with a variable.',
    `Keep messagingPhoneId "${messagingPhoneId}".`,
  ].join('\n');
  return {
    description: `A template for: ${args.purpose}`,
    messages: [{ role: 'user', content: { type: 'text', text } }],
  };
}
