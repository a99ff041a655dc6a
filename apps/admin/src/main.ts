import 'reflect-metadata';
import { HttpException } from '@nestjs/common';
import {
  accountExists,
  checkSecretsKey,
  connectPhoneNumber,
  disconnectPhoneNumber,
  listAccounts,
  PhoneNumberTakenError,
  provisionAccount,
  resealAccessTokens,
  resealSecretsKeyCheck,
  SecretsKeyMismatchError,
} from '@switchboard/accounts';
import {
  clientIdsByAccount,
  createClient,
  deleteClient,
  GRANTS,
  isGrant,
  listClients,
  rotateClientSecret,
  setClientGrants,
} from '@switchboard/auth';
import { loadConfigOrExit, SecretBox } from '@switchboard/core';
import { dataSourceOptions } from '@switchboard/core/database';
import { createUser, deleteUser, isRole, resetPassword, ROLES } from '@switchboard/users';
import { resealEndpointSecrets } from '@switchboard/webhooks';
import { CloudApiClient, CloudApiError } from '@switchboard/whatsapp';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';

const USAGE = `Switchboard operator CLI

  npm run admin -- create-account --name NAME [--json]
      creates an account, one client with every grant and one phone number connected to WHATSAPP_API_BASE_URL
  npm run admin -- create-client --account ACCOUNT_ID [--json]
  npm run admin -- set-grants CLIENT_ID GRANT[,GRANT...] [--json]
      grants: ${GRANTS.join(' ')}  (takes effect at once, on the client's next request)
  npm run admin -- list-accounts [--json]
  npm run admin -- list-clients --account ACCOUNT_ID [--json]
  npm run admin -- rotate-secret CLIENT_ID [--json]
      prints the new secret once; the old secret and every token issued with it are refused at once
  npm run admin -- delete-client CLIENT_ID [--json]
      its secret, access tokens and refresh token are refused at once
  npm run admin -- create-user --account ACCOUNT_ID --email EMAIL --role admin|marketer|agent [--password-stdin] [--json]
      a person who signs in to the console at /app/; prints a one-time password unless --password-stdin
  npm run admin -- reset-password --email EMAIL [--password-stdin] [--json]
      a new password (one-time, printed, unless --password-stdin); every console session of theirs ends at once
  npm run admin -- delete-user --email EMAIL [--json]
      removes the person; their console sessions end at once
  npm run admin -- connect-number --account ACCOUNT_ID --phone-number-id ID --waba-id ID --access-token-stdin
                                  [--api-base-url URL] [--api-version vNN.N] [--json]
      connects a WhatsApp Business number: checks it with the platform (GET /{phone-number-id}) using the token read
      from stdin, then stores the token encrypted (default base URL: WHATSAPP_API_BASE_URL; https://graph.facebook.com
      for Meta). Connecting a number again replaces its token.
  npm run admin -- disconnect-number --account ACCOUNT_ID --phone-number-id ID [--json]
      erases the number's token; nothing is sent through it any more (its history stays)
  npm run admin -- rotate-secrets [--json]
      re-encrypts every stored secret with ENCRYPTION_KEY (those sealed with ENCRYPTION_KEY_PREVIOUS); see
      docs/production.md "Secrets"
`;

class UsageError extends Error {}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      account: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
      'phone-number-id': { type: 'string' },
      'waba-id': { type: 'string' },
      'access-token-stdin': { type: 'boolean', default: false },
      'api-base-url': { type: 'string' },
      'api-version': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...args] = positionals;
  if (!command || values.help) {
    process.stdout.write(USAGE);
    return;
  }

  const config = loadConfigOrExit();
  const db = new DataSource(dataSourceOptions(config.DATABASE_URL, { extra: { max: 2 } }));
  await db.initialize();
  try {
    const result = await run(db, config, command, args, values);
    print(result, values.json ?? false);
  } finally {
    await db.destroy();
  }
}

interface Options {
  name?: string;
  account?: string;
  email?: string;
  role?: string;
  'password-stdin'?: boolean;
  'phone-number-id'?: string;
  'waba-id'?: string;
  'access-token-stdin'?: boolean;
  'api-base-url'?: string;
  'api-version'?: string;
}

/** Commands that write or re-encrypt secrets check first that ENCRYPTION_KEY is the deployment's key. */
const USES_SECRETS = new Set(['create-account', 'connect-number', 'disconnect-number']);

/** Meta's throughput levels as the pacer's messages per second (STANDARD: 80/s, HIGH: up to 1,000/s). */
const THROUGHPUT_MPS: Record<string, number> = { STANDARD: 80, HIGH: 1000 };

