import type { SecretBox } from '@switchboard/core';
import type { DataSource, EntityManager } from 'typeorm';

/** A number the platform confirmed (GET /{phone-number-id}), to connect to an account. */
export interface ConnectPhoneNumberInput {
  accountId: string;
  messagingPhoneId: string;
  businessAccountId: string;
  apiBaseUrl: string;
  apiVersion: string;
  accessToken: string;
  displayPhoneNumber: string;
  verifiedName: string;
  messagesPerSecond: number;
}

export class PhoneNumberTakenError extends Error {}

/**
 * Connects a real number to an account (operator CLI `connect-number`): the access token is stored sealed. Connecting
 * the same number again replaces its token, WABA, base URL and details; a number of another account is refused.
 */
export async function connectPhoneNumber(
  db: DataSource,
  box: SecretBox,
  input: ConnectPhoneNumberInput,
): Promise<{ phoneNumberId: string; messagingPhoneId: string; replaced: boolean }> {
  return db.transaction(async (tx) => {
    const [existing] = await tx.query(
      `SELECT id::text, account_id::text AS "accountId" FROM phone_numbers WHERE messaging_phone_id = $1 FOR UPDATE`,
      [input.messagingPhoneId],
    );
    if (existing && existing.accountId !== input.accountId)
      throw new PhoneNumberTakenError(
        `Phone number ${input.messagingPhoneId} is connected to account ${existing.accountId}: disconnect it there first`,
      );
    const values = [
      input.accountId,
      input.messagingPhoneId,
      input.displayPhoneNumber,
      input.verifiedName,
      input.businessAccountId,
      input.apiBaseUrl,
      input.apiVersion,
      box.encrypt(input.accessToken),
      input.messagesPerSecond,
    ];
    const [row] = await tx.query(
      `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                  api_base_url, api_version, access_token_encrypted, messages_per_second)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (messaging_phone_id) DO UPDATE SET
         display_phone_number = EXCLUDED.display_phone_number, verified_name = EXCLUDED.verified_name,
         business_account_id = EXCLUDED.business_account_id, api_base_url = EXCLUDED.api_base_url,
         api_version = EXCLUDED.api_version, access_token_encrypted = EXCLUDED.access_token_encrypted,
         messages_per_second = EXCLUDED.messages_per_second, status = 'CONNECTED'
       RETURNING id::text`,
      values,
    );
    return { phoneNumberId: row.id, messagingPhoneId: input.messagingPhoneId, replaced: Boolean(existing) };
  });
}

/**
 * Disconnects a number from an account (operator CLI `disconnect-number`): its access token is erased and it is marked
 * DISCONNECTED, so nothing is sent through it any more (sends naming it are refused as for an unknown number); its
 * messages, templates and campaigns keep their history. `connect-number` connects it again. False when the account has
 * no such connected number.
 */
export async function disconnectPhoneNumber(
  db: DataSource | EntityManager,
  box: SecretBox,
  accountId: string,
  messagingPhoneId: string,
): Promise<boolean> {
  const [, count] = await db.query(
    `UPDATE phone_numbers SET status = 'DISCONNECTED', access_token_encrypted = $3
      WHERE account_id = $1 AND messaging_phone_id = $2 AND status = 'CONNECTED'`,
    [accountId, messagingPhoneId, box.encrypt('')],
  );
  return count > 0;
}

/** Development: the demo numbers follow the stack's own sandbox (`npm run dev` with other ports). */
export async function pointPhoneNumbersAt(
  db: DataSource | EntityManager,
  accountId: string,
  apiBaseUrl: string,
): Promise<number> {
  const [, count] = await db.query(
    `UPDATE phone_numbers SET api_base_url = $2 WHERE account_id = $1 AND api_base_url <> $2`,
    [accountId, apiBaseUrl],
  );
  return count;
}
