import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BenchContext, DIST } from '../bench-context';
import { freePorts } from '../../../scripts/free-ports';
import { cpuMeter } from '../bench-platform';
import { median } from '../helpers';
import { load, LoadResult } from '../load';

const ROUNDS = 3;
const verdict = (ok: boolean) => (ok ? 'OK' : 'NOT MET');

/** The reads compared, in order; BENCH_READS=contacts,runs (for instance) runs only those. */
const READS = ['contacts', 'templates', 'campaign', 'runs'] as const;
type Read = (typeof READS)[number];

/**
 * Issue 22 target: each read, with auth, grants, rate limit and validation, serves at least as many requests per
 * second as a bare Fastify + `pg` server running the same SQL (test/bench/bare-server.ts) at 200 connections, and at a
 * steady 1,000 req/s has a p99 at most 1.3× the bare server's. Runs alternate between the two. The reads:
 * GET /v2/contacts (100,000 contacts), GET /v2/templates (5,000 templates), GET /v2/campaigns/{id} (the campaign's
 * report: 100,000 recipients) and GET /v1/workflows/{id}/runs (100,000 runs), in 3-s rounds and 2-s steady runs, two
 * per server (BENCH_READ_SECONDS sets both), so the whole scenario stays near 2 minutes (issue 22 item 7: the default
 * set within 10).
 */
export async function authenticatedReads(ctx: BenchContext) {
  const wanted = (process.env.BENCH_READS ?? READS.join(',')).split(',') as Read[];
  const account = await ctx.createAccount();
  const seeding = Date.now();
  const paths = await seed(ctx, account.accountId);
  console.log(`reads: seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`);

  const [apiPort, barePort] = (await freePorts(2)).map(String);
  const api = await ctx.startProcess(
    'api',
    join(DIST, 'apps/api/src/main.js'),
    { PORT: apiPort },
    `http://127.0.0.1:${apiPort}/health`,
  );
  const bare = await ctx.startProcess(
    'bare',
    join(DIST, 'test/bench/bare-server.js'),
    { PORT: barePort, BARE_ACCOUNT_ID: account.accountId },
    `http://127.0.0.1:${barePort}/health`,
  );
  const auth = await fetch(`http://127.0.0.1:${apiPort}/v1/authenticate`, {
    method: 'POST',
    headers: { clientid: account.clientId, clientsecret: account.clientSecret },
  });
  const { token } = (await auth.json()) as { token: string };

  const seconds = Number(process.env.BENCH_READ_SECONDS ?? 0);
  for (const read of READS.filter((r) => wanted.includes(r))) {
    await compare(ctx, read, paths[read], {
      ours: `http://127.0.0.1:${apiPort}`,
      bare: `http://127.0.0.1:${barePort}`,
      processes: { ours: api, bare },
      headers: { authorization: token },
      seconds: seconds || 3,
      warmUp: 2,
      steady: seconds || 2,
    });
  }
  api.kill('SIGTERM');
  bare.kill('SIGTERM');
}

