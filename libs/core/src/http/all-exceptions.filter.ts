import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { logUrl } from '../logging';
import { errorBody, fastifyClientError } from './error-body';

/**
 * Every error leaves in one shape (docs/errors.md): `{statusCode, message}`, plus `field` and `errors[]` when a field is
 * at fault, plus the members SPEC.md names for some errors (`error` of authenticate, `required_grant`, `missingGroups`…).
 * Fastify's own client errors (bad JSON, body too large, unsupported media type) stay 4xx in that shape. Anything else
 * is a logged 500 that leaks nothing.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();

    // Nest wraps Fastify's own 4xx errors in an HttpException whose cause is the Fastify error.
    const clientError = fastifyClientError(exception instanceof HttpException ? exception.cause : exception);
    if (clientError) {
      void reply.status(clientError.statusCode).send(clientError);
      return;
    }

    const where = { requestId: request?.id, url: request?.url && logUrl(request.url, request.routeOptions?.url) };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      void reply.status(status).send(errorBody(status, exception.getResponse()));
      return;
    }

    // Safety net: PostgreSQL's data exceptions (class 22: out of range, malformed number or date, bad character…) are
    // always caused by a value of the request that validation let through. A 400, logged so the rule can be added.
    if (isDataException(exception)) {
      this.logger.warn({
        msg: 'Input refused by PostgreSQL: add a validation rule',
        ...where,
        err: (exception as Error).message,
      });
      void reply
        .status(HttpStatus.BAD_REQUEST)
        .send({ statusCode: 400, message: 'A value of the request is out of range or malformed for its field' });
      return;
    }

    // The client went away mid-body (an upload cancelled): nobody reads the answer, and nothing failed on our side.
    if (isClientAbort(exception)) {
      this.logger.log({
        msg: 'Request aborted by the client',
        ...where,
      });
      void reply.status(HttpStatus.BAD_REQUEST).send({ statusCode: 400, message: 'The request was aborted' });
      return;
    }

    // A deadlock or serialization failure rolled its statement back: nothing of it was written, and the same request
    // a moment later succeeds. Tell the client to retry instead of reporting a failure.
    if (isTransientConflict(exception)) {
      this.logger.warn({
        msg: 'Request lost a database lock conflict; answered 503 for a retry',
        ...where,
        err: (exception as Error).message,
      });
      void reply
        .status(HttpStatus.SERVICE_UNAVAILABLE)
        .header('retry-after', '1')
        .send({ statusCode: 503, message: 'The request met a concurrent change; retry it', requestId: request?.id });
      return;
    }

    this.logger.error({
      msg: 'Unhandled error',
      ...where,
      err: exception instanceof Error ? exception.stack : exception,
    });
    void reply
      .status(HttpStatus.INTERNAL_SERVER_ERROR)
      .send({ statusCode: 500, message: 'Internal server error', requestId: request?.id });
  }
}

function errorCode(exception: unknown): string | undefined {
  const code =
    (exception as { code?: unknown; driverError?: { code?: unknown } } | undefined)?.driverError?.code ??
    (exception as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

function isDataException(exception: unknown): boolean {
  return (
    exception instanceof Error && exception.name === 'QueryFailedError' && !!errorCode(exception)?.startsWith('22')
  );
}

/** Node's error for a request body cut off by the client closing the connection. */
function isClientAbort(exception: unknown): boolean {
  return exception instanceof Error && exception.message === 'aborted' && errorCode(exception) === 'ECONNRESET';
}

/** 40P01 deadlock_detected, 40001 serialization_failure: from TypeORM (QueryFailedError) or from `pg` directly. */
function isTransientConflict(exception: unknown): boolean {
  const fromPostgres = exception instanceof Error && (exception.name === 'QueryFailedError' || 'severity' in exception);
  const code = errorCode(exception);
  return fromPostgres && (code === '40P01' || code === '40001');
}
