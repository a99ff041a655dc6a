import 'reflect-metadata';
import { runMigrations } from '@switchboard/core/database';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { ensureLocalServices, withDatabase } from '../../scripts/local-services';
import { ensureChromium } from './browser';

/**
 * Once per `jest` run: compile to dist/, make sure PostgreSQL and Redis answer (starting local ones if not), then build a
 * migrated template database. Every test file clones it (CREATE DATABASE ... TEMPLATE), so files are isolated
 * and none pays for migrations. The template's name is unique to this run, so parallel runs do not collide.
 */
export default async function globalSetup() {
  // Tests that run real processes (CLI, worker crash tests) use the compiled output; SWC takes about a second.
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: join(__dirname, '..', '..'), stdio: 'inherit' });
  const services = await ensureLocalServices((line) => process.stderr.write(`${line}\n`));
  // The console's browser tests need Debian's chromium: installed here when missing and we are root; otherwise
  // only those tests fail, saying how to install it.
  try {
    ensureChromium((line) => process.stderr.write(`${line}\n`));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
  }
  const template = `sbt_template_${process.pid}`;
  const admin = new Client({ connectionString: withDatabase(services.databaseUrl, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  await runMigrations(withDatabase(services.databaseUrl, template));

  process.env.SWITCHBOARD_TEST_TEMPLATE_DB = template;
  (globalThis as Record<string, unknown>).__switchboardServices = services;
}
