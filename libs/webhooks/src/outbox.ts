/**
 * The webhook outbox: the one way other modules record an account event. Call it with the transaction (or
 * EntityManager / QueryRunner) that makes the change the event describes, so the event exists exactly when the change
 * does; the delivery worker picks it up from there (a process dying in between loses nothing).
 *
 * Events are recorded only for accounts that have at least one webhook endpoint (enabled or not): the others have
 * nobody to tell, and a busy account without endpoints pays one indexed lookup per statement, nothing more.
 */
import type { WebhookEventType } from './event-types';

/** Anything with TypeORM's `query` (DataSource, EntityManager, QueryRunner). */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export interface NewWebhookEvent {
  accountId: string | number;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/** Records one event (see the file's comment). */
export async function recordWebhookEvent(q: Queryable, event: NewWebhookEvent): Promise<void> {
  await recordWebhookEvents(q, [event]);
}

/** Records several events in one statement, in order (`created_at` increases along the list). */
export async function recordWebhookEvents(q: Queryable, events: NewWebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  await q.query(
    webhookEventsInsertSql(
      'SELECT * FROM unnest($1::bigint[], $2::text[], $3::jsonb[]) WITH ORDINALITY AS u(account_id, type, data, n)',
    ),
    [events.map((e) => String(e.accountId)), events.map((e) => e.type), events.map((e) => JSON.stringify(e.data))],
  );
}

/**
 * The outbox's INSERT, for a change that is written as one statement (a data-modifying WITH clause of the caller's):
 * `source` is a query with the columns account_id (bigint), type (text), data (jsonb) and n (the order). Same rule as
 * recordWebhookEvents: events only for accounts with an endpoint.
 */
export function webhookEventsInsertSql(source: string): string {
  return `INSERT INTO webhook_events (account_id, type, data)
     SELECT e.account_id, e.type, e.data FROM (${source}) AS e
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.account_id = e.account_id)
      ORDER BY e.n`;
}
