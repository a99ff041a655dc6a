import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Closed-loop HTTP load from this process (autocannon), e.g. 200 connections for 10 seconds. */
export async function load(
  url: string,
  options: { connections?: number; seconds?: number; headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string } = {},
): Promise<LoadResult> {
  const result = await autocannon({ url, connections: options.connections ?? 200, duration: options.seconds ?? 10, headers: options.headers, method: options.method, body: options.body });
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}
