import type { DataSource, EntityManager } from 'typeorm';

/**
 * The account's event outbox (`account_events`, owned by libs/accounts): a change that an account's own webhooks will
 * report is recorded here by the module that made it, in the same transaction as the change (pass its EntityManager).
 */
export async function recordAccountEvent(
  db: DataSource | EntityManager,
  accountId: string,
  type: string,
  payload: Record<string, unknown>,
): Promise<void> {
  await db.query(`INSERT INTO account_events (account_id, type, payload) VALUES ($1, $2, $3)`, [
    accountId,
    type,
    JSON.stringify(payload),
  ]);
}
