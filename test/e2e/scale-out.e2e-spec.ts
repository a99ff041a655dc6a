import type { ChildProcess } from 'node:child_process';
import { createWorkflow, describeEachDriver, driverEnv, waitFor, waitForTemporalPollers } from '../helpers/automations';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';
import { startApiProcess, startWorkerProcess } from '../helpers/worker-process';

const RECIPIENTS = Number(process.env.SCALE_OUT_RECIPIENTS ?? 20_000);
const RATE = 1000;
const RUNS = 200;
/**
 * The in-doubt wait of the worker processes (30 s by default): the messages claimed by the killed worker wait this long
 * (plus the 5 s a claim may age before its call) after their claim, or until its jobs are taken over (15 s lock),
 * whichever is later, before they may be sent again.
 */
const IN_DOUBT_MS = 15_000;

/** The most messages accepted in any 1-second window (sliding), from the platform's acceptance times. */
export function maxPerSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi] - sorted[lo] >= 1000) lo++;
    max = Math.max(max, hi - lo + 1);
  }
  return max;
}

/**
 * Switchboard scales out: two API processes and two worker processes (compiled dist/, real child processes) on one
 * PostgreSQL database and one Redis. Automation runs started through both APIs complete exactly once each, on each
 * driver; a 20,000-recipient campaign reaches every recipient exactly once at no more than the number's rate in any
 * second, while one of the two workers is SIGKILLed mid-campaign. The periodic sweeps run once per period across the
 * workers (BullMQ job schedulers; see periodic-sweeps.e2e-spec.ts).
 */
