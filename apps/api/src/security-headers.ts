import helmet from '@fastify/helmet';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * The strict default: nothing but our own origin may load scripts, styles, images or connections, nothing may frame
 * our pages, no plugins, no <base> tricks. JSON responses carry it too (harmless, and it covers any HTML we serve).
 */
const STRICT_CSP = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'"],
};

/** Swagger UI at /docs writes <style> blocks and inline style attributes: only there are inline styles allowed. */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";

const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * Security headers on every response (docs/security.md): @fastify/helmet's defaults (X-Content-Type-Options, Referrer-Policy
 * no-referrer, X-Frame-Options, Cross-Origin-* …) with the CSP above; HSTS only when the request came over TLS
 * (directly, or through a trusted proxy's X-Forwarded-Proto, see TRUST_PROXY), never over plain HTTP.
 */
export async function installSecurityHeaders(app: NestFastifyApplication): Promise<void> {
  const headers = await helmetHeaders();
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      // on Fastify's reply, not the raw response: then Node writes all headers in one writeHead (a header set on the raw
      // response makes it re-validate and store every one)
      reply.headers(headers);
      if (request.url === '/docs' || request.url.startsWith('/docs/') || request.url.startsWith('/docs?'))
        reply.header('content-security-policy', DOCS_CSP);
      if (request.protocol === 'https') reply.header('strict-transport-security', HSTS);
      done(); // a plain callback, not an async hook: no promise per request (docs/performance.md, eighth round)
    });
}

/**
 * The headers @fastify/helmet sets with our options, taken once from a probe request: they are the same on every
 * response, and the plugin rebuilds helmet (parsing the CSP directives) on every request, ~4% of a read's CPU.
 */
async function helmetHeaders(): Promise<Record<string, string | number | string[]>> {
  const probe = Fastify({ logger: false });
  await probe.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: STRICT_CSP },
    strictTransportSecurity: false,
  });
  let headers: Record<string, string | number | string[]> = {};
  probe.get('/', async (_request, reply) => {
    headers = { ...reply.raw.getHeaders() } as typeof headers; // what helmet set on the response, nothing else yet
    return '';
  });
  await probe.inject('/');
  await probe.close();
  return headers;
}
