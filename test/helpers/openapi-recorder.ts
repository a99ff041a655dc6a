import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appendFileSync } from 'node:fs';

/**
 * With SWITCHBOARD_OPENAPI_RECORD=<file>, every exchange a test makes is appended to that file (one JSON line: method,
 * OpenAPI path, status, request and response bodies). scripts/openapi-examples.ts turns a recording into the examples
 * of apps/api/src/openapi/recorded-examples.json, so the document's examples are what the API really answered.
 */
export function recordExchanges(app: NestFastifyApplication, file: string): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', async (request, reply, payload) => {
      const route = request.routeOptions?.url;
      if (!route || typeof payload !== 'string') return payload;
      const contentType = String(reply.getHeader('content-type') ?? '');
      if (!contentType.includes('json')) return payload;
      let response: unknown;
      try {
        response = JSON.parse(payload);
      } catch {
        return payload;
      }
      const line = {
        method: request.method.toLowerCase(),
        path: route.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
        status: reply.statusCode,
        request: request.body ?? null,
        response,
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
      return payload;
    });
}
