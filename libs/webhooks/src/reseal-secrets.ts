import type { SecretBox } from '@switchboard/core';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * `rotate-secrets`, the webhook part: every endpoint's signing secret (and the previous one still in its overlap) sealed
 * with ENCRYPTION_KEY_PREVIOUS is sealed again with ENCRYPTION_KEY. Endpoints no configured key opens are listed.
 */
export async function resealEndpointSecrets(
  db: DataSource | EntityManager,
  box: SecretBox,
): Promise<{ checked: number; resealed: number; unreadable: string[] }> {
  const rows: Array<{ id: string; secret: string; previous: string | null }> = await db.query(
    `SELECT id::text, secret_sealed AS secret, previous_secret_sealed AS previous FROM webhook_endpoints ORDER BY id`,
  );
  let resealed = 0;
  const unreadable: string[] = [];
  for (const row of rows) {
    try {
      const secret = box.reseal(row.secret);
      const previous = row.previous ? box.reseal(row.previous) : null;
      if (secret === null && previous === null) continue;
      // only if still as read: a secret rotated meanwhile is sealed with the new key already, and writing the old one
      // back would sign every delivery with a secret the customer no longer holds
      const [, changed] = await db.query(
        `UPDATE webhook_endpoints SET secret_sealed = COALESCE($2, secret_sealed),
                previous_secret_sealed = COALESCE($3, previous_secret_sealed)
          WHERE id = $1 AND secret_sealed = $4 AND previous_secret_sealed IS NOT DISTINCT FROM $5`,
        [row.id, secret, previous, row.secret, row.previous],
      );
      if (changed) resealed++;
    } catch {
      unreadable.push(row.id);
    }
  }
  return { checked: rows.length, resealed, unreadable };
}
