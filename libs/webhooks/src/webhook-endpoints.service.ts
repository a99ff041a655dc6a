import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  AppConfig,
  assertPublicTarget,
  isIsoDateTime,
  isoOrNull,
  pageMeta,
  pageOffset,
  SecretBox,
  validationException,
} from '@switchboard/core';
import { DataSource } from 'typeorm';
import { TEST_EVENT_TYPE, WebhookEnvelope } from './event-types';
import { newSigningSecret } from './signing';
import type {
  CreateWebhookEndpointDto,
  ListDeliveriesQuery,
  ListEventsQuery,
  ReplayDto,
  UpdateWebhookEndpointDto,
} from './webhooks.dto';

const ENDPOINT_NOT_FOUND = 'Webhook endpoint not found';
const ENDPOINT_COLUMNS = `id, url, events, description, enabled, disabled_reason, disabled_at, failing_since, created_at, updated_at, previous_secret_expires_at`;

/** What the API shows of an endpoint (never its secret, except once at creation and rotation). */
export interface WebhookEndpointView {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

function view(row: any): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: isoOrNull(row.disabled_at),
    failing_since: isoOrNull(row.failing_since),
    previous_secret_expires_at:
      row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > new Date()
        ? isoOrNull(row.previous_secret_expires_at)
        : null,
    created_at: isoOrNull(row.created_at)!,
    updated_at: isoOrNull(row.updated_at)!,
  };
}

/** The envelope of a stored event row (the body every delivery of it carries). */
export function envelopeOf(row: {
  id: string;
  type: string;
  created_at: Date | string;
  account_id: string | number;
  data: Record<string, unknown>;
}): WebhookEnvelope {
  return {
    id: row.id,
    type: row.type,
    createdAt: new Date(row.created_at).toISOString(),
    accountId: String(row.account_id),
    data: row.data,
  };
}

/**
 * Account webhook endpoints (grant /account): CRUD, secret rotation, test events, the delivery log, manual retry,
 * replay and the event list. Every query is scoped by the caller's account; another account's ids are 404.
 */
@Injectable()
export class WebhookEndpointsService {
  private readonly secretBox: SecretBox;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {
    this.secretBox = SecretBox.fromConfig(config);
  }

  async create(accountId: string, body: CreateWebhookEndpointDto): Promise<WebhookEndpointView & { secret: string }> {
    const url = await this.checkUrl(body.url);
    const secret = newSigningSecret();
    const [row] = await this.db.query(
      `INSERT INTO webhook_endpoints (account_id, url, events, description, enabled, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ENDPOINT_COLUMNS}`,
      [accountId, url, body.events, body.description ?? '', body.enabled ?? true, this.secretBox.encrypt(secret)],
    );
    return { ...view(row), secret };
  }

  async list(accountId: string): Promise<WebhookEndpointView[]> {
    const rows = await this.db.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(view);
  }

  async get(accountId: string, id: string): Promise<WebhookEndpointView> {
    return view(await this.row(accountId, id));
  }

  async update(accountId: string, id: string, body: UpdateWebhookEndpointDto): Promise<WebhookEndpointView> {
    await this.row(accountId, id);
    const url = body.url !== undefined ? await this.checkUrl(body.url) : null;
    const [[row]] = await this.db.query(
      `UPDATE webhook_endpoints SET
         url = COALESCE($3, url), events = COALESCE($4, events), description = COALESCE($5, description),
         enabled = COALESCE($6, enabled),
         disabled_reason = CASE WHEN $6::boolean IS NULL THEN disabled_reason WHEN $6 THEN NULL
                                WHEN enabled THEN 'manual' ELSE disabled_reason END, -- why it was disabled stays
         disabled_at = CASE WHEN $6::boolean IS NULL THEN disabled_at WHEN $6 THEN NULL ELSE COALESCE(disabled_at, now()) END,
         failing_since = CASE WHEN $6::boolean IS TRUE OR $3::text <> url THEN NULL ELSE failing_since END,
         updated_at = now()
       WHERE id = $1 AND account_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [id, accountId, url, body.events ?? null, body.description ?? null, body.enabled ?? null],
    );
    if (!row) throw new NotFoundException({ statusCode: 404, message: ENDPOINT_NOT_FOUND });
    return view(row);
  }

  async remove(accountId: string, id: string): Promise<void> {
    const [, count] = await this.db.query(`DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, [
      id,
      accountId,
    ]);
    if (!count) throw new NotFoundException({ statusCode: 404, message: ENDPOINT_NOT_FOUND });
  }

