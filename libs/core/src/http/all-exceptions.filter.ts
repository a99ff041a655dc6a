import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * HttpExceptions keep their body (SPEC bodies such as `{error: "Invalid credentials"}` are thrown as-is).
 * Fastify's own client errors (bad JSON, body too large) stay 4xx. Anything else is a logged 500 that leaks nothing.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();

    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      void reply.status(exception.getStatus()).send(typeof body === 'string' ? { statusCode: exception.getStatus(), message: body } : body);
      return;
    }

    const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      const message = fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'Request body is too large' : fastifyError.message ?? 'Bad request';
      void reply.status(fastifyError.statusCode).send({ statusCode: fastifyError.statusCode, message });
      return;
    }

    this.logger.error({ msg: 'Unhandled error', reqId: request?.id, url: request?.url, err: exception instanceof Error ? exception.stack : exception });
    void reply.status(HttpStatus.INTERNAL_SERVER_ERROR).send({ statusCode: 500, message: 'Internal server error', requestId: request?.id });
  }
}
