import 'reflect-metadata';
import { createBenchContext } from './bench-context';
import { authenticatedReads } from './scenarios/authenticated-reads';
import { automationLatency } from './scenarios/automations';
import { automationSends } from './scenarios/automation-sends';
import { campaignFanout } from './scenarios/campaign';
import { contactImport } from './scenarios/import';
import { inboxFanout } from './scenarios/inbox';
import { mcpThroughput } from './scenarios/mcp';
import { consoleBuilder } from './scenarios/console';
import { sends } from './scenarios/sends';
import { webhookDeliveries } from './scenarios/webhooks';

/**
 * `npm run bench [scenario...]`: builds, then runs each scenario against real processes, PostgreSQL and Redis,
 * printing figures and their ratio to the targets of ARCHITECTURE.md. Nothing here asserts: it measures.
 */
const SCENARIOS: Record<string, (ctx: Awaited<ReturnType<typeof createBenchContext>>) => Promise<void>> = {
  reads: (ctx) => authenticatedReads(ctx),
  campaign: (ctx) => campaignFanout(ctx),
  sends: (ctx) => sends(ctx),
  automations: (ctx) => automationLatency(ctx),
  'automation-sends': (ctx) => automationSends(ctx, 'embedded', {}).then(() => undefined),
  mcp: (ctx) => mcpThroughput(ctx),
  webhooks: (ctx) => webhookDeliveries(ctx),
  console: (ctx) => consoleBuilder(ctx),
  import: (ctx) => contactImport(ctx),
  inbox: (ctx) => inboxFanout(ctx),
};

async function main() {
  const wanted = process.argv.slice(2);
  const names = wanted.length ? wanted : Object.keys(SCENARIOS);
  const unknown = names.filter((n) => !SCENARIOS[n]);
  if (unknown.length)
    throw new Error(`Unknown scenario(s) ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const ctx = await createBenchContext();
  try {
    for (const name of names) await SCENARIOS[name](ctx);
  } finally {
    await ctx.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
