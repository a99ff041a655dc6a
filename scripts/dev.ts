import 'reflect-metadata';
import { pointPhoneNumbersAt, provisionAccount } from '@switchboard/accounts';
import { clientExists } from '@switchboard/auth';
import { loadConfigOrExit, SecretBox } from '@switchboard/core';
import { dataSourceOptions, runMigrations } from '@switchboard/core/database';
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { API_NODE_FLAGS } from '../apps/api/src/node-flags';
import { createUser } from '@switchboard/users';
import { ensureDatabase, ensureLocalServices, withDatabase } from './local-services';
import { startTemporal, type TemporalDevServer } from './temporal-server';

/**
 * `npm run dev`: PostgreSQL and Redis (started locally when not reachable), migrations, a demo account
 * (created once; its credentials kept in .data/demo-account.json), then api, worker and sandbox as child processes.
 * `npm run dev -- --temporal` (or DEV_TEMPORAL=true): automations on the Temporal driver, with a Temporal dev server
 * (scripts/temporal-server.ts; its SQLite in .data/temporal.sqlite) unless TEMPORAL_ADDRESS points at one already.
 *
 * Everything derives from the stack's own ports, so two stacks on one machine do not cross (docs/production.md "Two
 * stacks on one machine"): the sandbox listens on SANDBOX_PORT (default PORT + 100) and sends its webhooks to this
 * API; the demo number points at this sandbox; with a PORT other than 3000 and no DATABASE_URL / REDIS_PREFIX given,
 * the stack has its own database (switchboard_<PORT>), Redis prefix (sb<PORT>) and demo account file.
 */
const DEFAULT_PORT = 3000;
const DIST = join(process.cwd(), 'dist');

async function main() {
  const port = Number(process.env.PORT || DEFAULT_PORT);
  const ownStack = port !== DEFAULT_PORT;
  const sandboxPort = Number(process.env.SANDBOX_PORT || port + 100);
  const explicitDatabase = Boolean(process.env.DATABASE_URL);
  process.env.SANDBOX_PORT = String(sandboxPort);
  process.env.WHATSAPP_API_BASE_URL ||= `http://127.0.0.1:${sandboxPort}`;
  process.env.SANDBOX_WEBHOOK_URL ||= `http://127.0.0.1:${port}/webhooks/whatsapp`;
  if (ownStack) process.env.REDIS_PREFIX ||= `sb${port}`;
  // coloured lines for a person at a terminal; JSON when the output goes to a file or another program
  process.env.LOG_FORMAT ||= process.stdout.isTTY ? 'pretty' : 'json';
  const demoFile = join(process.cwd(), '.data', ownStack ? `demo-account-${port}.json` : 'demo-account.json');

  const services = await ensureLocalServices();
  if (ownStack && !explicitDatabase) {
    process.env.DATABASE_URL = withDatabase(services.databaseUrl, `switchboard_${port}`);
    await ensureDatabase(process.env.DATABASE_URL);
  }
  let temporal: TemporalDevServer | undefined;
  const wantsTemporal = process.argv.includes('--temporal') || /^(1|true|yes)$/i.test(process.env.DEV_TEMPORAL ?? '');
  if (wantsTemporal && !process.env.TEMPORAL_ADDRESS) {
    mkdirSync(join(process.cwd(), '.data'), { recursive: true });
    const started = await startTemporal({
      log: console.log,
      ui: true,
      dbFile: join(process.cwd(), '.data', 'temporal.sqlite'),
    });
    if (!('address' in started)) {
      console.error(`${started.reason}; start without --temporal (embedded driver) or set TEMPORAL_ADDRESS`);
      await services.stop();
      process.exit(1);
    }
    temporal = started;
    process.env.TEMPORAL_ADDRESS = started.address;
  }
  const config = loadConfigOrExit();
  const ran = await runMigrations(config.DATABASE_URL);
  if (ran.length) console.log(`Applied migrations: ${ran.join(', ')}`);
  const demo = await demoAccount(config, demoFile);

  const children: ChildProcess[] = [];
  const start = (name: string, entry: string, nodeFlags: string[] = []) => {
    if (!existsSync(entry)) return console.log(`(${name}: ${entry} not built, skipped)`);
    const child = spawn(process.execPath, ['--enable-source-maps', ...nodeFlags, entry], {
      stdio: 'inherit',
      env: process.env,
    });
    child.on('exit', (code, signal) => {
      if (!stopping) console.error(`${name} exited (${signal ?? code}); stopping everything`);
      void shutdown(code ?? 1);
    });
    children.push(child);
  };
  let stopping = false;
  const shutdown = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    // api and worker stop gracefully (in-flight requests and jobs finish): wait for them before stopping the services
    const exited = children.map(
      (child) =>
        new Promise<void>((resolve) =>
          child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
        ),
    );
    for (const child of children) child.kill('SIGTERM');
    await Promise.race([Promise.all(exited), new Promise((r) => setTimeout(r, config.SHUTDOWN_TIMEOUT_MS + 5000))]);
    await temporal?.stop();
    await services.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  start('sandbox', join(DIST, 'apps/sandbox/src/main.js'));
  start('api', join(DIST, 'apps/api/src/main.js'), API_NODE_FLAGS);
  start('worker', join(DIST, 'apps/worker/src/main.js'));

  console.log(`
Switchboard is starting:
  REST API          ${config.baseUrl}        (OpenAPI: ${config.baseUrl}/docs; listening on ${config.HOST}:${config.PORT})
  Inbound webhooks  ${config.inboundWebhookUrl}/webhook/workflow/{identifier}
  Sandbox (Meta)    http://127.0.0.1:${sandboxPort}   (control API: /_sandbox/; webhooks to ${process.env.SANDBOX_WEBHOOK_URL})
  Data              ${redactPassword(config.DATABASE_URL)}, Redis prefix ${config.REDIS_PREFIX}
  Automations       ${config.TEMPORAL_ADDRESS ? `Temporal driver: ${config.TEMPORAL_ADDRESS}, namespace ${config.TEMPORAL_NAMESPACE}, task queue ${config.TEMPORAL_TASK_QUEUE}` : 'embedded driver (npm run dev -- --temporal for Temporal)'}${temporal?.uiUrl ? `\n  Temporal UI       ${temporal.uiUrl}` : ''}
  Demo account      id ${demo.accountId}
    Client ID       ${demo.clientId}
    Client Secret   ${demo.clientSecret}
    messagingPhoneId ${demo.messagingPhoneIds.join(', ')}
  Console           ${config.baseUrl}/app/
    Email           ${demo.user?.email}
    Password        ${demo.user?.password}

  curl -s -X POST ${config.baseUrl}/v1/authenticate -H "clientid: ${demo.clientId}" -H "clientsecret: ${demo.clientSecret}"
`);
}

