import { namedQuery } from '@switchboard/core/database';
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { generateClientCredentials } from './credentials';

type Db = DataSource | EntityManager;

export interface ClientSummary {
  clientId: string;
  accountId: string;
  grants: string[];
  createdAt: Date;
}

/** What the guard checks on every request: the client still exists, its grants, and which secret its tokens belong to. */
export interface ClientState {
  accountId: string;
  grants: string[];
  secretVersion: string;
}

/**
 * A short fingerprint of the current secret (not the secret, not its stored hash): access tokens carry it as `sv`, so
 * rotating the secret makes every token issued before the rotation fail at once.
 */
export function secretVersion(secretHash: string): string {
  return createHash('sha256').update(`secret-version:${secretHash}`).digest('base64url').slice(0, 16);
}

/** The clients of one account, oldest first; never their secrets. */
export async function listClients(db: Db, accountId: string): Promise<ClientSummary[]> {
  return db.query(
    `SELECT client_id AS "clientId", account_id::text AS "accountId", grants, created_at AS "createdAt"
     FROM api_clients WHERE account_id = $1 ORDER BY id`,
    [accountId],
  );
}

/**
 * Replaces the client's secret; the old one is refused from this moment, and so is every token issued with it (access
 * tokens through their `sv` claim, the refresh token because its id is cleared). The new secret is returned here only.
 * `accountId` scopes the change (null: the operator CLI, any account). Undefined when no such client.
 */
export async function rotateClientSecret(
  db: Db,
  clientId: string,
  accountId: string | null,
): Promise<{ clientId: string; clientSecret: string } | undefined> {
  const { clientSecret, secretHash } = generateClientCredentials();
  const [rows] = await db.query(
    `UPDATE api_clients SET secret_hash = $2, refresh_token_id = NULL
     WHERE client_id = $1 AND ($3::bigint IS NULL OR account_id = $3::bigint) RETURNING client_id`,
    [clientId, secretHash, accountId],
  );
  return rows.length ? { clientId, clientSecret } : undefined;
}

/** Deletes the client: its secret, access tokens and refresh token are refused from this moment. False when no such client. */
export async function deleteClient(db: Db, clientId: string, accountId: string | null): Promise<boolean> {
  const [rows] = await db.query(
    `DELETE FROM api_clients WHERE client_id = $1 AND ($2::bigint IS NULL OR account_id = $2::bigint) RETURNING client_id`,
    [clientId, accountId],
  );
  return rows.length > 0;
}

export async function readClientState(db: Db, clientId: string): Promise<ClientState | undefined> {
  // every authenticated request reads this: a prepared statement
  const [row] = await namedQuery<{ accountId: string; grants: string[]; secretHash: string }>(
    db,
    'api_client_state',
    `SELECT account_id::text AS "accountId", grants, secret_hash AS "secretHash" FROM api_clients WHERE client_id = $1`,
    [clientId],
  );
  return row
    ? { accountId: row.accountId, grants: row.grants, secretVersion: secretVersion(row.secretHash) }
    : undefined;
}
