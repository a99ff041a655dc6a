import type { WorkflowDefinition } from '../definition';

/**
 * "webhook → send_template → wait_for_reply → reply 'yes' → condition → send_template → end",
 * with a timeout path, used by the scenario tests and the README.
 */
export function orderConfirmationWorkflow(): WorkflowDefinition {
  return {
    trigger: { type: 'webhook' },
    startNodeId: 'ask',
    nodes: [
      {
        id: 'ask',
        type: 'send_template',
        templateName: 'order_confirm',
        to: '{{payload.customer.phone}}',
        variables: {
          name: '{{payload.customer.name}}',
          custom_order: '{{payload.order.id}}',
          cta_link: 'orders/{{payload.order.id}}',
        },
        next: 'wait',
      },
      {
        id: 'wait',
        type: 'wait_for_reply',
        timeout: '1d',
        branches: [
          { match: { type: 'button', payload: 'CANCEL' }, next: 'cancelled' },
          { match: { type: 'keyword', keywords: ['yes', 'confirm'] }, next: 'check' },
        ],
        onTimeout: 'reminder',
      },
      {
        id: 'check',
        type: 'condition',
        rules: [{ left: '{{payload.order.total}}', operator: 'gte', right: '100', next: 'vip_thanks' }],
        else: 'thanks',
      },
      {
        id: 'vip_thanks',
        type: 'send_template',
        templateName: 'vip_thanks',
        to: '{{payload.customer.phone}}',
        variables: { name: '{{payload.customer.name}}', custom_reply: '{{reply.text}}' },
        next: 'done',
      },
      { id: 'thanks', type: 'send_template', templateName: 'thanks', to: '{{payload.customer.phone}}', next: 'done' },
      {
        id: 'cancelled',
        type: 'send_session_message',
        to: '{{payload.customer.phone}}',
        text: 'Order {{payload.order.id}} cancelled.',
        next: 'done',
      },
      {
        id: 'reminder',
        type: 'send_template',
        templateName: 'order_reminder',
        to: '{{payload.customer.phone}}',
        next: 'done',
      },
      { id: 'done', type: 'end' },
    ],
  };
}

export const orderPayload = {
  customer: { phone: '+4915112345678', name: 'Ada' },
  order: { id: 'A-17', total: 120 },
};