describeEachDriver('Scale-out: two API and two worker processes', (driver) => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const apis: Array<{ child: ChildProcess; url: string }> = [];
  const workers: ChildProcess[] = [];
  const logs: string[] = [];
  /** the campaign test's sampler of long transactions (stopped here too when the test fails) */
  let sampler: NodeJS.Timeout | undefined;
  const withLogs = (error: unknown) => new Error(`${(error as Error).message}\n${logs.join('').slice(-3000)}`);

  beforeAll(async () => {
    t = await startTestApp({
      ...driverEnv(driver),
      RATE_LIMIT_PER_MINUTE: '1000000',
      ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    }); // setup only
    for (let i = 0; i < 2; i++) apis.push(await startApiProcess(t, logs));
    sandbox = await startTestSandbox(t, {
      webhookUrl: `${apis[0].url}/webhooks/whatsapp`,
      statusDelaysMs: { sent: 50, delivered: 200, read: null },
      statusBatchSize: 100,
      autoReview: false,
      messageLogLimit: RECIPIENTS * 3,
      webhookLogLimit: 1000,
      webhookRetries: 5, // as Meta retries: a status lost to a busy machine would make its message look never sent
    });
    account = await t.createAccount({ apiBaseUrl: sandbox.url, messagesPerSecond: RATE });
    await sandbox.control.post('/_sandbox/config', { messagesPerSecond: { [account.messagingPhoneId]: RATE } });
    for (let i = 0; i < 2; i++)
      workers.push(startWorkerProcess(t, logs, 10, { SEND_IN_DOUBT_MS: String(IN_DOUBT_MS), SEND_DEBUG: 'true' }));
    if (driver === 'temporal') await waitForTemporalPollers(t, 2, 60_000).catch((e) => Promise.reject(withLogs(e)));
  }, 120_000);
  afterAll(async () => {
    clearInterval(sampler);
    for (const p of [...workers, ...apis.map((a) => a.child)]) if (p.exitCode === null) p.kill('SIGKILL');
    await sandbox?.close();
    await t?.close();
  }, 60_000);

  const h = () => messagingHelpers(t, () => sandbox);

  it(`${RUNS} automation runs started through both APIs (retried on the other one) complete exactly once each`, async () => {
    const tpl = await h().approvedTemplate(account, [
      h().body('Hi {{name}}, your order is confirmed.', { name: 'Ann' }),
    ]);
    const wf = await createWorkflow(t, account.token, {
      trigger: { type: 'webhook' },
      startNodeId: 'confirm',
      nodes: [
        {
          id: 'confirm',
          type: 'send_template',
          templateName: tpl,
          to: '{{payload.phone}}',
          variables: { name: '{{payload.name}}' },
          next: 'done',
        },
        { id: 'done', type: 'end' },
      ],
    });
    const phones = Array.from(
      { length: RUNS },
      (_, i) => `4915${String(driver === 'temporal' ? 2 : 1)}${String(100000 + i)}`,
    );
    const startedAt = Date.now();
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i += 50) {
      const batch = await Promise.all(
        phones.slice(i, i + 50).map(async (phone, j) => {
          const body = { phone, name: `Customer ${i + j}` };
          const headers = { 'content-type': 'application/json', 'idempotency-key': `order-${i + j}` };
          // The shop's retry lands on the other API process: same run.
          const answers = await Promise.all(
            [apis[(i + j) % 2], apis[(i + j + 1) % 2]].map((api) =>
              fetch(`${api.url}/webhook/workflow/${wf.identifier}`, {
                method: 'POST',
                headers,
                body: JSON.stringify(body),
              }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
            ),
          );
          expect(answers.map((a) => a.status)).toEqual([200, 200]);
          expect(answers[1].body.runId).toBe(answers[0].body.runId);
          return answers[0].body.runId as string;
        }),
      );
      runIds.push(...batch);
    }
    const count = async (where: string) =>
      (await t.db.query(`SELECT count(*)::int AS n FROM workflow_runs WHERE workflow_id = $1 AND ${where}`, [wf.id]))[0]
        .n as number;
    await waitFor(
      async () => {
        if ((await count(`status = 'failed'`)) > 0)
          throw new Error(
            `failed runs: ${JSON.stringify(await t.db.query(`SELECT error FROM workflow_runs WHERE workflow_id = $1 AND status = 'failed' LIMIT 1`, [wf.id]))}`,
          );
        return (await count(`status = 'completed'`)) === RUNS;
      },
      240_000, // Temporal's half took 66–108 s beside other test files on 2 cores (2026-11-26): room for a slower day
      `${RUNS} completed runs`,
    ).catch((e) => Promise.reject(withLogs(e)));
    const seconds = (Date.now() - startedAt) / 1000;
    expect(await count('true')).toBe(RUNS);
    const rows = await t.db.query(`SELECT state FROM workflow_runs WHERE workflow_id = $1`, [wf.id]);
    for (const { state } of rows)
      expect(state.history.map((s: any) => `${s.nodeId}:${s.outcome}`)).toEqual(['confirm:completed', 'done:end']);

    const sent = await eventually(
      async () => {
        const all = (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${account.messagingPhoneId}`)).body
          .data as Array<{ to: string; payload: any }>;
        const mine = all.filter((m) => m.payload.template?.name === tpl);
        return mine.length >= RUNS ? mine : null;
      },
      90_000, // 30 s ran out once in a CI-shaped run beside messaging-in-doubt (7 s alone): the logs say why next time
      `${RUNS} messages at the platform`,
    ).catch((e) => Promise.reject(withLogs(e)));
    await new Promise((r) => setTimeout(r, 500)); // a late duplicate would show up by now
    const perPhone = new Map<string, number>();
    for (const m of sent) perPhone.set(m.to, (perPhone.get(m.to) ?? 0) + 1);
    const duplicates = [...perPhone.values()].reduce((sum, n) => sum + (n - 1), 0);
    process.stdout.write(
      `\nscale-out (${driver}): ${RUNS} runs through 2 APIs + 2 workers in ${seconds.toFixed(1)} s (${(RUNS / seconds).toFixed(0)} runs/s), duplicates ${duplicates}\n`,
    );
    expect(duplicates).toBe(0);
    expect([...perPhone.keys()].sort()).toEqual([...phones].sort());
  }, 300_000);

  if (driver === 'embedded') {
    // The campaign path does not depend on the automation driver: run once.
    it(`a ${RECIPIENTS.toLocaleString('en')}-recipient campaign at ${RATE}/s: each recipient once, never over the rate in any second, one worker SIGKILLed mid-campaign`, async () => {
      const tpl = await h().approvedTemplate(account, [
        h().body('Hi {{first}}, the sale starts today.', { first: 'Ann' }),
      ]);
      const [g] = await t.db.query(
        `INSERT INTO contact_groups (account_id, name) VALUES ($1, 'scale-out') RETURNING id`,
        [account.accountId],
      );
      await t.db.query(
        `WITH c AS (INSERT INTO contacts (account_id, contact_number, name)
                    SELECT $1, '4917' || lpad(i::text, 7, '0') || '1', 'Member ' || i FROM generate_series(1, $2::int) i RETURNING id)
         INSERT INTO contact_group_members (group_id, contact_id) SELECT $3, id FROM c`,
        [account.accountId, RECIPIENTS, g.id],
      );
      const api = (i: number, path: string, body?: unknown) =>
        fetch(`${apis[i].url}${path}`, {
          method: 'POST',
          headers: { authorization: account.token, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
      const created = await api(0, '/v2/campaigns', {
        name: 'scale-out',
        messagingPhoneId: account.messagingPhoneId,
        templateName: tpl,
        variables: { name: 'friend' },
        group_ids: [Number(g.id)],
      });
      expect(created.status).toBe(201);
      const id = created.body.data.campaign_id;
      const accepted = async () =>
        (
          await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1 AND wamid IS NOT NULL`, [id])
        )[0].n as number;

      // transactions open for more than 2 s while the campaign runs (none are expected): printed with any duplicates
      const longTransactions = new Set<string>();
      sampler = setInterval(() => {
        t.db
          .query(
            `SELECT pid, state, left(query, 120) AS query FROM pg_stat_activity
              WHERE datname = current_database() AND xact_start < now() - interval '2 seconds' AND pid <> pg_backend_pid()`,
          )
          .then((rows: unknown[]) => rows.forEach((r) => longTransactions.add(JSON.stringify(r))))
          .catch(() => undefined);
      }, 1000).unref();
      expect((await api(1, `/v2/campaigns/${id}/start`)).status).toBe(200);
      await eventually(async () => (await accepted()) >= RECIPIENTS * 0.3, 90_000, '30% accepted').catch((e) =>
        Promise.reject(withLogs(e)),
      );
      workers[0].kill('SIGKILL');
      await new Promise((resolve) => workers[0].once('exit', resolve));
      const killedAt = Date.now();
      const atKill = await accepted();
      expect(atKill).toBeLessThan(RECIPIENTS);

      await eventually(
        async () =>
          (await t.http.get(`/v2/campaigns/${id}`, { token: account.token })).body.data.status === 'completed' &&
          (await accepted()) === RECIPIENTS,
        180_000,
        'campaign completed by the remaining worker',
      ).catch(async (e) =>
        Promise.reject(
          withLogs(new Error(`${(e as Error).message}; ${atKill} accepted at the kill, ${await accepted()} now`)),
        ),
      );

      clearInterval(sampler);
      await new Promise((r) => setTimeout(r, 500));
      const sent = (
        (await sandbox.control.get(`/_sandbox/messages?phone_number_id=${account.messagingPhoneId}`)).body
          .data as Array<{ to: string; acceptedAt: string; payload: any }>
      ).filter((m) => m.payload.template?.name === tpl);
      const perRecipient = new Map<string, number>();
      for (const m of sent) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
      const duplicates = [...perRecipient.values()].reduce((sum, n) => sum + (n - 1), 0);
      const times = sent.map((m) => Date.parse(m.acceptedAt));
      const window = maxPerSecond(times);
      const span = (Math.max(...times) - Math.min(...times)) / 1000;
      process.stdout.write(
        `\nscale-out campaign: ${sent.length} messages to ${perRecipient.size} recipients in ${span.toFixed(1)} s = ${(sent.length / span).toFixed(0)} msg/s ` +
          `(rate ${RATE}/s; one of two workers SIGKILLed at ${atKill}); max in any 1-s window ${window}; duplicates ${duplicates}\n`,
      );
      if (duplicates > 0) await explainDuplicates(t, sandbox, sent, killedAt, logs, longTransactions);
      expect(duplicates).toBe(0);
      expect(perRecipient.size).toBe(RECIPIENTS);
      expect(window).toBeLessThanOrEqual(RATE);
      const progress = (await t.http.get(`/v2/campaigns/${id}`, { token: account.token })).body.data.progress;
      expect(progress).toMatchObject({
        audience: RECIPIENTS,
        recipients: RECIPIENTS,
        queued: 0,
        sent: RECIPIENTS,
        failed: 0,
      });
    }, 300_000);
  }
});