/** One read: same bytes from both, warm-up, alternating rounds at 200 connections, then a steady 1,000 req/s. */
async function compare(
  ctx: BenchContext,
  read: Read,
  path: string,
  options: {
    ours: string;
    bare: string;
    processes: { ours: ChildProcess; bare: ChildProcess };
    headers: Record<string, string>;
    seconds: number;
    warmUp: number;
    steady: number;
  },
) {
  const { headers, seconds, warmUp, steady } = options;
  const oursUrl = `${options.ours}${path}`;
  const bareUrl = `${options.bare}${path}`;
  const [oursBody, bareBody] = await Promise.all([
    fetch(oursUrl, { headers }).then((r) => r.text()),
    fetch(bareUrl).then((r) => r.text()),
  ]);

  const ours = (more: Parameters<typeof load>[1] = {}) => load(oursUrl, { headers, seconds, ...more });
  const theirs = (more: Parameters<typeof load>[1] = {}) => load(bareUrl, { seconds, ...more });
  // warm-up at the rounds' 200 connections: JIT, pools, prepared statements, and a young generation grown to the
  // load (at 50 connections for 1 s, the first round of either server was often the slowest of the three)
  await ours({ seconds: warmUp });
  await theirs({ seconds: warmUp });

  /** A run with the CPU seconds it cost: the server's own process, PostgreSQL, Redis, and the load (autocannon, here) */
  const withCpu = async (who: 'ours' | 'bare', run: () => Promise<LoadResult>) => {
    const cpu = cpuMeter([options.processes[who]]);
    const load = process.cpuUsage();
    const result = await run();
    const used = process.cpuUsage(load);
    const [server, postgres, redis] = cpu().seconds;
    return { result, seconds: [server, postgres, redis, (used.user + used.system) / 1e6] };
  };
  /** ms per request; the total is the server's, PostgreSQL's and Redis's (not the load's) */
  const cpuText = (seconds: number[], requests: number) => {
    const ms = seconds.map((s) => (s * 1000) / Math.max(1, requests));
    return `${ms
      .slice(0, 3)
      .reduce((a, b) => a + b, 0)
      .toFixed(2)} (${ms.map((m) => m.toFixed(2)).join(' / ')})`;
  };

  const rounds = {
    ours: { runs: [] as LoadResult[], seconds: [0, 0, 0, 0] },
    bare: { runs: [] as LoadResult[], seconds: [0, 0, 0, 0] },
  };
  const round = async (who: 'ours' | 'bare') => {
    const { result, seconds: used } = await withCpu(who, who === 'ours' ? ours : theirs);
    rounds[who].runs.push(result);
    used.forEach((s, i) => (rounds[who].seconds[i] += s));
  };
  for (let n = 0; n < ROUNDS; n++) {
    // alternate which goes first, so neither always meets the machine after the other's load
    if (n % 2 === 0) {
      await round('ours');
      await round('bare');
    } else {
      await round('bare');
      await round('ours');
    }
  }
  const oursRuns = rounds.ours.runs;
  const bareRuns = rounds.bare.runs;
  const roundCpuText = (who: 'ours' | 'bare') =>
    cpuText(
      rounds[who].seconds,
      rounds[who].runs.reduce((n, r) => n + r.rps * seconds, 0),
    );
  // at the steady rate, twice each in the order bare, ours, ours, bare: one 2-s run's p99 is decided by a pause or two
  // (the same build's ratio went 0.39, 1.77, 2.15 and 3.64 in four runs on one machine); the p99 of each server is the
  // mean of its two, each printed. CPU: the server's own process, PostgreSQL, Redis.
  type Measured = Awaited<ReturnType<typeof withCpu>>;
  const steadyRuns: Record<'ours' | 'bare', Measured[]> = { ours: [], bare: [] };
  for (const who of ['bare', 'ours', 'ours', 'bare'] as const)
    steadyRuns[who].push(await withCpu(who, () => (who === 'ours' ? ours : theirs)({ rate: 1000, seconds: steady })));
  const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
  const steadyOf = (who: 'ours' | 'bare') => {
    const runs = steadyRuns[who];
    return {
      rps: Math.round(mean(runs.map((r) => r.result.rps))),
      p99: mean(runs.map((r) => r.result.p99)),
      p99s: runs.map((r) => r.result.p99).join(', '),
      cpu: cpuText(
        [0, 1, 2].map((i) => runs.reduce((sum, r) => sum + r.seconds[i], 0)),
        runs.reduce((n, r) => n + r.result.rps * steady, 0),
      ),
      errors: runs.reduce((n, r) => n + r.result.errors + r.result.non2xx, 0),
    };
  };
  const steadyOurs = steadyOf('ours');
  const steadyBare = steadyOf('bare');

  const oursRps = median(oursRuns.map((r) => r.rps));
  const bareRps = median(bareRuns.map((r) => r.rps));
  const ratio = oursRps / bareRps;
  const p99Ratio = steadyOurs.p99 / steadyBare.p99;
  const errors =
    [...oursRuns, ...bareRuns].reduce((n, r) => n + r.errors + r.non2xx, 0) + steadyOurs.errors + steadyBare.errors;
  ctx.record(`authenticated reads: ${read}`, {
    'same response body as bare': oursBody === bareBody ? 'yes' : `NO\n    ours: ${oursBody}\n    bare: ${bareBody}`,
    [`GET ${path} req/s, 200 conns (${ROUNDS} × ${seconds} s)`]: oursRuns.map((r) => r.rps).join(' / '),
    [`bare Fastify + pg req/s, 200 conns`]: bareRuns.map((r) => r.rps).join(' / '),
    'per-round ratio': oursRuns.map((r, i) => (r.rps / bareRuns[i].rps).toFixed(2)).join(' / '),
    'median ratio (target >= 1.0)': `${ratio.toFixed(2)} ${verdict(ratio >= 1)}`,
    'p50 / p99 ms, 200 conns (ours)': `${median(oursRuns.map((r) => r.p50))} / ${median(oursRuns.map((r) => r.p99))}`,
    'p50 / p99 ms, 200 conns (bare)': `${median(bareRuns.map((r) => r.p50))} / ${median(bareRuns.map((r) => r.p99))}`,
    '200 conns: CPU ms per request, ours (api / postgres / redis / the load)': roundCpuText('ours'),
    '200 conns: CPU ms per request, bare (bare / postgres / redis / the load)': roundCpuText('bare'),
    'at 1,000 req/s: achieved (ours / bare)': `${steadyOurs.rps} / ${steadyBare.rps}`,
    'at 1,000 req/s: p99 ms, mean of 2 runs (ours / bare)': `${steadyOurs.p99} / ${steadyBare.p99} (runs: ${steadyOurs.p99s} / ${steadyBare.p99s})`,
    'p99 ratio (target <= 1.3)': `${p99Ratio.toFixed(2)} ${verdict(p99Ratio <= 1.3)}`,
    'at 1,000 req/s: CPU ms per request, ours (api / postgres / redis)': steadyOurs.cpu,
    'at 1,000 req/s: CPU ms per request, bare (bare / postgres / redis)': steadyBare.cpu,
    'errors + non-2xx (all runs)': errors,
  });
}