function redactPassword(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

async function demoAccount(config: ReturnType<typeof loadConfigOrExit>, demoFile: string) {
  const db = new DataSource(dataSourceOptions(config.DATABASE_URL, { extra: { max: 2 } }));
  await db.initialize();
  try {
    if (existsSync(demoFile)) {
      const saved = JSON.parse(readFileSync(demoFile, 'utf8'));
      if (await clientExists(db, saved.clientId)) {
        // the demo number follows this stack's sandbox (its port may have changed since the account was made)
        await pointPhoneNumbersAt(db, saved.accountId, config.WHATSAPP_API_BASE_URL);
        // Demo files written before the console existed get their demo user now.
        if (!saved.user) {
          saved.user = await demoUser(db, saved.accountId);
          writeFileSync(demoFile, JSON.stringify(saved, null, 2), { mode: 0o600 });
        }
        return saved;
      }
    }
    const demo = await provisionAccount(db, new SecretBox(config.ENCRYPTION_KEY), {
      name: 'Demo Shop',
      apiBaseUrl: config.WHATSAPP_API_BASE_URL,
      apiVersion: config.WHATSAPP_API_VERSION,
    });
    const withUser = { ...demo, user: await demoUser(db, demo.accountId) };
    mkdirSync(join(process.cwd(), '.data'), { recursive: true });
    writeFileSync(demoFile, JSON.stringify(withUser, null, 2), { mode: 0o600 });
    return withUser;
  } finally {
    await db.destroy();
  }
}

/** The console's demo person (role admin): created once, its password kept beside the demo credentials. */
async function demoUser(db: DataSource, accountId: string): Promise<{ email: string; password: string }> {
  const email = `demo+${accountId}@switchboard.local`;
  const user = await createUser(db, { accountId, email, role: 'admin' });
  return { email: user.email, password: user.password };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
