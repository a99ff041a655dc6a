import { Injectable } from '@nestjs/common';

export type CampaignHold = (campaignId: string, reason: string) => Promise<boolean>;

/**
 * How the send pipeline pauses a campaign the platform stopped sending for (a revoked token, the template paused):
 * the campaigns module gives the handler when it initialises (messaging cannot import campaigns: campaigns imports
 * messaging). `hold` pauses a running campaign with the reason and holds its unsent messages; false when it did not
 * (not running, or no campaigns module in this process).
 */
@Injectable()
export class CampaignHolds {
  private handler?: CampaignHold;

  handleWith(handler: CampaignHold): void {
    this.handler = handler;
  }

  hold(campaignId: string, reason: string): Promise<boolean> {
    return this.handler ? this.handler(campaignId, reason) : Promise.resolve(false);
  }
}
