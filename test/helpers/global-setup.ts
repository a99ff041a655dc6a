import 'reflect-metadata';
import { runMigrations } from '@switchboard/core/database';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { ensureLocalServices, withDatabase } from '../../scripts/local-services';
import { startTemporal, type TemporalDevServer } from '../../scripts/temporal-server';

const ROOT = join(__dirname, '..', '..');
import { ensureChromium } from './browser';
import { ensureComposeTool } from './compose-tool';

/**
 * Once per `jest` run (shared by the e2e and temporal projects: the second call only counts): compile to dist/
 * (with the prebuilt workflow bundle), make sure PostgreSQL and Redis answer (starting local ones if not), build a
 * migrated template database, and start a Temporal dev server (scripts/temporal-server.ts: the `temporal` CLI from
 * PATH or the cache, built with `go install` when missing). Every test file clones the template (CREATE DATABASE ...
 * TEMPLATE), so files are isolated and none pays for migrations; the template's name is unique to this run.
 *
 * Temporal: SWITCHBOARD_TEST_TEMPORAL_ADDRESS is set for the suites that run on both drivers; when no server can be
 * had (no binary and no `go`), it stays unset, the reason is printed and those suites skip their Temporal half
 * (printing why). SWITCHBOARD_TEST_TEMPORAL=off skips the server on purpose; =required fails the run without one (CI).
 */
export default async function globalSetup() {
  const state = globalThis as Record<string, unknown>;
  state.__switchboardSetups = ((state.__switchboardSetups as number | undefined) ?? 0) + 1;
  if ((state.__switchboardSetups as number) > 1) return;

  // Tests that run real processes (CLI, worker crash tests) use the compiled output; SWC takes about a second.
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const services = await ensureLocalServices((line) => process.stderr.write(`${line}\n`));
  // The console's browser tests need Debian's chromium: installed here when missing and we are root; otherwise
  // only those tests fail, saying how to install it.
  try {
    ensureChromium((line) => process.stderr.write(`${line}\n`));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
  }
  // The deployment files' test validates the compose file with Debian's docker-compose (no Docker engine needed).
  try {
    ensureComposeTool((line) => process.stderr.write(`${line}\n`));
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
  state.__switchboardServices = services;

  const mode = process.env.SWITCHBOARD_TEST_TEMPORAL ?? 'auto';
  if (mode !== 'off') {
    const server = await startTemporal({ log: (line) => process.stderr.write(`${line}\n`) });
    if ('address' in server) {
      process.env.SWITCHBOARD_TEST_TEMPORAL_ADDRESS = server.address;
      state.__switchboardTemporal = server as TemporalDevServer;
    } else if (mode === 'required') {
      throw new Error(`SWITCHBOARD_TEST_TEMPORAL=required but ${server.reason}`);
    } else {
      process.stderr.write(`${server.reason}: the Temporal halves of the automation suites will skip\n`);
      process.env.SWITCHBOARD_TEST_TEMPORAL_UNAVAILABLE = server.reason;
    }
  } else {
    process.env.SWITCHBOARD_TEST_TEMPORAL_UNAVAILABLE = 'SWITCHBOARD_TEST_TEMPORAL=off';
  }
  // In-process Temporal workers load the bundle the build just wrote instead of bundling per test file.
  process.env.TEMPORAL_WORKFLOW_BUNDLE = join(ROOT, 'dist', 'workflows', 'automation-workflows.bundle.js');
}
