import { acceptedRequestId, logUrl, requestLogger, runWithRequestId } from '@switchboard/core';
import {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Bindings, Logger as Pino } from 'pino';

/**
 * One access line per request at `debug` (method, url without secret query values, status, ms, requestId); a 5xx
 * at `error`. Fastify's own "incoming request" / "request completed" pair at `info` is not written.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override routeNotFound(): void {} // the access line says 404

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const failed = Boolean(error) || status >= 500;
    if (!failed && !(reply.log as unknown as Pino).isLevelEnabled('debug')) return;
    const line = {
      context: 'HTTP',
      method: request.method,
      url: logUrl(request.url, request.routeOptions.url),
      status,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    const msg = `${line.method} ${line.url} ${status}`;
    if (failed) reply.log.error(error ? { ...line, err: error } : line, msg);
    else reply.log.debug(line, msg);
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.statusCode >= 500) reply.log.error({ context: 'HTTP', err: error }, error.message);
    else reply.log.debug({ context: 'HTTP', err: error }, error.message);
  }
}

/**
 * Fastify's options for logging and request ids: the process's pino logger, the caller's X-Request-Id when it is
 * acceptable (acceptedRequestId) or a new one, and the access log above.
 */
export function requestLoggingOptions(logger: Pino) {
  return {
    loggerInstance: logger,
    requestIdHeader: false as const,
    genReqId: (req: IncomingMessage) => acceptedRequestId(req.headers['x-request-id']),
    logController: new AccessLog({ requestIdLogLabel: 'requestId' }),
    // Fastify's per-request logger: bound to the request id (logging.ts then does not add it a second time)
    childLoggerFactory: ((parent: Pino, bindings: Bindings) =>
      typeof bindings.requestId === 'string'
        ? requestLogger(parent, bindings.requestId)
        : parent.child(bindings)) as unknown as FastifyServerOptions['childLoggerFactory'],
  };
}

/**
 * Answers the request id in X-Request-Id and runs every route handler (Nest's whole pipeline: guards, pipes,
 * controller, exception filter) under it, so its log lines and the jobs it enqueues carry it. Must be installed before
 * the routes are registered. The handler is wrapped rather than a hook entering the context: body parsing runs in the
 * socket's async context and would lose it.
 */
export function installRequestIds(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function withRequestId(this: unknown, request, reply) {
      return runWithRequestId(request.id, () => handler.call(this as FastifyInstance, request, reply));
    } as typeof handler;
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}