async function run(
  db: DataSource,
  config: ReturnType<typeof loadConfigOrExit>,
  command: string,
  args: string[],
  values: Options,
) {
  const box = SecretBox.fromConfig(config);
  if (USES_SECRETS.has(command)) await checkSecretsKey(db, box);
  switch (command) {
    case 'create-account': {
      if (!values.name) throw new UsageError('create-account needs --name NAME');
      return provisionAccount(db, box, {
        name: values.name,
        apiBaseUrl: config.WHATSAPP_API_BASE_URL,
        apiVersion: config.WHATSAPP_API_VERSION,
      });
    }
    case 'create-client': {
      if (!values.account || !/^\d+$/.test(values.account))
        throw new UsageError('create-client needs --account ACCOUNT_ID (a number)');
      if (!(await accountExists(db, values.account))) throw new UsageError(`No account with id ${values.account}`);
      return { accountId: values.account, ...(await createClient(db, values.account)) };
    }
    case 'set-grants': {
      const [clientId, list] = args;
      if (!clientId || list === undefined)
        throw new UsageError('set-grants needs CLIENT_ID and a comma-separated list of grants');
      const grants = list
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      const unknown = grants.filter((g) => !isGrant(g));
      if (unknown.length) throw new UsageError(`Unknown grant(s): ${unknown.join(', ')}. Known: ${GRANTS.join(', ')}`);
      if (!(await setClientGrants(db, clientId, grants))) throw new UsageError(`No client with id ${clientId}`);
      return { clientId, grants };
    }
    case 'list-accounts': {
      const clients = await clientIdsByAccount(db);
      return (await listAccounts(db)).map(({ accountId, name, createdAt, messagingPhoneIds }) => ({
        accountId,
        name,
        createdAt,
        clientIds: clients.get(accountId) ?? [],
        messagingPhoneIds,
      }));
    }
    case 'list-clients': {
      if (!values.account || !/^\d+$/.test(values.account))
        throw new UsageError('list-clients needs --account ACCOUNT_ID (a number)');
      return listClients(db, values.account);
    }
    case 'rotate-secret': {
      const [clientId] = args;
      if (!clientId) throw new UsageError('rotate-secret needs CLIENT_ID');
      const rotated = await rotateClientSecret(db, clientId, null);
      if (!rotated) throw new UsageError(`No client with id ${clientId}`);
      return rotated;
    }
    case 'delete-client': {
      const [clientId] = args;
      if (!clientId) throw new UsageError('delete-client needs CLIENT_ID');
      if (!(await deleteClient(db, clientId, null))) throw new UsageError(`No client with id ${clientId}`);
      return { clientId, deleted: true };
    }
    case 'create-user': {
      if (!values.account || !/^\d+$/.test(values.account))
        throw new UsageError('create-user needs --account ACCOUNT_ID (a number)');
      if (!values.email) throw new UsageError('create-user needs --email EMAIL');
      if (!values.role || !isRole(values.role))
        throw new UsageError(`create-user needs --role, one of: ${ROLES.join(', ')}`);
      const password = values['password-stdin'] ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
      try {
        const user = await createUser(db, {
          accountId: values.account,
          email: values.email,
          role: values.role,
          password,
        });
        return values['password-stdin'] ? { ...user, password: '(as given)' } : user;
      } catch (error) {
        if (error instanceof HttpException) throw new UsageError((error.getResponse() as { message: string }).message);
        throw error;
      }
    }
    case 'reset-password': {
      if (!values.email) throw new UsageError('reset-password needs --email EMAIL');
      const password = values['password-stdin'] ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
      try {
        const user = await resetPassword(db, values.email, password);
        if (!user) throw new UsageError(`No user with email ${values.email}`);
        return { ...user, password: password === undefined ? user.password : '(as given)', sessionsEnded: true };
      } catch (error) {
        if (error instanceof HttpException) throw new UsageError((error.getResponse() as { message: string }).message);
        throw error;
      }
    }
    case 'delete-user': {
      if (!values.email) throw new UsageError('delete-user needs --email EMAIL');
      const user = await deleteUser(db, values.email);
      if (!user) throw new UsageError(`No user with email ${values.email}`);
      return { ...user, deleted: true };
    }
    case 'connect-number':
      return connectNumber(db, box, config, values);
    case 'disconnect-number': {
      const accountId = accountOption(values, 'disconnect-number');
      const phoneNumberId = values['phone-number-id'];
      if (!phoneNumberId) throw new UsageError('disconnect-number needs --phone-number-id ID');
      if (!(await disconnectPhoneNumber(db, box, accountId, phoneNumberId)))
        throw new UsageError(`Account ${accountId} has no connected number ${phoneNumberId}`);
      return { accountId, phoneNumberId, disconnected: true };
    }
    case 'rotate-secrets': {
      const key = await checkSecretsKey(db, box).catch((error: Error) => {
        if (error instanceof SecretsKeyMismatchError)
          throw new UsageError(
            `${error.message}\nrotate-secrets needs the key the data was written with, as ENCRYPTION_KEY or ENCRYPTION_KEY_PREVIOUS.`,
          );
        throw error;
      });
      const accessTokens = await resealAccessTokens(db, box);
      const webhookSecrets = await resealEndpointSecrets(db, box);
      const unreadable = accessTokens.unreadable.length + webhookSecrets.unreadable.length;
      if (unreadable === 0) await resealSecretsKeyCheck(db, box);
      return {
        keyFingerprint: box.keyFingerprint,
        keyCheckWasCurrent: key.current,
        accessTokens: `${accessTokens.resealed} of ${accessTokens.checked} re-encrypted`,
        webhookSecrets: `${webhookSecrets.resealed} of ${webhookSecrets.checked} re-encrypted`,
        unreadable: [
          ...accessTokens.unreadable.map((id) => `phone number ${id}`),
          ...webhookSecrets.unreadable.map((id) => `webhook endpoint ${id}`),
        ],
        done: unreadable === 0,
      };
    }
    default:
      throw new UsageError(`Unknown command "${command}"\n\n${USAGE}`);
  }
}

