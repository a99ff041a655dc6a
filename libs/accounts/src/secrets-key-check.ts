import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AppConfig, SecretBox, WrongSecretsKeyError } from '@switchboard/core';
import type { DataSource, EntityManager } from 'typeorm';

const CHECK_TEXT = 'switchboard secrets key check';

/** The process's ENCRYPTION_KEY does not open the secrets stored in the database. */
export class SecretsKeyMismatchError extends Error {
  constructor(
    readonly dataKey: string,
    readonly processKey: string,
  ) {
    super(
      `ENCRYPTION_KEY does not match the key this database's secrets were encrypted with ` +
        `(data: key ${dataKey}, this process: key ${processKey}; fingerprints, not the keys). ` +
        `Start every process of a deployment with the same ENCRYPTION_KEY (or ENCRYPTION_KEY_FILE). ` +
        `To change the key on purpose, set ENCRYPTION_KEY_PREVIOUS to the old key and run \`npm run admin -- rotate-secrets\` ` +
        `(docs/production.md, "Secrets").`,
    );
    this.name = 'SecretsKeyMismatchError';
  }
}

/**
 * Fails unless the configured keys open the stored secrets: the `secrets_key_check` row, sealed with the deployment's
 * key by the first process that ran. A database without the row (first start after the migration) is checked against
 * its stored access tokens before the row is written with the current key.
 * Returns whether the current key (rather than ENCRYPTION_KEY_PREVIOUS) sealed the row.
 */
export async function checkSecretsKey(db: DataSource | EntityManager, box: SecretBox): Promise<{ current: boolean }> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const [row] = await db.query(`SELECT sealed, key_fingerprint FROM secrets_key_check WHERE id = 1`);
    if (row) {
      try {
        return { current: box.open(row.sealed).withCurrentKey };
      } catch (error) {
        if (error instanceof WrongSecretsKeyError)
          throw new SecretsKeyMismatchError(row.key_fingerprint, box.keyFingerprint);
        throw error;
      }
    }
    const samples: Array<{ sealed: string }> = await db.query(
      `SELECT access_token_encrypted AS sealed FROM phone_numbers ORDER BY id DESC LIMIT 20`,
    );
    if (samples.length && !samples.some(({ sealed }) => opens(box, sealed)))
      throw new SecretsKeyMismatchError('unknown (no key check yet)', box.keyFingerprint);
    await db.query(
      `INSERT INTO secrets_key_check (id, sealed, key_fingerprint) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING`,
      [box.encrypt(CHECK_TEXT), box.keyFingerprint],
    );
  }
  return { current: true };
}

/** After a rotation: the check row sealed with the current key. */
export async function resealSecretsKeyCheck(db: DataSource | EntityManager, box: SecretBox): Promise<void> {
  await db.query(
    `INSERT INTO secrets_key_check (id, sealed, key_fingerprint, updated_at) VALUES (1, $1, $2, now())
     ON CONFLICT (id) DO UPDATE SET sealed = EXCLUDED.sealed, key_fingerprint = EXCLUDED.key_fingerprint, updated_at = now()`,
    [box.encrypt(CHECK_TEXT), box.keyFingerprint],
  );
}

/**
 * `rotate-secrets`, the access-token part: every phone number's token sealed with ENCRYPTION_KEY_PREVIOUS is sealed
 * again with ENCRYPTION_KEY. Tokens no configured key opens are listed (they must be connected again).
 */
export async function resealAccessTokens(
  db: DataSource | EntityManager,
  box: SecretBox,
): Promise<{ checked: number; resealed: number; unreadable: string[] }> {
  const rows: Array<{ id: string; messaging_phone_id: string; sealed: string }> = await db.query(
    `SELECT id::text, messaging_phone_id, access_token_encrypted AS sealed FROM phone_numbers ORDER BY id`,
  );
  let resealed = 0;
  const unreadable: string[] = [];
  for (const row of rows) {
    let next: string | null;
    try {
      next = box.reseal(row.sealed);
    } catch {
      unreadable.push(row.messaging_phone_id);
      continue;
    }
    if (next === null) continue;
    // only if still as read: a token a connect stored meanwhile is sealed with the new key and must stay
    const [, changed] = await db.query(
      `UPDATE phone_numbers SET access_token_encrypted = $2 WHERE id = $1 AND access_token_encrypted = $3`,
      [row.id, next, row.sealed],
    );
    if (changed) resealed++;
  }
  return { checked: rows.length, resealed, unreadable };
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.decrypt(sealed);
    return true;
  } catch {
    return false;
  }
}

/** At start of every process that has the accounts module (API, worker): refuse to run with the wrong key. */
@Injectable()
export class SecretsKeyCheck implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await checkSecretsKey(this.db, SecretBox.fromConfig(this.config));
  }
}
