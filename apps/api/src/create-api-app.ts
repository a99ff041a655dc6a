import multipart from '@fastify/multipart';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { csrfPrecheck } from '@switchboard/auth';
import {
  AllExceptionsFilter,
  AppConfig,
  createLogger,
  createValidationPipe,
  installHttpMetrics,
  installRequestRules,
  PinoLoggerService,
} from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiModule } from './api.module';
import { completeDocument } from './openapi/complete-document';
import { registerConsole } from './console-static';
import { DrainingFastifyAdapter } from './http-drain';
import { installRequestIds, requestLoggingOptions } from './request-logging';
import { installSecurityHeaders } from './security-headers';

const BODY_LIMIT = 1024 * 1024;

/**
 * TRUST_PROXY for Fastify. Addresses/CIDRs go as they are. Fastify 5.12 treats a bare hop count as "trust nobody" (it
 * cannot check the peer), so a count becomes proxy-addr's hop rule as a function: the nearest `hops` addresses are
 * proxies. Only safe when nothing but those proxies can reach the API (docs/security.md).
 */
function trustProxyOption(
  setting: boolean | number | string[],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  const hops = setting;
  return (_address, hop) => hop < hops;
}

/**
 * Builds the API application (not listening yet): used by main.ts and by the e2e tests. `logger`: the process's
 * logger (createLogger), shared with an in-process worker in tests.
 */
export async function createApiApp(
  config: AppConfig,
  logger: PinoLoggerService = createLogger(config),
): Promise<NestFastifyApplication> {
  // app.close() first drains HTTP (SHUTDOWN_TIMEOUT_MS), then the modules close their pools: see http-drain.ts
  const adapter = new DrainingFastifyAdapter(
    {
      // the process's pino logger; request ids from X-Request-Id; one access line per request (request-logging.ts)
      ...requestLoggingOptions(logger.pino),
      bodyLimit: BODY_LIMIT,
      routerOptions: { maxParamLength: 2048 }, // refresh tokens travel in the logout path
      // TRUST_PROXY: off by default, so X-Forwarded-For from anyone is ignored (docs/security.md)
      trustProxy: trustProxyOption(config.trustProxy),
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
  installRequestIds(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(config), adapter, {
    logger,
    rawBody: true,
    abortOnError: false, // a failed start throws (main.ts prints it and exits) instead of aborting the process
    bodyParser: false, // installRequestRules registers the only body parser (JSON)
  });
  installRequestRules(app, { bodyLimit: BODY_LIMIT });
  // multipart/form-data (contact imports): parsed lazily by the route, which streams the file and sets its own limits
  await app.register(multipart, { limits: { fileSize: config.CONTACT_IMPORT_MAX_BYTES, files: 1 } });
  app.getHttpAdapter().getInstance().addHook('onRequest', refuseMultipartOutsideUploads);
  await installSecurityHeaders(app);
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new AllExceptionsFilter());
  app.getHttpAdapter().getInstance().addHook('onRequest', csrfPrecheck);
  installHttpMetrics(app.getHttpAdapter().getInstance()); // GET /metrics: latency by route (docs/observability.md)
  registerConsole(app.getHttpAdapter().getInstance()); // the web console at /app/ (when built)

  const document = completeDocument(
    SwaggerModule.createDocument(
      app,
      new DocumentBuilder()
        .setTitle('Switchboard API')
        .setDescription(
          'Messaging business API and workflow automation on the WhatsApp Business Platform. Send the access token from POST /v1/authenticate in the Authorization header.',
        )
        .setVersion('1')
        .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization' }, 'access-token')
        .addSecurityRequirements('access-token')
        .build(),
    ),
  );
  SwaggerModule.setup('docs', app, document);
  return app;
}

/** The routes that take multipart/form-data; every other route's body is JSON only (415, as before multipart existed). */
const MULTIPART_ROUTES = new Set(['POST /v2/contacts/imports']);

function refuseMultipartOutsideUploads(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const type = request.headers['content-type'];
  if (
    !type ||
    !type.toLowerCase().startsWith('multipart/') ||
    MULTIPART_ROUTES.has(`${request.method} ${request.routeOptions.url ?? ''}`)
  ) {
    done();
    return;
  }
  void reply
    .code(415)
    .send({ statusCode: 415, message: 'Unsupported media type: send the request body as application/json' });
}
