/** BullMQ queue names, one per kind of background work. */
export const QUEUES = {
  platformWebhooks: 'platform-webhooks',
  sends: 'sends',
  callbacks: 'callbacks',
  campaigns: 'campaigns',
  automations: 'automations',
} as const;