/**
 * What a failing run needs to tell why (the duplicates seen on a slow machine, 2026-11-29, did not come back on a
 * faster one): when each copy was accepted relative to the kill (a second copy about SEND_IN_DOUBT_MS after the first
 * points at the in-doubt wait: a status webhook the platform did not deliver in time), the messages' rows, the workers'
 * log lines about them (SEND_DEBUG: every batch job run and failed platform call), the sandbox's webhook failures and
 * long transactions.
 */
async function explainDuplicates(
  t: TestApp,
  sandbox: TestSandbox,
  sent: Array<{ to: string; acceptedAt: string; payload: any }>,
  killedAt: number,
  logs: string[],
  longTransactions: Set<string>,
) {
  const byRecipient = new Map<string, typeof sent>();
  for (const m of sent) byRecipient.set(m.to, [...(byRecipient.get(m.to) ?? []), m]);
  const copies = [...byRecipient.values()]
    .filter((ms) => ms.length > 1)
    .map((ms) => ms.map((m) => ({ at: Date.parse(m.acceptedAt), id: m.payload.biz_opaque_callback_data as string })))
    .map((ms) => ms.sort((a, b) => a.at - b.at));
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const ids = [...new Set(copies.flat().map((c) => c.id))];
  const rows: Array<Record<string, unknown>> = await t.db.query(
    `SELECT id, recipient, status, attempts, send_claim, claimed_at, accepted_at, send_job FROM messages
      WHERE id = ANY($1::uuid[]) ORDER BY recipient`,
    [ids],
  );
  const jobs = [...new Set(rows.map((r) => String(r.send_job)))];
  const lines = logs.join('').split('\n');
  const about = lines.filter((l) => ids.some((i) => l.includes(i)) || jobs.some((j) => l.includes(j)));
  const warnings = lines.filter((l) => l.includes('"warn"') && !/pacer|batch job runs/.test(l));
  process.stdout.write(
    `duplicates: first copy ${copies
      .slice(0, 10)
      .map((c) => seconds(c[0].at - killedAt))
      .join(', ')} s from the kill; ` +
      `second ${copies
        .slice(0, 10)
        .map((c) => seconds(c[1].at - c[0].at))
        .join(', ')} s after the first\n` +
      `copies (message ids): ${JSON.stringify(copies.slice(0, 10))}\nrows: ${JSON.stringify(rows.slice(0, 10))}\n` +
      `worker log lines about them (${about.length}):\n${about.slice(0, 60).join('\n')}\n` +
      `sandbox stats (webhooks failed or dropped hold nothing back): ${JSON.stringify((await sandbox.control.get('/_sandbox/stats')).body)}\n` +
      `transactions open over 2 s:\n${[...longTransactions].slice(0, 20).join('\n')}\n` +
      `other warnings:\n${warnings.slice(0, 30).join('\n')}\n`,
  );
}
