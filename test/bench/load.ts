import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * HTTP load from this process (autocannon), e.g. 200 connections for 10 seconds: closed loop (each connection sends its
 * next request when the previous one is answered), or at most `rate` requests per second over all connections.
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
  const result = await autocannon({
    url,
    connections: options.connections ?? 200,
    duration: options.seconds ?? 10,
    method: options.method ?? 'GET',
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.rate ? { overallRate: options.rate } : {}),
  });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}
