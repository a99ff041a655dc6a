import { recordWebhookEvents, type Queryable } from '@switchboard/webhooks';

/**
 * Records `count` `campaign.completed` events of one account in one statement (campaign ids 0 … count − 1): a backlog
 * for every endpoint of the account subscribed to it, as the delivery tests and the webhooks bench need.
 */
export function recordCompletedCampaigns(db: Queryable, accountId: string, count: number): Promise<void> {
  return recordWebhookEvents(
    db,
    Array.from({ length: count }, (_, i) => ({
      accountId,
      type: 'campaign.completed' as const,
      data: { campaignId: i },
    })),
  );
}
