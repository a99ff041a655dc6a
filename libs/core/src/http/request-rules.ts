import { BadRequestException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { forbiddenTextProblem, jsonStructureProblem, jsonTextMayHoldForbidden } from './input-rules';
import { validationException } from './validation';

/** Set by the JSON parser on a request whose body text has no `\u` escape: its strings need no character walk. */
const BODY_TEXT_CLEAN = Symbol('bodyTextClean');
type ParsedRequest = FastifyRequest & { [BODY_TEXT_CLEAN]?: true };

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
    (request: FastifyRequest, body: Buffer, done: (error: Error | null, value?: unknown) => void) => {
      const text = body.toString('utf8');
      let parsed: unknown;
      try {
        parsed = parseJsonBody(text);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (!jsonTextMayHoldForbidden(text)) (request as ParsedRequest)[BODY_TEXT_CLEAN] = true;
      done(null, parsed);
    },
  );
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  fastify.addHook('preValidation', (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
    const problem =
      forbiddenTextProblem(request.params) ??
      forbiddenTextProblem(request.query) ??
      ((request as ParsedRequest)[BODY_TEXT_CLEAN] ? undefined : forbiddenTextProblem(request.body));
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
