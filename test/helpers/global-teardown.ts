import { Client } from 'pg';
import { withDatabase, type LocalServices } from '../../scripts/local-services';
import type { TemporalDevServer } from '../../scripts/temporal-server';

export default async function globalTeardown() {
  const state = globalThis as Record<string, unknown>;
  state.__switchboardSetups = ((state.__switchboardSetups as number | undefined) ?? 1) - 1;
  if ((state.__switchboardSetups as number) > 0) return;
  const services = state.__switchboardServices as LocalServices | undefined;
  const template = process.env.SWITCHBOARD_TEST_TEMPLATE_DB;
  if (services && template) {
    const admin = new Client({ connectionString: withDatabase(services.databaseUrl, 'postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
  }
  await (state.__switchboardTemporal as TemporalDevServer | undefined)?.stop();
  await services?.stop();
}
