import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface DevSecrets {
  JWT_SECRET: string;
  ENCRYPTION_KEY: string;
}

export const DEV_SECRETS_FILE = join(process.cwd(), '.secrets', 'dev.json');

/** Development only: secrets generated on first use and kept in a git-ignored file, so tokens survive restarts. */
export function loadOrCreateDevSecrets(file = DEV_SECRETS_FILE): DevSecrets {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DevSecrets;
  const secrets: DevSecrets = {
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}
