import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  AppConfig,
  MicroBatcher,
  OutboundHttpError,
  safeHttpRequest,
  SecretBox,
  writeTogetherOrEachAlone,
} from '@switchboard/core';
import { DataSource, EntityManager } from 'typeorm';
import { recordWebhookEvent } from './outbox';
import { nextAttemptDelay, parseRetrySchedule } from './retry-schedule';
import { signedHeaders } from './signing';
import { envelopeOf, privateTargetMessage } from './webhook-endpoints.service';

/** Events fanned out into deliveries per dispatch statement. */
const DISPATCH_BATCH = 500;
/** A claimed delivery is due again after the attempt's timeout plus this margin (a worker that died mid-attempt). */
const LEASE_MARGIN_MS = 10_000;
const RESPONSE_EXCERPT_CHARS = 1000;
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** After an attempt finishes, the loop waits this long for others before claiming (claims in batches when busy). */
const CLAIM_GATHER_MS = 5;

interface ClaimedDelivery {
  id: string;
  attempts: number;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_valid: boolean;
  event_id: string;
  type: string;
  created_at: Date;
  account_id: string;
  data: Record<string, unknown>;
}

interface AttemptOutcome {
  delivery: ClaimedDelivery;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  excerpt: string | null;
  error: string | null;
}