  /** A new secret; the current one keeps signing (beside the new one) for WEBHOOK_SECRET_OVERLAP_MS. */
  async rotateSecret(accountId: string, id: string): Promise<{ secret: string; previous_secret_expires_at: string }> {
    const secret = newSigningSecret();
    const [[row]] = await this.db.query(
      `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, secret_sealed = $3,
              previous_secret_expires_at = now() + make_interval(secs => $4::bigint / 1000.0), updated_at = now()
        WHERE id = $1 AND account_id = $2 RETURNING previous_secret_expires_at`,
      [id, accountId, this.secretBox.encrypt(secret), this.config.WEBHOOK_SECRET_OVERLAP_MS],
    );
    if (!row) throw new NotFoundException({ statusCode: 404, message: ENDPOINT_NOT_FOUND });
    return { secret, previous_secret_expires_at: isoOrNull(row.previous_secret_expires_at)! };
  }

  /** Records a `webhook.test` event and one delivery of it to this endpoint only (also when disabled: it waits). */
  async sendTest(accountId: string, id: string): Promise<{ event_id: string; delivery_id: string }> {
    const endpoint = await this.row(accountId, id);
    return this.db.transaction(async (tx) => {
      const [event] = await tx.query(
        `INSERT INTO webhook_events (account_id, type, data, dispatched_at) VALUES ($1, $2, $3, now()) RETURNING id`,
        [
          accountId,
          TEST_EVENT_TYPE,
          JSON.stringify({ endpointId: endpoint.id, message: 'This is a test event from Switchboard.' }),
        ],
      );
      const [delivery] = await tx.query(
        `INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, trigger) VALUES ($1, $2, $3, 'test') RETURNING id`,
        [accountId, endpoint.id, event.id],
      );
      return { event_id: event.id, delivery_id: delivery.id };
    });
  }

  async listDeliveries(accountId: string, endpointId: string, query: ListDeliveriesQuery) {
    await this.row(accountId, endpointId);
    const params: unknown[] = [endpointId, accountId];
    let filter = '';
    if (query.status) {
      params.push(query.status);
      filter = ` AND d.status = $${params.length}`;
    }
    const [{ total }] = await this.db.query(
      `SELECT count(*)::int AS total FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.account_id = $2${filter}`,
      params,
    );
    const rows = await this.db.query(
      `SELECT d.*, e.type AS event_type FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE d.endpoint_id = $1 AND d.account_id = $2${filter}
        ORDER BY d.created_at DESC, d.id DESC OFFSET ${pageOffset(query)} LIMIT ${query.pageSize}`,
      params,
    );
    const attempts: any[] = rows.length
      ? await this.db.query(`SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ANY($1) ORDER BY id`, [
          rows.map((r: any) => r.id),
        ])
      : [];
    return {
      deliveries: rows.map((d: any) =>
        this.deliveryView(
          d,
          attempts.filter((a) => a.delivery_id === d.id),
        ),
      ),
      ...pageMeta(query, total),
    };
  }

