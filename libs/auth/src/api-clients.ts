import type { DataSource, EntityManager } from 'typeorm';
import { generateClientCredentials } from './credentials';
import { GRANTS } from './grants';

/**
 * The operator's queries on `api_clients` (owned by libs/auth): used outside Nest by the operator CLI, the dev seed and
 * account provisioning, over the caller's DataSource or transaction.
 */
type Db = DataSource | EntityManager;

/** Adds a Client ID / Client Secret to an account; a new client has every grant. The secret is returned only here. */
export async function createClient(db: Db, accountId: string, grants: readonly string[] = GRANTS) {
  const { clientId, clientSecret, secretHash } = generateClientCredentials();
  await db.query(`INSERT INTO api_clients (account_id, client_id, secret_hash, grants) VALUES ($1, $2, $3, $4)`, [
    accountId,
    clientId,
    secretHash,
    grants,
  ]);
  return { clientId, clientSecret };
}

/** Replaces a client's grants; false when there is no such client. */
export async function setClientGrants(db: Db, clientId: string, grants: readonly string[]): Promise<boolean> {
  const [rows] = await db.query('UPDATE api_clients SET grants = $2 WHERE client_id = $1 RETURNING client_id', [
    clientId,
    grants,
  ]);
  return rows.length > 0;
}

export async function clientExists(db: Db, clientId: string): Promise<boolean> {
  const [row] = await db.query('SELECT 1 FROM api_clients WHERE client_id = $1', [clientId]);
  return Boolean(row);
}

/** Client ids of each account (in creation order), by account id. */
export async function clientIdsByAccount(db: Db): Promise<Map<string, string[]>> {
  const rows: Array<{ account_id: string; ids: string[] }> = await db.query(
    `SELECT account_id::text, array_agg(client_id ORDER BY id) AS ids FROM api_clients GROUP BY account_id`,
  );
  return new Map(rows.map((r) => [r.account_id, r.ids]));
}
