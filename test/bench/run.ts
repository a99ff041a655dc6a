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
import { soak } from './scenarios/soak';
import { webhookDeliveries } from './scenarios/webhooks';

/**
 * `npm run bench [scenario...] [-- --minutes N]`: builds, then runs each scenario against real processes, PostgreSQL and Redis,
 * printing figures and their ratio to the targets of ARCHITECTURE.md. Nothing here asserts: it measures.
 */
const SCENARIOS: Record<string, (ctx: Awaited<ReturnType<typeof createBenchContext>>) => Promise<void>> = {
  reads: (ctx) => authenticatedReads(ctx),
  campaign: (ctx) => campaignFanout(ctx),
  sends: (ctx) => sends(ctx),
  automations: (ctx) => automationLatency(ctx),
  /** part 3 of automations alone, embedded driver: for iterating on the send path */
  'automation-sends': async (ctx) => void (await automationSends(ctx, 'embedded', {})),
  mcp: (ctx) => mcpThroughput(ctx),
  webhooks: (ctx) => webhookDeliveries(ctx),
  console: (ctx) => consoleBuilder(ctx),
  import: (ctx) => contactImport(ctx),
  inbox: (ctx) => inboxFanout(ctx),
  soak: (ctx) => soak(ctx, options.minutes),
};
/** what `npm run bench` with no scenario named runs: all but the soak and automation-sends (part of automations), which run only when named */
const DEFAULT = Object.keys(SCENARIOS).filter((name) => name !== 'soak' && name !== 'automation-sends');

/**
 * Arguments: scenario names and `--minutes N` (or `--minutes=N`) for the soak. `npm run bench soak --minutes 2`
 * without `--` leaves npm the flag and passes only `2`: a bare number is taken as the minutes too.
 */
function parseArguments(args: string[]) {
  const names: string[] = [];
  let minutes = 10;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split('=');
    if (flag === '--minutes') minutes = Number(inline ?? args[++i]);
    else if (/^\d+(\.\d+)?$/.test(args[i])) minutes = Number(args[i]);
    else names.push(args[i]);
  }
  if (!(minutes > 0)) throw new Error('--minutes wants a positive number');
  return { names, minutes };
}
const options = parseArguments(process.argv.slice(2));

async function main() {
  const names = options.names.length ? options.names : DEFAULT;
  const unknown = names.filter((n) => !SCENARIOS[n]);
  if (unknown.length)
    throw new Error(`Unknown scenario(s) ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const took: Record<string, string> = {};
  const start = Date.now();
  for (const name of names) {
    // each scenario in a database and Redis prefix of its own: nothing an earlier one left is worked on by its processes
    const ctx = await createBenchContext(name);
    const scenarioStart = Date.now();
    try {
      await SCENARIOS[name](ctx);
    } finally {
      await ctx.close();
    }
    took[name] = `${((Date.now() - scenarioStart) / 1000).toFixed(0)} s`;
  }
  const minutes = (Date.now() - start) / 60_000;
  // issue 22 item 7: the default set within 10 minutes
  const verdict = options.names.length
    ? ''
    : ` ${minutes <= 10 ? 'OK' : 'ABOVE TARGET'} (target <= 10 min for the default set)`;
  console.log('\n[bench duration]');
  for (const [key, value] of Object.entries({ ...took, total: `${minutes.toFixed(1)} min${verdict}` }))
    console.log(`  ${key.padEnd(34)} ${value}`);
}

// exit once done: a scenario's leftover timers (a 5-minute guard that lost its race) must not keep the bench waiting
main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
