import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AppConfig } from '@switchboard/core';
import { DataSource } from 'typeorm';

/** How long one reading of the backlog is reused (per API process): at most a quarter of the limit. */
const READ_EVERY_MS = 500;
/** How long a request that finds the backlog over the limit is held for it to come back under (at most the limit). */
const BACKLOG_HOLD_MS = 1000;
/**
 * A run pending longer than this is stuck, not backlog (its start keeps failing, e.g. a Temporal execution terminated
 * before its first step: the recovery sweep retries it and logs why). Counted, one such row made every account's
 * webhook answer 429 for good. A real backlog is throttled long before it: its runs pending over the limit count.
 */
const STUCK_PENDING_MS = 10 * 60_000;

export interface BacklogVerdict {
  /** how long the oldest run accepted but not started yet has waited (0: none) */
  oldestPendingMs: number;
  /** set when the inbound webhook should answer 429: the Retry-After, in seconds */
  retryAfterSeconds?: number;
}

/**
 * Backpressure of the inbound workflow webhook: the age of the oldest run still `pending` (accepted, not started by
 * the worker yet, on either driver). Above AUTOMATION_MAX_BACKLOG_MS a request is first held (BACKLOG_HOLD_MS at most)
 * while the workers catch up, then, still above, answered 429 with a Retry-After: accepted work starts promptly instead
 * of piling up. The hold is the gentler half: many senders retry a refused webhook only minutes later, and a sender
 * refused on all its connections at once stood idle for the whole Retry-After (in the bench, 40 % of its time) while
 * the workers had already caught up. At most one indexed query per READ_EVERY_MS per API process, however many wait.
 */
@Injectable()
export class RunBacklog {
  private reading?: Promise<number>;
  private readAt = 0;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {}

  /**
   * The 429 answer while the backlog is over its limit (the inbound webhook's, and MCP's start_workflow), or undefined.
   * Never throws: without a reading of the backlog, work is accepted.
   */
  async refusal(): Promise<{ message: string; retryAfterSeconds: number } | undefined> {
    const verdict: BacklogVerdict = await this.verdict().catch(() => ({ oldestPendingMs: 0 }));
    if (verdict.retryAfterSeconds === undefined) return undefined;
    return {
      message: `Too many runs waiting to start (the oldest for ${Math.round(verdict.oldestPendingMs / 1000)} s); retry after ${verdict.retryAfterSeconds} seconds`,
      retryAfterSeconds: verdict.retryAfterSeconds,
    };
  }

  async verdict(): Promise<BacklogVerdict> {
    const limit = this.config.AUTOMATION_MAX_BACKLOG_MS;
    if (limit <= 0) return { oldestPendingMs: 0 };
    const readEveryMs = Math.min(READ_EVERY_MS, limit / 4);
    const stuckMs = Math.max(STUCK_PENDING_MS, 4 * limit);
    let oldestPendingMs = await this.oldestPendingMs(readEveryMs, stuckMs);
    const holdUntil = Date.now() + Math.min(BACKLOG_HOLD_MS, limit);
    while (oldestPendingMs > limit && Date.now() < holdUntil) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(readEveryMs, holdUntil - Date.now())));
      oldestPendingMs = await this.oldestPendingMs(readEveryMs, stuckMs);
    }
    if (oldestPendingMs <= limit) return { oldestPendingMs };
    return { oldestPendingMs, retryAfterSeconds: Math.max(1, Math.min(30, Math.ceil(limit / 6000))) };
  }

  private oldestPendingMs(maxAgeMs: number, stuckMs: number): Promise<number> {
    if (!this.reading || Date.now() - this.readAt >= maxAgeMs) {
      this.readAt = Date.now();
      this.reading = this.db
        .query(
          `SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(updated_at)) * 1000, 0)::float8 AS ms
             FROM workflow_runs WHERE status = 'pending' AND updated_at > now() - make_interval(secs => $1 / 1000.0)`,
          [stuckMs],
        )
        .then(([row]: Array<{ ms: number }>) => Number(row.ms))
        .catch((error) => {
          this.reading = undefined; // no reading: never block the webhook on it
          throw error;
        });
    }
    return this.reading;
  }
}
