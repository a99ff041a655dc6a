import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AccountsService } from '@switchboard/accounts';
import { LiveEvents } from '@switchboard/core';
import { SendQueueService } from '@switchboard/messaging';
import { DataSource } from 'typeorm';
import { CampaignProgress, CampaignsService } from './campaigns.service';

/** The live topic of one campaign (LiveEvents: a Redis stream + pub/sub; the console's live view reads it as SSE). */
export const campaignTopic = (campaignId: string) => `campaign:${campaignId}`;

/** What the platform's frequent campaign error codes mean (shown beside the count in the live view). */
export const ERROR_MEANINGS: Record<number, string> = {
  130429: 'Rate limit hit: the number sent faster than its throughput allows',
  131026: 'Message undeliverable: not a WhatsApp number, or the customer cannot receive it',
  131047: 'Re-engagement required: more than 24 hours since the customer last wrote',
  131049: 'Not delivered to keep the ecosystem healthy (per-user marketing limit)',
  131050: 'The customer stopped marketing messages from this business',
  131051: 'Unsupported message type',
  132000: 'Template variables do not match the template',
  132001: 'Template does not exist in this language',
  132015: 'Template paused for low quality',
  132016: 'Template disabled for low quality',
  131031: 'Business account locked',
  131042: 'Payment problem on the business account',
  368: 'Temporarily blocked for policy violations',
};

export interface CampaignSnapshot {
  campaign_id: number;
  status: string;
  scheduled_at: string | null;
  funnel: { queued: number; sent: number; delivered: number; read: number; replied: number };
  progress: CampaignProgress;
  failed: Array<{ code: number | null; title: string | null; meaning: string | null; count: number }>;
  /** accepted by the platform per second over the last tick (null on the first snapshot) */
  messages_per_second: number | null;
  /** the number's configured rate */
  rate_limit: number;
  /** seconds until every recipient is sent at the current pace (null when unknown or done) */
  eta_seconds: number | null;
  at: string;
}

/** Snapshots of a campaign for its live view. */
@Injectable()
export class CampaignLiveService {
  constructor(
    private readonly campaigns: CampaignsService,
    private readonly sends: SendQueueService,
    private readonly accounts: AccountsService,
  ) {}

  async snapshot(
    campaignId: string,
    previous?: { sent: number; at: number; failed: CampaignSnapshot['failed']; failedCount: number },
  ): Promise<CampaignSnapshot | null> {
    const c = await this.campaigns.byId(campaignId);
    if (!c) return null;
    const progress = await this.campaigns.progress(campaignId);
    const failed =
      previous && previous.failedCount === progress.failed
        ? previous.failed
        : (await this.sends.campaignFailures(campaignId)).map((f) => ({
            ...f,
            meaning: f.code !== null ? (ERROR_MEANINGS[f.code] ?? null) : null,
          }));
    const rate = Number((await this.accounts.phoneNumberById(String(c.phone_number_id)))?.messagesPerSecond ?? 80);
    const now = Date.now();
    const perSecond =
      previous && now > previous.at
        ? Math.max(0, ((progress.sent - previous.sent) * 1000) / (now - previous.at))
        : null;
    const remaining = Math.max(
      0,
      progress.audience - progress.skipped_blocked - progress.sent - progress.failed - progress.cancelled,
    );
    const pace = perSecond && perSecond > 0 ? perSecond : c.status === 'running' ? rate : 0;
    return {
      campaign_id: Number(c.id),
      status: c.status,
      scheduled_at: c.scheduled_at ? new Date(c.scheduled_at).toISOString() : null,
      funnel: {
        queued: progress.queued + progress.pending,
        sent: progress.sent,
        delivered: progress.delivered,
        read: progress.read,
        replied: progress.replied,
      },
      progress,
      failed,
      messages_per_second: perSecond === null ? null : Math.round(perSecond * 10) / 10,
      rate_limit: rate,
      eta_seconds: c.status === 'running' && remaining > 0 && pace > 0 ? Math.ceil(remaining / pace) : null,
      at: new Date(now).toISOString(),
    };
  }
}

const TICK_MS = 1000;

/**
 * Worker side: once a second, a snapshot of every campaign that is moving (running, or changed state or finished in
 * the last seconds) is published to its live topic when it changed. Counts come from campaign_counts (a dozen rows);
 * failures are grouped again only when the failed count moved.
 */
@Injectable()
export class CampaignLiveTicker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CampaignLiveTicker.name);
  private timer?: NodeJS.Timeout;
  private running = false;
  private readonly last = new Map<
    string,
    { sent: number; at: number; failed: CampaignSnapshot['failed']; failedCount: number; json: string }
  >();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly live: LiveEvents,
    private readonly snapshots: CampaignLiveService,
  ) {}

  onApplicationBootstrap() {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  onApplicationShutdown() {
    clearInterval(this.timer);
  }

  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // Campaigns that can move: running ones first; paused ones for a minute (what was on its way when it paused
      // finishes and reports); those that changed state in the last seconds (their last snapshot; a draft has nothing
      // to show but its viewer's own first snapshot). Paused and scheduled campaigns sit still for months: counted in,
      // 200 newer ones of any account took the whole LIMIT and froze every older running campaign's stream.
      // A campaign sent through the trigger API stays draft or completed: its triggers keep it moving, running or
      // completed in the last minute (their sends still go out at the number's rate), as a running one.
      const rows: Array<{ id: string }> = await this.db.query(
        `WITH triggered AS (SELECT campaign_id FROM campaign_triggers WHERE status = 'running'
                            UNION SELECT campaign_id FROM campaign_triggers WHERE completed_at > now() - interval '1 minute'),
              moving AS (SELECT id, status, updated_at, completed_at,
                                status = 'running' OR (status IN ('draft', 'completed')
                                                       AND id IN (SELECT campaign_id FROM triggered)) AS sending
                           FROM campaigns)
         SELECT id FROM moving WHERE sending
            OR (status = 'paused' AND updated_at > now() - interval '1 minute')
            OR (status <> 'draft' AND (updated_at > now() - interval '5 seconds' OR completed_at > now() - interval '5 seconds'))
          ORDER BY sending DESC, id DESC LIMIT 200`,
      );
      const listed = new Set(rows.map((r) => String(r.id)));
      for (const key of this.last.keys()) if (!listed.has(key)) this.last.delete(key);
      for (const { id } of rows) {
        const key = String(id);
        const prev = this.last.get(key);
        const snap = await this.snapshots.snapshot(key, prev);
        if (!snap) continue;
        const { at: _at, messages_per_second: _r, eta_seconds: _e, ...stable } = snap;
        const json = JSON.stringify(stable);
        const changed = !prev || prev.json !== json || (snap.messages_per_second ?? 0) > 0;
        this.last.set(key, {
          sent: snap.progress.sent,
          at: Date.parse(snap.at),
          failed: snap.failed,
          failedCount: snap.progress.failed,
          json,
        });
        if (changed) await this.live.publishQuietly(campaignTopic(key), 'progress', snap);
      }
    } catch (error) {
      this.logger.warn(`campaign live tick: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
