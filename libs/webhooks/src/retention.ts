import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AppConfig, PeriodicSweeps } from '@switchboard/core';
import { DataSource } from 'typeorm';

const SWEEP_EVERY_MS = 3600_000;
/** events deleted per statement: each takes its deliveries and their attempts with it (ON DELETE CASCADE) */
const DELETE_BATCH = 2000;

/**
 * Account webhook events are kept WEBHOOK_RETENTION_DAYS, with their deliveries and attempt logs: the reach of
 * replay, GET /v1/events and the delivery log. Without it the outbox grew by every event forever (a delivery still
 * pending that long, to an endpoint disabled since, goes too). Hourly, by one worker, account by account along
 * `webhook_events_account_idx` in batches, so no statement holds many rows' locks or needs an index of its own.
 */
@Injectable()
export class WebhookRetention implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhookRetention');

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sweeps: PeriodicSweeps,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sweeps.register('webhook-retention', SWEEP_EVERY_MS, async () => {
      const deleted = await this.prune(this.config.WEBHOOK_RETENTION_DAYS);
      if (deleted) this.logger.log({ msg: 'old account webhook events deleted', deleted });
    });
  }

  /** Deletes the events created more than `retentionDays` ago (and what hangs on them); returns how many. */
  async prune(retentionDays: number): Promise<number> {
    // the accounts that have events, one index probe each (a skip scan of webhook_events_account_idx)
    const accounts: Array<{ id: string }> = await this.db.query(
      `WITH RECURSIVE a AS (
         (SELECT account_id FROM webhook_events ORDER BY account_id LIMIT 1)
         UNION ALL
         SELECT (SELECT e.account_id FROM webhook_events e WHERE e.account_id > a.account_id ORDER BY e.account_id LIMIT 1)
           FROM a WHERE a.account_id IS NOT NULL)
       SELECT account_id::text AS id FROM a WHERE account_id IS NOT NULL`,
    );
    let deleted = 0;
    for (const { id } of accounts) {
      for (;;) {
        const [, count] = (await this.db.query(
          `DELETE FROM webhook_events WHERE id IN (
             SELECT id FROM webhook_events
              WHERE account_id = $1 AND created_at < now() - make_interval(days => $2)
              ORDER BY created_at LIMIT ${DELETE_BATCH})`,
          [id, retentionDays],
        )) as [unknown, number];
        deleted += count;
        if (count < DELETE_BATCH) break;
      }
    }
    return deleted;
  }
}
