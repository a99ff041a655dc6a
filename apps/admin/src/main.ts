import 'reflect-metadata';
import { HttpException } from '@nestjs/common';
import { accountExists, listAccounts, provisionAccount } from '@switchboard/accounts';
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
import { createUser, isRole, ROLES } from '@switchboard/users';
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
}

async function run(
  db: DataSource,
  config: ReturnType<typeof loadConfigOrExit>,
  command: string,
  args: string[],
  values: Options,
) {
  switch (command) {
    case 'create-account': {
      if (!values.name) throw new UsageError('create-account needs --name NAME');
      return provisionAccount(db, new SecretBox(config.ENCRYPTION_KEY), {
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
    default:
      throw new UsageError(`Unknown command "${command}"\n\n${USAGE}`);
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
  process.stderr.write(`${error instanceof UsageError ? error.message : (error as Error).stack}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
