import { createClient } from '@switchboard/auth';
import { SecretBox } from '@switchboard/core';
import { randomBytes, randomInt } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';

export interface ProvisionAccountInput {
  name: string;
  /** Cloud API origin for the connected number; the local sandbox in development. */
  apiBaseUrl: string;
  apiVersion: string;
  /** Platform identifiers and token; generated (sandbox-style) when absent. */
  messagingPhoneId?: string;
  businessAccountId?: string;
  accessToken?: string;
  displayPhoneNumber?: string;
  messagesPerSecond?: number;
}

export interface ProvisionedAccount {
  accountId: string;
  clientId: string;
  clientSecret: string;
  messagingPhoneIds: string[];
}

const platformId = () => `${randomInt(1, 10)}${Array.from({ length: 14 }, () => randomInt(0, 10)).join('')}`;

/**
 * Creates an account with one client holding every grant and one connected phone number, in one transaction.
 * Used by the operator CLI, the dev seed and the tests. The client secret is returned here and never again.
 */
export async function provisionAccount(
  dataSource: DataSource,
  secretBox: SecretBox,
  input: ProvisionAccountInput,
): Promise<ProvisionedAccount> {
  return dataSource.transaction(async (tx) => {
    const [{ id: accountId }] = await tx.query(`INSERT INTO accounts (name) VALUES ($1) RETURNING id`, [input.name]);
    const { clientId, clientSecret } = await createClient(tx, String(accountId));
    const messagingPhoneId = input.messagingPhoneId ?? platformId();
    await tx.query(
      `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                  api_base_url, api_version, access_token_encrypted, messages_per_second)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        accountId,
        messagingPhoneId,
        input.displayPhoneNumber ?? `+1 555 ${randomInt(100, 999)} ${randomInt(1000, 9999)}`,
        input.name,
        input.businessAccountId ?? platformId(),
        input.apiBaseUrl,
        input.apiVersion,
        secretBox.encrypt(input.accessToken ?? `sandbox-${randomBytes(16).toString('hex')}`),
        input.messagesPerSecond ?? 80,
      ],
    );
    return { accountId: String(accountId), clientId, clientSecret, messagingPhoneIds: [messagingPhoneId] };
  });
}

/** Whether an account exists (operator CLI). */
export async function accountExists(db: DataSource | EntityManager, accountId: string): Promise<boolean> {
  const [row] = await db.query('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
  return Boolean(row);
}

/** Every account with its connected numbers' messagingPhoneIds (operator CLI `list-accounts`). */
export async function listAccounts(
  db: DataSource | EntityManager,
): Promise<Array<{ accountId: string; name: string; createdAt: Date; messagingPhoneIds: string[] }>> {
  return db.query(`
    SELECT a.id::text AS "accountId", a.name, a.created_at AS "createdAt",
           COALESCE((SELECT array_agg(p.messaging_phone_id ORDER BY p.id) FROM phone_numbers p WHERE p.account_id = a.id), '{}') AS "messagingPhoneIds"
    FROM accounts a ORDER BY a.id`);
}
