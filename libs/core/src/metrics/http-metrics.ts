import type { FastifyInstance } from 'fastify';
import { httpRequestDuration } from './metrics';

/** Every answered request into switchboard_http_request_duration_seconds (route = the pattern, e.g. /v2/contacts/:contact_id). */
export function installHttpMetrics(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    if (route !== '/metrics')
      httpRequestDuration.observe(
        { method: request.method, route, status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    done();
  });
}