/** The account's data, written with generate_series (a few seconds); the path of each read. */
export async function seed(ctx: Pick<BenchContext, 'db'>, accountId: string): Promise<Record<Read, string>> {
  const q = (sql: string, params: unknown[] = [accountId]) => ctx.db.query(sql, params);
  // 100,000 contacts, as a busy shop would have
  await q(
    `INSERT INTO contacts (account_id, name, contact_number, email, created_at)
     SELECT $1, 'Customer ' || g, (4915100000000 + g)::text, 'customer' || g || '@example.com', now() - g * interval '1 second'
       FROM generate_series(1, 100000) g`,
  );
  // 5,000 templates: mostly approved, a tenth rejected (with a reason), a tenth pending; two body variables each
  await q(
    `INSERT INTO templates (account_id, phone_number_id, platform_template_id, name, language, category, status,
                            rejected_reason, components, platform_components, variables, created_at, updated_at)
     SELECT $1, p.id, (9000000 + g)::text, 'order_update_' || g, 'en_US',
            (ARRAY['MARKETING', 'UTILITY', 'AUTHENTICATION'])[1 + g % 3],
            CASE g % 10 WHEN 0 THEN 'REJECTED' WHEN 1 THEN 'PENDING' ELSE 'APPROVED' END,
            CASE g % 10 WHEN 0 THEN 'INVALID_FORMAT' END,
            jsonb_build_array(jsonb_build_object('type', 'body', 'parameters', jsonb_build_array(
              jsonb_build_object('type', 'text', 'text', 'Hello {{name}}, your order ' || g || ' is on its way: {{link}}'),
              jsonb_build_object('type', 'variable', 'variable', jsonb_build_object('text', 'name', 'value', 'Ada')),
              jsonb_build_object('type', 'variable', 'variable', jsonb_build_object('text', 'link', 'value', 'https://example.com/t/1'))))),
            jsonb_build_array(jsonb_build_object('type', 'BODY', 'text', 'Hello {{1}}, your order ' || g || ' is on its way: {{2}}',
              'example', jsonb_build_object('body_text', jsonb_build_array(jsonb_build_array('Ada', 'https://example.com/t/1'))))),
            ARRAY['name', 'link'], now() - g * interval '1 minute', now() - g * interval '1 minute'
       FROM generate_series(1, 5000) g, (SELECT id FROM phone_numbers WHERE account_id = $1 ORDER BY id LIMIT 1) p`,
  );
  // a running campaign over those contacts: 100,000 recipients (campaign_counts is kept by its triggers)
  const [campaign] = await q(
    `INSERT INTO campaigns (account_id, phone_number_id, name, template_name, template_language, variables, status, started_at)
     SELECT $1, id, 'Black Friday', 'order_update_2', 'en_US', '{"name": "there"}', 'running', now()
       FROM phone_numbers WHERE account_id = $1 ORDER BY id LIMIT 1 RETURNING id`,
  );
  const [trigger] = await q(`INSERT INTO campaign_triggers (campaign_id, kind) VALUES ($1, 'start') RETURNING id`, [
    campaign.id,
  ]);
  await q(`INSERT INTO campaign_audience (campaign_id, contact_id) SELECT $2, id FROM contacts WHERE account_id = $1`, [
    accountId,
    campaign.id,
  ]);
  await q(
    `INSERT INTO campaign_recipients (campaign_id, trigger_id, contact_id, status, batch)
     SELECT $2, $3, id, CASE id % 50 WHEN 0 THEN 'skipped_blocked' WHEN 1 THEN 'failed' WHEN 2 THEN 'pending' ELSE 'queued' END, id / 50
       FROM contacts WHERE account_id = $1`,
    [accountId, campaign.id, trigger.id],
  );
  // a webhook-started workflow with 100,000 runs: most completed, some failed (with an error), some waiting
  const [workflow] = await q(
    `INSERT INTO workflows (account_id, name, identifier, trigger_type) VALUES ($1, 'Order updates', $2, 'webhook') RETURNING id`,
    [accountId, `bench-${accountId}`],
  );
  await q(`INSERT INTO workflow_versions (workflow_id, version, definition) VALUES ($1, 1, '{"nodes": []}')`, [
    workflow.id,
  ]);
  await q(
    `INSERT INTO workflow_runs (id, account_id, workflow_id, workflow_version, status, payload, state, current_node_id,
                                contact_phone, created_at, updated_at, finished_at)
     SELECT gen_random_uuid(), $1, $2, 1, s.status, json_build_object('order', g, 'phone', (4915100000000 + g)::text),
            json_build_object('version', 1, 'status', s.status, 'currentNodeId', 'send_update', 'seq', 3,
              'context', json_build_object('trigger', json_build_object('order', g)),
              'waitingFor', NULL,
              'history', json_build_array(
                json_build_object('seq', 1, 'nodeId', 'start', 'type', 'trigger', 'outcome', 'completed'),
                json_build_object('seq', 2, 'nodeId', 'wait', 'type', 'wait', 'outcome', 'timer_fired'),
                json_build_object('seq', 3, 'nodeId', 'send_update', 'type', 'send_template', 'outcome', s.outcome)),
              'historyCount', 3, 'consumedReplyIds', json_build_array(),
              'error', CASE WHEN s.status = 'failed' THEN json_build_object('message', 'Template order_update_2 is not approved', 'code', 'template') END),
            'send_update', (4915100000000 + g)::text, now() - g * interval '1 second', now() - g * interval '1 second',
            CASE WHEN s.status IN ('completed', 'failed') THEN now() - g * interval '1 second' END
       FROM generate_series(1, 100000) g,
            LATERAL (SELECT CASE g % 20 WHEN 0 THEN 'failed' WHEN 1 THEN 'waiting' ELSE 'completed' END AS status,
                            CASE g % 20 WHEN 0 THEN 'failed' ELSE 'completed' END AS outcome) s`,
    [accountId, workflow.id],
  );
  for (const table of ['contacts', 'templates', 'campaign_audience', 'campaign_recipients', 'workflow_runs'])
    await ctx.db.query(`VACUUM ANALYZE ${table}`);
  return {
    contacts: process.env.BENCH_READ_PATH ?? '/v2/contacts?page=1&pageSize=20',
    templates: '/v2/templates?page=1&pageSize=50',
    campaign: `/v2/campaigns/${campaign.id}`,
    runs: `/v1/workflows/${workflow.id}/runs?page=1&pageSize=20`,
  };
}
