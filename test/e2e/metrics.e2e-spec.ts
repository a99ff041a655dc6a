import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** The value of one sample of a Prometheus text exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
    if (!match || match[1] !== name) continue;
    const have: string[] = (match[2] ?? '').match(/\w+="(?:[^"\\]|\\.)*"/g) ?? [];
    if (wanted.every((pair) => have.includes(pair))) return Number(match[3]);
  }
  return 0;
}

/**
 * Issue 21 §4: Prometheus metrics at GET /metrics (libs/core/src/metrics, apps/api/src/metrics) and the worker's
 * liveness in GET /health/ready (a heartbeat in Redis).
 */
describe('Metrics and worker liveness', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  const TOKEN = 'metrics-token-0123456789';
  beforeAll(async () => {
    t = await startTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '10000' }, { worker: true });
    sandbox = await startTestSandbox(t, { statusDelaysMs: { sent: 10, delivered: 20, read: 30 } });
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
  });
  afterAll(async () => {
    await t.close();
    await sandbox.close();
  });

  const scrape = async () => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('needs METRICS_TOKEN as a bearer token when it is set', async () => {
    const none = await t.http.get('/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.body).toEqual({
      statusCode: 401,
      message: 'METRICS_TOKEN required: send Authorization: Bearer <token>',
    });
    expect((await t.http.get('/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(
      401,
    );
  });

  it('after a send: the send, status, latency, pacer and webhook-lag series move; queues and workers are reported', async () => {
    const { customerWrites, customer } = messagingHelpers(t, () => sandbox);
    const before = await scrape();
    const to = customer();
    await customerWrites(account, to);
    const sent = await t.http.post(
      `/v1/send-message/${account.messagingPhoneId}`,
      { typOfmsg: 'normal_message', receipentPhone: to, message: 'Your order shipped' },
      { token: account.token },
    );
    expect(sent.status).toBe(200);

    const after = await eventually(async () => {
      const text = await scrape();
      return sample(text, 'switchboard_message_status_updates_total', { status: 'read' }) >
        sample(before, 'switchboard_message_status_updates_total', { status: 'read' })
        ? text
        : null;
    }, 15_000);
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(moved('switchboard_sends_total', { outcome: 'accepted' })).toBe(1);
    expect(moved('switchboard_message_status_updates_total', { status: 'delivered' })).toBe(1);
    expect(moved('switchboard_pacer_wait_seconds_count')).toBe(1);
    expect(moved('switchboard_platform_webhook_lag_seconds_count', { kind: 'message' })).toBeGreaterThanOrEqual(1);
    expect(moved('switchboard_platform_webhook_lag_seconds_count', { kind: 'status' })).toBeGreaterThanOrEqual(3);
    expect(
      moved('switchboard_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/send-message/:messagingPhoneId',
        status: '200',
      }),
    ).toBe(1);
    for (const queue of ['sends', 'bulk-sends', 'platform-webhooks', 'callbacks', 'automations']) {
      expect(after).toContain(`switchboard_queue_jobs{queue="${queue}",state="waiting"}`);
      expect(after).toContain(`switchboard_queue_oldest_job_age_seconds{queue="${queue}"}`);
    }
    expect(sample(after, 'switchboard_workers_alive')).toBe(1);
    expect(sample(after, 'switchboard_automation_driver_up', { driver: 'embedded' })).toBe(1);
  });

  it('/health/ready names the live workers; with none it is "degraded" but still 200', async () => {
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
    expect(ready.body.details.worker).toEqual({ status: 'up', workers: 1 });

    const apiOnly = await startTestApp();
    try {
      const degraded = await apiOnly.http.get('/health/ready');
      expect(degraded.status).toBe(200);
      expect(degraded.body).toMatchObject({
        status: 'degraded',
        message: 'no worker process has written a heartbeat in the last 20 s',
        details: { worker: { status: 'up', workers: 0 }, postgres: { status: 'up' } },
      });
      // no METRICS_TOKEN outside production: open
      expect((await apiOnly.http.get('/metrics')).status).toBe(200);
    } finally {
      await apiOnly.close();
    }
  });

  it('in production without METRICS_TOKEN, /metrics is not served', async () => {
    const production = await startTestApp({
      NODE_ENV: 'production',
      WHATSAPP_APP_SECRET: 'production-app-secret',
      WHATSAPP_VERIFY_TOKEN: 'production-verify-token',
      JWT_SECRET: 'p'.repeat(40),
      ENCRYPTION_KEY: t.config.ENCRYPTION_KEY,
    });
    try {
      expect((await production.http.get('/metrics')).status).toBe(404);
    } finally {
      await production.close();
    }
  });
});
