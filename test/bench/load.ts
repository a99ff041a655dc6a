import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * HTTP load from this process, e.g. 200 connections for 10 seconds: closed loop through autocannon (each connection
 * sends its next request when the previous one is answered), or with `rate` an open loop at that steady rate
 * (`steadyLoad`).
 */
export async function load(
  url: string,
  options: {
    connections?: number;
    seconds?: number;
    headers?: Record<string, string>;
    method?: 'GET' | 'POST';
    body?: string;
    rate?: number;
  } = {},
): Promise<LoadResult> {
  if (options.rate) return steadyLoad(url, { ...options, rate: options.rate });
  const result = await autocannon({
    url,
    connections: options.connections ?? 200,
    duration: options.seconds ?? 10,
    method: options.method ?? 'GET',
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/**
 * An open loop at a steady rate: request i is due at start + i / rate and is sent then (or at once, if the loop fell
 * behind), whatever the answers before it; its latency counts from when it was due, so waiting for a free connection
 * counts too. autocannon's `overallRate` is not this: each of its connections sends its share of a second back to back
 * at the start of the second and then pauses, so "1,000 req/s" was a burst of 1,000 at 200 connections every second.
 */
export async function steadyLoad(
  url: string,
  options: {
    rate: number;
    connections?: number;
    seconds?: number;
    headers?: Record<string, string>;
    method?: 'GET' | 'POST';
    body?: string;
  },
): Promise<LoadResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: options.connections ?? 200 });
  const total = Math.round(options.rate * (options.seconds ?? 10));
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const answers: Array<Promise<void>> = [];
  const start = performance.now() + 5;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, Math.floor(wait)));
    answers.push(
      pool
        .request({
          path: target.pathname + target.search,
          method: options.method ?? 'GET',
          headers: options.headers,
          body: options.body,
        })
        .then(async (response) => {
          await response.body.dump();
          latencies.push(performance.now() - due);
          if (response.statusCode < 200 || response.statusCode >= 300) non2xx++;
        })
        .catch(() => void errors++),
    );
  }
  await Promise.all(answers);
  const elapsedMs = performance.now() - start;
  await pool.close();
  latencies.sort((a, b) => a - b);
  // tenths of a millisecond: at a steady rate the tail is a few ms, where whole ms would be a 15 % step
  const at = (q: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10) / 10;
  return {
    rps: Math.round((latencies.length * 1000) / elapsedMs),
    p50: at(0.5),
    p99: at(0.99),
    errors,
    non2xx,
  };
}