function accountOption(values: Options, command: string): string {
  if (!values.account || !/^\d+$/.test(values.account))
    throw new UsageError(`${command} needs --account ACCOUNT_ID (a number)`);
  return values.account;
}

/** connect-number: the platform must know the number and accept the token before anything is stored. */
async function connectNumber(
  db: DataSource,
  box: SecretBox,
  config: ReturnType<typeof loadConfigOrExit>,
  values: Options,
) {
  const accountId = accountOption(values, 'connect-number');
  const phoneNumberId = values['phone-number-id'];
  const wabaId = values['waba-id'];
  if (!phoneNumberId || !/^\d+$/.test(phoneNumberId))
    throw new UsageError('connect-number needs --phone-number-id ID (the number id from WhatsApp Manager, digits)');
  if (!wabaId || !/^\d+$/.test(wabaId))
    throw new UsageError('connect-number needs --waba-id ID (the WhatsApp Business Account id, digits)');
  if (!values['access-token-stdin'])
    throw new UsageError('connect-number needs --access-token-stdin (the token is read from stdin, never an argument)');
  const apiBaseUrl = (values['api-base-url'] ?? config.WHATSAPP_API_BASE_URL).replace(/\/$/, '');
  if (!/^https?:\/\/[^\s/]+/.test(apiBaseUrl)) throw new UsageError('--api-base-url must be an http(s) URL');
  const apiVersion = values['api-version'] ?? config.WHATSAPP_API_VERSION;
  if (!/^v\d+\.\d+$/.test(apiVersion)) throw new UsageError('--api-version must look like v21.0');
  if (!(await accountExists(db, accountId))) throw new UsageError(`No account with id ${accountId}`);
  const accessToken = (await readStdin()).trim();
  if (!accessToken) throw new UsageError('connect-number: no access token on stdin');

  const client = new CloudApiClient(
    { baseUrl: apiBaseUrl, apiVersion, accessToken, phoneNumberId, businessAccountId: wabaId },
    { timeoutMs: 15_000 },
  );
  let details;
  try {
    details = await client.getPhoneNumber();
  } catch (error) {
    if (error instanceof CloudApiError)
      throw new UsageError(
        error.httpStatus
          ? `The platform refused the number or the token (HTTP ${error.httpStatus}, code ${error.code}${error.subcode ? `, subcode ${error.subcode}` : ''}): ${error.message}`
          : `The platform at ${apiBaseUrl} did not answer: ${error.message}`,
      );
    throw error;
  }
  const throughput = details.throughput?.level ?? 'STANDARD';
  try {
    const stored = await connectPhoneNumber(db, box, {
      accountId,
      messagingPhoneId: phoneNumberId,
      businessAccountId: wabaId,
      apiBaseUrl,
      apiVersion,
      accessToken,
      displayPhoneNumber: details.display_phone_number,
      verifiedName: details.verified_name,
      messagesPerSecond: THROUGHPUT_MPS[throughput] ?? 80,
    });
    return {
      accountId,
      messagingPhoneId: phoneNumberId,
      wabaId,
      displayPhoneNumber: details.display_phone_number,
      verifiedName: details.verified_name,
      qualityRating: details.quality_rating ?? 'UNKNOWN',
      throughput,
      messagesPerSecond: THROUGHPUT_MPS[throughput] ?? 80,
      apiBaseUrl,
      apiVersion,
      replaced: stored.replaced,
    };
  } catch (error) {
    if (error instanceof PhoneNumberTakenError) throw new UsageError(error.message);
    throw error;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function print(result: unknown, json: boolean) {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const rows = Array.isArray(result) ? result : [result];
  for (const row of rows) {
    for (const [key, value] of Object.entries(row as object))
      process.stdout.write(
        `${key.padEnd(18)} ${Array.isArray(value) ? value.join(', ') : value instanceof Date ? value.toISOString() : value}\n`,
      );
    if (rows.length > 1) process.stdout.write('\n');
  }
}

main().catch((error) => {
  if (error instanceof SecretsKeyMismatchError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78); // EX_CONFIG, as for any other setting
  }
  process.stderr.write(`${error instanceof UsageError ? error.message : (error as Error).stack}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
