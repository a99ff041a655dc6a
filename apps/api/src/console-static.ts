import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Where `npm run build` puts the console (apps/console, built by Vite). */
export const CONSOLE_DIR = join(process.cwd(), 'dist', 'console');

/**
 * Serves the console at /app/: hashed assets cached for a year, index.html never cached, and index.html for any
 * other page path under /app/ (the SPA's own routes) when a browser asks for HTML. Everything else keeps the
 * API's JSON 404. Registered in its own /app scope, so its not-found handler does not touch the API's.
 */
export function registerConsole(fastify: FastifyInstance, root = CONSOLE_DIR): boolean {
  if (!existsSync(join(root, 'index.html'))) return false;
  fastify.get('/app', (_request, reply) => reply.redirect('/app/', 302));
  fastify.register(
    async (scope) => {
      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        wildcard: true,
        index: ['index.html'],
        cacheControl: false,
        setHeaders: (reply, path) => {
          reply.header(
            'cache-control',
            path.includes(join(root, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache',
          );
        },
      });
      scope.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
        const path = request.url.split('?')[0];
        const isPage =
          (request.method === 'GET' || request.method === 'HEAD') &&
          !path.startsWith('/app/assets/') &&
          !/\.[a-z0-9]+$/i.test(path) &&
          String(request.headers.accept ?? '').includes('text/html');
        // The reply is not returned: Fastify would await it (a thenable), one more pair of 'close' listeners on a
        // response that @fastify/static's own layers already await, and Node warns about a leak past ten.
        if (isPage) void reply.header('cache-control', 'no-cache').sendFile('index.html');
        else
          void reply
            .code(404)
            .send({ message: `Cannot ${request.method} ${path}`, error: 'Not Found', statusCode: 404 });
      });
    },
    { prefix: '/app' },
  );
  return true;
}
