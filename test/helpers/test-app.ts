import 'reflect-metadata';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { provisionAccount, type ProvisionedAccount, type ProvisionAccountInput } from '@switchboard/accounts';
import { AppConfig, createLogger, createRedis, loadConfig, SecretBox } from '@switchboard/core';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { DestinationStream } from 'pino';
import { DataSource } from 'typeorm';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createApiApp } from '../../apps/api/src/create-api-app';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { withDatabase } from '../../scripts/local-services';
import { HttpClient } from './http';
import { recordExchanges } from './openapi-recorder';
import { TemporalAutomationWorker } from '@switchboard/automations';

export interface TestAccount extends ProvisionedAccount {
  /** A fresh access token for this account's client. */
  token: string;
  refreshToken: string;
  messagingPhoneId: string;
}

export interface TestApp {
  url: string;
  config: AppConfig;
  app: NestFastifyApplication;
  /** The worker (BullMQ processors) in this process, when started with `worker: true`. */
  worker?: INestApplicationContext;
  db: DataSource;
  http: HttpClient;
  /** Provisions an account (client with every grant, one number) and authenticates it: one line per test. */
  createAccount(input?: Partial<ProvisionAccountInput>): Promise<TestAccount>;
  close(): Promise<void>;
}

/**
 * Boots the real API on a random port against its own database (cloned from the migrated template)
 * and its own Redis key prefix. `env` overrides configuration (e.g. a 1-second token lifetime);
 * `worker: true` also runs the worker's processors in this process; `logs` receives the log lines (JSON, one per write)
 * instead of stdout.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { worker?: boolean; logs?: DestinationStream } = {},
): Promise<TestApp> {
  const template = process.env.SWITCHBOARD_TEST_TEMPLATE_DB;
  if (!template) throw new Error('Run e2e tests through jest: the global setup prepares the template database');
  const suffix = randomBytes(6).toString('hex');
  const database = `sbt_${suffix}`;
  const baseUrl = process.env.DATABASE_URL!;

  const admin = new Client({ connectionString: withDatabase(baseUrl, 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database} TEMPLATE ${template}`);
  await admin.end();

  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    PORT: '0',
    DATABASE_URL: withDatabase(baseUrl, database),
    REDIS_PREFIX: `sbt:${suffix}`,
    DATABASE_POOL_SIZE: '5',
    ...env,
  });
  // One logger for the API and the worker in this process, as in a real process; `logs` receives its lines.
  const logger = createLogger(config, options.logs);
  const app = await createApiApp(config, logger);
  if (process.env.SWITCHBOARD_OPENAPI_RECORD) recordExchanges(app, process.env.SWITCHBOARD_OPENAPI_RECORD);
  await app.listen(0, '127.0.0.1');
  const worker = options.worker
    ? await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger })
    : undefined;
  if (worker && config.TEMPORAL_ADDRESS) await temporalWorkerRunning(worker);
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  const http = new HttpClient(url);
  const db = app.get(DataSource);
  const secretBox = new SecretBox(config.ENCRYPTION_KEY);

  return {
    url,
    config,
    app,
    worker,
    db,
    http,
    async createAccount(input = {}) {
      const account = await provisionAccount(db, secretBox, {
        name: `Test account ${randomBytes(3).toString('hex')}`,
        apiBaseUrl: config.WHATSAPP_API_BASE_URL,
        apiVersion: config.WHATSAPP_API_VERSION,
        ...input,
      });
      const auth = await http.post('/v1/authenticate', undefined, {
        headers: { clientid: account.clientId, clientsecret: account.clientSecret },
      });
      if (auth.status !== 200) throw new Error(`authenticate failed: ${auth.status} ${JSON.stringify(auth.body)}`);
      return {
        ...account,
        token: auth.body.token,
        refreshToken: auth.body.refreshToken,
        messagingPhoneId: account.messagingPhoneIds[0],
      };
    },
    async close() {
      await worker?.close();
      await app.close();
      const redis = createRedis(config.REDIS_URL);
      const keys = await redis.keys(`${config.REDIS_PREFIX}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
      const cleanup = new Client({ connectionString: withDatabase(baseUrl, 'postgres') });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/** With the Temporal driver, the worker polls once its Temporal worker runs (it connects in the background). */
async function temporalWorkerRunning(worker: INestApplicationContext, timeoutMs = 60_000): Promise<void> {
  const temporal = worker.get(TemporalAutomationWorker);
  const deadline = Date.now() + timeoutMs;
  while (!temporal.isRunning) {
    if (Date.now() > deadline) throw new Error(`the Temporal worker did not start within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
