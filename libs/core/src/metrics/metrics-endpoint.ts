import { timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '../config/config';

/**
 * Who may read /metrics: with METRICS_TOKEN set, only `Authorization: Bearer <token>`; without it, anyone outside
 * production and nobody in production (the endpoint answers 404 there: not public without a token).
 */
export function metricsAccess(
  config: AppConfig,
  authorization: string | undefined,
): 'ok' | 'unauthorized' | 'disabled' {
  const token = config.METRICS_TOKEN;
  if (!token) return config.isProduction ? 'disabled' : 'ok';
  const given = Buffer.from((authorization ?? '').replace(/^Bearer\s+/i, ''));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'ok' : 'unauthorized';
}
