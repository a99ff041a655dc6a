import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The Prometheus metrics of this process (docs/observability.md), in one registry: the API serves it at GET /metrics,
 * the worker on WORKER_METRICS_PORT. Counters and histograms are module singletons so that any layer can record
 * without injection; gauges that read shared state (queues, worker heartbeats, the driver) are collected on scrape.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'switchboard_process_' });

export const httpRequestDuration = new Histogram({
  name: 'switchboard_http_request_duration_seconds',
  help: 'REST API request latency, by method, route (the pattern, not the path) and status code',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

export const sendsTotal = new Counter({
  name: 'switchboard_sends_total',
  help: 'Platform send calls by outcome: accepted, failed (for good), retry (retryable failure), unrecorded (accepted, write pending)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

export const messageStatusesTotal = new Counter({
  name: 'switchboard_message_status_updates_total',
  help: 'Status updates of sent messages applied from platform webhooks (sent, delivered, read, failed), first time each; not_ours: a status of a message Switchboard did not send, skipped',
  labelNames: ['status'] as const,
  registers: [metricsRegistry],
});

export const pacerWaitSeconds = new Histogram({
  name: 'switchboard_pacer_wait_seconds',
  help: "Time a single send waited for its slot in the number's per-second pacer",
  buckets: [0, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
  registers: [metricsRegistry],
});

export const webhookLagSeconds = new Histogram({
  name: 'switchboard_platform_webhook_lag_seconds',
  help: "From a platform event's timestamp to its processing by the worker, by kind (status, message)",
  labelNames: ['kind'] as const,
  buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900],
  registers: [metricsRegistry],
});
