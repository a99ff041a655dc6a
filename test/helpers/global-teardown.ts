import { Client } from 'pg';
import { withDatabase, type LocalServices } from '../../scripts/local-services';

export default async function globalTeardown() {
  const services = (globalThis as Record<string, unknown>).__switchboardServices as LocalServices | undefined;
  const template = process.env.SWITCHBOARD_TEST_TEMPLATE_DB;
  if (services && template) {
    const admin = new Client({ connectionString: withDatabase(services.databaseUrl, 'postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
  }
  await services?.stop();
}
