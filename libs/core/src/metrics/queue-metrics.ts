import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { Gauge } from 'prom-client';
import { QUEUES } from '../queues';
import { metricsRegistry } from './metrics';
import { aliveWorkers } from './worker-heartbeat';

const STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed'] as const;

interface Source {
  redis: Redis;
  prefix: string;
  queues: Queue[];
}
let source: Source | undefined;

/** Reads the queues and heartbeats of this deployment at each scrape (GET /metrics of the API). */
export function collectQueueMetrics(redis: Redis, prefix: string): () => Promise<void> {
  const queues = Object.values(QUEUES).map((name) => new Queue(name, { connection: redis, prefix: `${prefix}:bull` }));
  source = { redis, prefix, queues };
  return async () => {
    await Promise.all(queues.map((queue) => queue.close()));
    source = undefined;
  };
}

new Gauge({
  name: 'switchboard_queue_jobs',
  help: 'Jobs in each BullMQ queue by state',
  labelNames: ['queue', 'state'] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    if (!source) return;
    await Promise.all(
      source.queues.map(async (queue) => {
        const counts = await queue.getJobCounts(...STATES);
        for (const state of STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
      }),
    );
  },
});

new Gauge({
  name: 'switchboard_queue_oldest_job_age_seconds',
  help: 'Age of the oldest job waiting in each queue (0 when none waits)',
  labelNames: ['queue'] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    if (!source) return;
    const now = Date.now();
    await Promise.all(
      source.queues.map(async (queue) => {
        const [oldest] = await queue.getJobs(['wait', 'prioritized'], 0, 0, true);
        this.set({ queue: queue.name }, oldest ? Math.max(0, (now - oldest.timestamp) / 1000) : 0);
      }),
    );
  },
});

new Gauge({
  name: 'switchboard_workers_alive',
  help: 'Worker processes with a heartbeat in the last 20 s (GET /health/ready is "degraded" at 0)',
  registers: [metricsRegistry],
  async collect() {
    if (source) this.set(await aliveWorkers(source.redis, source.prefix));
  },
});
