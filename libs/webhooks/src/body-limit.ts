import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

/** Bodies up to this size reach validation on the endpoint routes, so an oversized field is a 400 naming it. */
export const WEBHOOK_ENDPOINT_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * The API's global body limit (1 MiB) would answer a 2 MB `description` with a bare 413; on the webhook endpoint
 * routes the limit is raised so the validation pipe names the field. Registered before Nest adds its routes (the
 * provider is built before the router is), through Fastify's onRoute hook.
 */
@Injectable()
export class WebhookEndpointBodyLimit {
  constructor(adapterHost: HttpAdapterHost) {
    const fastify = adapterHost.httpAdapter?.getInstance?.();
    if (!fastify || typeof fastify.addHook !== 'function') return;
    fastify.addHook('onRoute', (route: { url: string; method: string | string[]; bodyLimit?: number }) => {
      if (route.url.startsWith('/v1/webhook-endpoints')) route.bodyLimit = WEBHOOK_ENDPOINT_BODY_LIMIT;
    });
  }
}