  /** Makes a delivery due now (another attempt, whatever its state); the attempt log keeps growing. */
  async retryDelivery(accountId: string, deliveryId: string) {
    const [[row]] = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), delivered_at = NULL
        WHERE id = $1 AND account_id = $2 RETURNING id, status, next_attempt_at`,
      [deliveryId, accountId],
    );
    if (!row) throw new NotFoundException({ statusCode: 404, message: 'Webhook delivery not found' });
    return { id: row.id, status: row.status, next_attempt_at: isoOrNull(row.next_attempt_at) };
  }

  /** New deliveries to this endpoint of the account's events in [since, until), with their original ids. */
  async replay(accountId: string, endpointId: string, body: ReplayDto): Promise<{ replayed: number }> {
    const endpoint = await this.row(accountId, endpointId);
    const since = new Date(body.since);
    const until = body.until ? new Date(body.until) : new Date();
    if (until <= since) throw validationException([{ field: 'until', message: 'until must be later than since' }]);
    const inserted: unknown[] = await this.db.query(
      `INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, trigger)
       SELECT e.account_id, $2, e.id, 'replay' FROM webhook_events e
        WHERE e.account_id = $1 AND e.created_at >= $3 AND e.created_at < $4 AND e.type <> $7
          AND ($5::text[] @> ARRAY['*'] OR e.type = ANY($5)) AND ($6::text[] IS NULL OR e.type = ANY($6))
        ORDER BY e.created_at, e.id
       RETURNING id`,
      [accountId, endpoint.id, since, until, endpoint.events, body.types ?? null, TEST_EVENT_TYPE],
    );
    return { replayed: inserted.length };
  }

  /** The account's events from `since`, oldest first, `limit` per page; `next_cursor` continues. */
  async listEvents(accountId: string, query: ListEventsQuery) {
    let after: { at: string; id: string } | null = null;
    if (query.cursor) {
      const [at, id] = Buffer.from(query.cursor, 'base64url').toString('utf8').split('|');
      // exactly the time a page wrote (Date.parse takes "1", which PostgreSQL refuses: a 400 naming no field)
      if (!at || !id || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(at) || !isIsoDateTime(at))
        throw validationException([{ field: 'cursor', message: 'cursor must be a next_cursor from a previous page' }]);
      after = { at, id };
    }
    const rows = await this.db.query(
      `SELECT id, type, created_at, account_id, data, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
         FROM webhook_events
        WHERE account_id = $1 AND created_at >= $2 AND ($3::timestamptz IS NULL OR created_at < $3) AND type <> $7
          AND ($4::text[] IS NULL OR type = ANY($4))
          AND ($5::timestamptz IS NULL OR (created_at, id) > ($5::timestamptz, $6::text))
        ORDER BY created_at, id LIMIT ${query.limit + 1}`,
      [
        accountId,
        new Date(query.since),
        query.until ? new Date(query.until) : null,
        query.types ?? null,
        after?.at ?? null,
        after?.id ?? null,
        TEST_EVENT_TYPE,
      ],
    );
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      events: page.map(envelopeOf),
      next_cursor: rows.length > query.limit ? Buffer.from(`${last.cursor_at}|${last.id}`).toString('base64url') : null,
    };
  }

  // ------------------------------------------------------------------ plumbing

  private deliveryView(d: any, attempts: any[]) {
    return {
      id: d.id,
      event_id: d.event_id,
      event_type: d.event_type,
      trigger: d.trigger,
      status: d.status,
      attempts: d.attempts,
      last_status_code: d.last_status_code,
      last_error: d.last_error,
      next_attempt_at: d.status === 'pending' ? isoOrNull(d.next_attempt_at) : null,
      created_at: isoOrNull(d.created_at),
      delivered_at: isoOrNull(d.delivered_at),
      attempt_log: attempts.map((a) => ({
        attempted_at: isoOrNull(a.attempted_at),
        status_code: a.status_code,
        latency_ms: a.latency_ms,
        response_excerpt: a.response_excerpt,
        error: a.error,
      })),
    };
  }

  private async row(accountId: string, id: string): Promise<any> {
    const [row] = await this.db.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND account_id = $2`,
      [id, accountId],
    );
    if (!row) throw new NotFoundException({ statusCode: 404, message: ENDPOINT_NOT_FOUND });
    return row;
  }

  /** The SSRF guard at save time (scheme, credentials, and every address the host resolves to now). */
  private async checkUrl(raw: string): Promise<string> {
    try {
      return (await assertPublicTarget(raw, { allowPrivate: this.config.ALLOW_PRIVATE_NETWORK_TARGETS })).toString();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const message =
        code === 'blocked_target'
          ? `url is not allowed: ${privateTargetMessage((error as Error).message)}`
          : `url is not allowed: its host does not resolve (${code ?? (error as Error).message})`;
      throw validationException([{ field: 'url', message }]);
    }
  }
}

/** The SSRF guard's refusal, with the setting that lifts it for development (only for address refusals). */
export function privateTargetMessage(reason: string): string {
  return /address\)$/.test(reason)
    ? `${reason}; private network targets are refused unless ALLOW_PRIVATE_NETWORK_TARGETS=true (development and tests only)`
    : reason;
}
