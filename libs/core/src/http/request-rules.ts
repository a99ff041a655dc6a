import { BadRequestException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { forbiddenTextProblem, jsonStructureProblem } from './input-rules';
import { validationException } from './validation';

/**
 * The input rules every route shares, applied before any route code or validation runs (docs/errors.md):
 * - bodies are JSON (SPEC §1.2): `application/json` is the only body type parsed, anything else is 415;
 * - an empty JSON body is `{}` (e.g. POST /v1/authenticate, which takes only headers);
 * - a body nested deeper than 64 levels, or with `__proto__` / `constructor.prototype` keys, is 400 naming the field;
 * - no string in the path, the query or the body may hold NUL or an unpaired surrogate (PostgreSQL refuses both): 400.
 * Call before the app is initialised (listen/init).
 */
export function installRequestRules(app: NestFastifyApplication, options: { bodyLimit: number }): void {
  app.useBodyParser(
    'application/json',
    { bodyLimit: options.bodyLimit },
    (_request: unknown, body: Buffer, done: (error: Error | null, value?: unknown) => void) => {
      let parsed: unknown;
      try {
        parsed = parseJsonBody(body);
      } catch (error) {
        done(error as Error);
        return;
      }
      done(null, parsed);
    },
  );
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  fastify.addHook('preValidation', (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
    const problem =
      forbiddenTextProblem(request.params) ?? forbiddenTextProblem(request.query) ?? forbiddenTextProblem(request.body);
    done(problem ? validationException([problem]) : undefined);
  });
}

export function parseJsonBody(raw: Buffer | string): unknown {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequestException({ statusCode: 400, message: 'The request body is not valid JSON' });
  }
  const problem = jsonStructureProblem(value);
  if (problem) throw validationException([problem]);
  return value;
}