/**
 * Delivers account webhooks from PostgreSQL (the outbox is the queue):
 * 1. dispatch: undispatched `webhook_events` become one `webhook_deliveries` row per subscribed, enabled endpoint
 *    (one statement: fan-out and the dispatched mark commit together);
 * 2. claim: due deliveries are leased (`next_attempt_at` moved past the attempt's timeout, `attempts` + 1), at most
 *    WEBHOOK_DELIVERY_CONCURRENCY in flight per process and WEBHOOK_ENDPOINT_CONCURRENCY per endpoint, so a slow
 *    endpoint holds a few slots and never delays the others;
 * 3. attempt: a signed POST (Standard Webhooks) through the SSRF guard, no redirects; 2xx = delivered, 410 disables
 *    the endpoint, anything else is retried on WEBHOOK_RETRY_SCHEDULE; an endpoint failing for
 *    WEBHOOK_DISABLE_AFTER_MS is disabled and a `webhook_endpoint.disabled` event is recorded.
 * A worker killed mid-attempt leaves the lease: the delivery is attempted again when it expires (at-least-once).
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly secretBox: SecretBox;
  private readonly schedule: number[];
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  /** outcome writes not yet committed (awaited at shutdown) */
  private readonly writes = new Set<Promise<void>>();
  /** outcomes of concurrent attempts in one statement; a batch the database refuses is written outcome by outcome */
  private readonly outcomes = new MicroBatcher(
    (items: AttemptOutcome[]) =>
      writeTogetherOrEachAlone(items, async (batch) => {
        await this.recordOutcomes(batch);
        return batch.map(() => undefined);
      }),
    { maxItems: 500, maxConcurrent: 2 },
  );
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeSleeper: (() => void) | null = null;
  /** an attempt finished since the last claim read the in-flight counts: the next sleep returns at once */
  private finishedSinceClaim = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {
    this.secretBox = SecretBox.fromConfig(config);
    this.schedule = parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE);
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.loopDone = this.loop();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.attempts]);
    await Promise.allSettled([...this.writes]);
  }

  private get freeSlots(): number {
    return this.config.WEBHOOK_DELIVERY_CONCURRENCY - this.attempts.size;
  }

  /**
   * Dispatches new events every poll interval (at once again while there is a backlog) and claims due deliveries
   * whenever slots are free; between rounds it sleeps until the poll interval ends or attempts finish (gathered for a
   * few milliseconds, so a busy worker claims in batches instead of once per finished attempt).
   */
  private async loop(): Promise<void> {
    let lastDispatch = 0;
    let backlog = false;
    while (this.running) {
      let claimed = 0;
      try {
        if (backlog || Date.now() - lastDispatch >= this.config.WEBHOOK_POLL_INTERVAL_MS) {
          lastDispatch = Date.now();
          backlog = (await this.dispatch()) >= DISPATCH_BATCH;
        }
        if (this.freeSlots > 0) claimed = await this.claimAndStart();
      } catch (error) {
        this.logger.error({ msg: 'webhook delivery loop failed', error: (error as Error).message });
      }
      if (!this.running) break;
      if ((claimed > 0 || backlog) && this.freeSlots > 0) continue;
      const woken = await this.sleep(this.config.WEBHOOK_POLL_INTERVAL_MS);
      if (woken && this.running) await new Promise((resolve) => setTimeout(resolve, CLAIM_GATHER_MS));
    }
  }

  /**
   * Resolves after `ms` (false) or when an attempt finishes (true), at once if one finished since the last claim
   * started: that claim saw its slot as taken, and no later wake-up would come for it (with fast receivers, every
   * attempt can finish while the claim statement runs, and the loop would idle a whole poll interval).
   */
  private sleep(ms: number): Promise<boolean> {
    if (this.finishedSinceClaim) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleeper = null;
        resolve(false);
      }, ms);
      this.wakeSleeper = () => {
        this.wakeSleeper = null;
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  private wake(): void {
    this.finishedSinceClaim = true;
    this.wakeSleeper?.();
  }

  /** Fans undispatched events out into deliveries; returns how many events it took. */
  async dispatch(): Promise<number> {
    const [row] = await this.db.query(
      `WITH ev AS (
         SELECT id, account_id, type FROM webhook_events WHERE dispatched_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED),
       marked AS (UPDATE webhook_events w SET dispatched_at = now() FROM ev WHERE w.id = ev.id RETURNING w.id),
       created AS (
         INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id)
         SELECT ev.account_id, e.id, ev.id FROM ev JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.enabled AND e.events && ARRAY[ev.type, '*']
         RETURNING id)
       SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM created)::int AS deliveries`,
      [DISPATCH_BATCH],
    );
    return row.events;
  }

  /** Leases due deliveries within the free slots (per process and per endpoint) and starts their attempts. */
  private async claimAndStart(): Promise<number> {
    this.finishedSinceClaim = false;
    const perEndpoint = this.config.WEBHOOK_ENDPOINT_CONCURRENCY;
    const free = this.freeSlots;
    const busy = [...this.inFlight];
    // One statement (no transaction round trips): lock due candidates, rank them per endpoint after the attempts this
    // process already has in flight there, lease those within both limits.
    const [claimed]: [ClaimedDelivery[], number] = await this.db.query(
      `WITH busy AS (SELECT * FROM unnest($1::text[], $2::int[]) AS b(endpoint_id, n)),
       candidates AS (
         SELECT d.id, d.endpoint_id, d.next_attempt_at, d.created_at
           FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled
          WHERE d.status = 'pending' AND d.next_attempt_at <= now()
            AND NOT (d.endpoint_id = ANY(SELECT endpoint_id FROM busy WHERE n >= $3))
          ORDER BY d.next_attempt_at, d.created_at LIMIT $4 FOR UPDATE OF d SKIP LOCKED),
       ranked AS (
         SELECT c.id, c.next_attempt_at, c.created_at,
                row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.created_at) + COALESCE(b.n, 0) AS slot
           FROM candidates c LEFT JOIN busy b ON b.endpoint_id = c.endpoint_id),
       picked AS (SELECT id FROM ranked WHERE slot <= $3 ORDER BY next_attempt_at, created_at LIMIT $5)
       UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $6::bigint / 1000.0)
         FROM picked, webhook_events e, webhook_endpoints w
        WHERE d.id = picked.id AND e.id = d.event_id AND w.id = d.endpoint_id
        RETURNING d.id, d.attempts, d.endpoint_id, w.url, w.secret_sealed, w.previous_secret_sealed,
                  COALESCE(w.previous_secret_expires_at > now(), false) AS previous_valid,
                  e.id AS event_id, e.type, e.created_at, e.account_id, e.data`,
      [
        busy.map(([id]) => id),
        busy.map(([, n]) => n),
        perEndpoint,
        free * 4,
        free,
        this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
      ],
    );
    for (const delivery of claimed) this.start(delivery);
    return claimed.length;
  }

  /** Runs one attempt: its slot is held for the HTTP request only; the outcome is written in the next batch. */
  private start(delivery: ClaimedDelivery): void {
    this.inFlight.set(delivery.endpoint_id, (this.inFlight.get(delivery.endpoint_id) ?? 0) + 1);
    const run: Promise<void> = this.attempt(delivery)
      .then((outcome) => {
        const write = this.outcomes
          .add(outcome)
          .catch((error) =>
            this.logger.error({
              msg: 'webhook attempt not recorded (retried after its lease)',
              delivery: delivery.id,
              error: (error as Error).message,
            }),
          )
          .finally(() => this.writes.delete(write));
        this.writes.add(write);
      })
      .catch((error) =>
        this.logger.error({
          msg: 'webhook attempt failed unexpectedly (retried after its lease)',
          delivery: delivery.id,
          error: (error as Error).message,
        }),
      )
      .finally(() => {
        const n = (this.inFlight.get(delivery.endpoint_id) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(delivery.endpoint_id);
        else this.inFlight.set(delivery.endpoint_id, n);
        this.attempts.delete(run);
        this.wake();
      });
    this.attempts.add(run);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const payload = JSON.stringify(envelopeOf({ ...delivery, id: delivery.event_id }));
    const attemptedAt = new Date();
    const started = performance.now();
    let statusCode: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    try {
      // inside the try: a secret the configured keys cannot open is this attempt's failure, logged and counted against
      // the schedule, not an error that leaves the delivery to be claimed again after every lease, forever
      const secrets = [this.secretBox.decrypt(delivery.secret_sealed)];
      if (delivery.previous_valid && delivery.previous_secret_sealed)
        secrets.push(this.secretBox.decrypt(delivery.previous_secret_sealed));
      const res = await safeHttpRequest({
        method: 'POST',
        url: delivery.url,
        body: payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Switchboard-Webhooks/1',
          ...signedHeaders(secrets, delivery.event_id, attemptedAt, payload),
        },
        timeoutMs: this.config.WEBHOOK_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        allowPrivate: this.config.ALLOW_PRIVATE_NETWORK_TARGETS,
      });
      statusCode = res.status;
      // NUL is the one character a PostgreSQL text cannot hold (a binary or gzip answer has some): shown as U+FFFD
      excerpt =
        res.body
          .subarray(0, RESPONSE_EXCERPT_CHARS * 4)
          .toString('utf8')
          .slice(0, RESPONSE_EXCERPT_CHARS)
          .replaceAll('\u0000', '\uFFFD') || null;
      if (statusCode >= 300 && statusCode < 400)
        error = `redirect to ${res.headers.location ?? '(no location)'} not followed`;
    } catch (e) {
      const err = e as OutboundHttpError;
      error =
        err instanceof OutboundHttpError
          ? err.code === 'blocked_target'
            ? privateTargetMessage(err.message)
            : err.message
          : `not sent: ${(e as Error).message}`;
    }
    const latencyMs = Math.round(performance.now() - started);
    return { delivery, attemptedAt, statusCode, latencyMs, excerpt, error };
  }

  /**
   * Writes a batch of attempt outcomes in one statement: the attempt log, each delivery's new state, and `failing_since`
   * cleared on endpoints that succeeded. An outcome moves its delivery only while its lease is the current one (the
   * claim counted `attempts`): a slow attempt answered after a manual retry was claimed, or after its lease ran out,
   * is logged but no longer decides (it overwrote `delivered` with `pending`, and sent once more). A delivery deleted
   * meanwhile (its endpoint or account deleted) is skipped in the log too, so one such delivery cannot fail the whole
   * batch and have the others delivered again. Endpoints with failures are then updated in their own transaction.
   */
  private async recordOutcomes(items: AttemptOutcome[]): Promise<void> {
    const now = Date.now();
    const states = items.map((o) => {
      const ok = o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;
      if (ok) return { status: 'delivered', next: null as Date | null };
      const delay = o.statusCode === 410 ? null : nextAttemptDelay(this.schedule, o.delivery.attempts);
      return delay === null ? { status: 'failed', next: null } : { status: 'pending', next: new Date(now + delay) };
    });
    const succeeded = [
      ...new Set(items.filter((_, i) => states[i].status === 'delivered').map((o) => o.delivery.endpoint_id)),
    ];
    await this.db.query(
      `WITH x AS (SELECT *, status <> 'delivered' AS missed FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::text[], $7::int[], $8::text[], $10::int[], $11::text[])
                    AS x(id, status, next, at, code, error, latency, excerpt, attempts, url)),
       moved AS (UPDATE webhook_deliveries d SET
                        status = CASE WHEN x.missed AND w.url <> x.url THEN 'pending' ELSE x.status END,
                        next_attempt_at = CASE WHEN x.missed AND w.url <> x.url THEN now() ELSE COALESCE(x.next, d.next_attempt_at) END,
                        last_attempt_at = x.at, last_status_code = x.code, last_error = x.error,
                        delivered_at = CASE WHEN x.status = 'delivered' THEN x.at ELSE d.delivered_at END
                   FROM x, webhook_endpoints w
                  WHERE d.id = x.id AND d.attempts = x.attempts AND w.id = d.endpoint_id RETURNING d.id),
       logged AS (INSERT INTO webhook_delivery_attempts (delivery_id, attempted_at, status_code, latency_ms, response_excerpt, error)
                  SELECT x.id, at, code, latency, excerpt, error FROM x JOIN webhook_deliveries d ON d.id = x.id)
       UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($9::text[]) AND failing_since IS NOT NULL`,
      [
        items.map((o) => o.delivery.id),
        states.map((s) => s.status),
        states.map((s) => s.next),
        items.map((o) => o.attemptedAt),
        items.map((o) => o.statusCode),
        items.map((o) => o.error),
        items.map((o) => o.latencyMs),
        items.map((o) => o.excerpt),
        succeeded,
        items.map((o) => o.delivery.attempts),
        items.map((o) => o.delivery.url),
      ],
    );
    const failing = items.filter((_, i) => states[i].status !== 'delivered');
    if (failing.length) await this.db.transaction((tx) => this.updateFailingEndpoints(tx, failing, new Set(succeeded)));
  }

  /** A 410 disables its endpoint at once; other failures disable it once failing for WEBHOOK_DISABLE_AFTER_MS (unless it also succeeded in this batch). */
  private async updateFailingEndpoints(
    tx: EntityManager,
    failures: AttemptOutcome[],
    succeeded: Set<string>,
  ): Promise<void> {
    // by endpoint, the URLs that failed (and those that answered 410): an endpoint whose URL was changed since is not
    // judged by its old receiver's answers
    const byEndpoint = new Map<string, { accountId: string; failed: Set<string>; gone: Set<string> }>();
    for (const o of failures) {
      const e = byEndpoint.get(o.delivery.endpoint_id) ?? {
        accountId: o.delivery.account_id,
        failed: new Set<string>(),
        gone: new Set<string>(),
      };
      e.failed.add(o.delivery.url);
      if (o.statusCode === 410) e.gone.add(o.delivery.url);
      byEndpoint.set(o.delivery.endpoint_id, e);
    }
    // in id order: two workers' batches failing on the same endpoints lock them in one order (no deadlock)
    for (const [endpointId, e] of [...byEndpoint].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      let disabled: Array<{ url: string; disabled_reason: string; disabled_at: Date; enabled?: boolean }> = [];
      if (e.gone.size) {
        [disabled] = await tx.query(
          `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone', disabled_at = now(), updated_at = now()
            WHERE id = $1 AND enabled AND url = ANY($2::text[]) RETURNING url, disabled_reason, disabled_at`,
          [endpointId, [...e.gone]],
        );
      } else if (!succeeded.has(endpointId)) {
        [disabled] = await tx.query(
          `UPDATE webhook_endpoints w SET failing_since = COALESCE(w.failing_since, now()), enabled = NOT x.expired,
                  disabled_reason = CASE WHEN x.expired THEN 'failing' ELSE w.disabled_reason END,
                  disabled_at = CASE WHEN x.expired THEN now() ELSE w.disabled_at END
             FROM (SELECT COALESCE(failing_since <= now() - make_interval(secs => $2::bigint / 1000.0), false) AS expired FROM webhook_endpoints WHERE id = $1) x
            WHERE w.id = $1 AND w.enabled AND w.url = ANY($3::text[]) AND (w.failing_since IS NULL OR x.expired)
            RETURNING w.url, w.disabled_reason, w.disabled_at, w.enabled`,
          [endpointId, this.config.WEBHOOK_DISABLE_AFTER_MS, [...e.failed]],
        );
        disabled = disabled.filter((r) => r.enabled === false);
      }
      for (const row of disabled) {
        this.logger.warn({ msg: 'webhook endpoint disabled', endpointId, reason: row.disabled_reason });
        await recordWebhookEvent(tx, {
          accountId: e.accountId,
          type: 'webhook_endpoint.disabled',
          data: {
            endpointId,
            url: row.url,
            reason: row.disabled_reason,
            disabledAt: new Date(row.disabled_at).toISOString(),
          },
        });
      }
    }
  }
}
