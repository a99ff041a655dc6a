import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger as Pino, type LoggerOptions } from 'pino';
import type { AppConfig } from './config/config';
import { currentRequestId } from './request-context';

/** A child logger that already carries `requestId` in its bindings (Fastify's per-request loggers). */
const BOUND_REQUEST_ID = Symbol('boundRequestId');

export type LogSettings = Pick<AppConfig, 'LOG_LEVEL' | 'LOG_FORMAT'>;

/**
 * The process's one pino logger: one JSON object per line (`level`, `time`, `pid`, `context`, `requestId` inside a
 * request or a job it enqueued, `msg`, then fields), or coloured lines with LOG_FORMAT=pretty (pino-pretty, a dev
 * dependency). `destination` (tests) receives the lines instead of stdout. See docs/observability.md, Logs.
 */
export function createPino(settings: LogSettings, destination?: DestinationStream): Pino {
  const options: LoggerOptions = {
    level: settings.LOG_LEVEL,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: (_fields, _level, logger) => {
      const requestId = (logger as unknown as Record<symbol, boolean>)[BOUND_REQUEST_ID]
        ? undefined
        : currentRequestId();
      return requestId ? { requestId } : {};
    },
  };
  return pino(options, destination ?? (settings.LOG_FORMAT === 'pretty' ? prettyStream() : undefined));
}

/** A child of `logger` whose lines carry this request id (without the mixin adding it a second time). */
export function requestLogger(logger: Pino, requestId: string): Pino {
  const child = logger.child({ requestId });
  (child as unknown as Record<symbol, boolean>)[BOUND_REQUEST_ID] = true;
  return child;
}

function prettyStream(): DestinationStream | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- dev dependency: absent from production installs
    const pretty = require('pino-pretty') as (options: object) => DestinationStream;
    return pretty({
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      messageFormat: '{if context}[{context}] {end}{msg}{if requestId} ({requestId}){end}',
      ignore: 'pid,hostname,context,requestId',
    });
  } catch {
    process.stderr.write('LOG_FORMAT=pretty needs pino-pretty (a dev dependency): logging JSON instead\n');
    return undefined;
  }
}

const STACK = /\n\s+at /;

/**
 * Nest's LoggerService over the process's pino logger: `new Logger('Context').log(...)` anywhere in the code, and Nest's
 * own lines, come out in the same format as the HTTP access lines. Nest passes the context as the last argument, and
 * for `error` a stack before it.
 */
export class PinoLoggerService implements LoggerService {
  /** Nest's start-up chatter (one line per module and route): debug, so `info` shows what an operator needs. */
  private static readonly QUIET_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

  constructor(readonly pino: Pino) {}

  log(message: unknown, ...params: unknown[]) {
    const context = params[params.length - 1];
    const quiet = typeof context === 'string' && PinoLoggerService.QUIET_CONTEXTS.has(context);
    this.write(quiet ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]) {
    this.write('fatal', message, params);
  }

  private write(level: pino.Level, message: unknown, params: unknown[]) {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const rest = [...params];
    const last = rest[rest.length - 1];
    // the trailing string is the context, unless it is the stack of an error(message, stack) without one
    if (typeof last === 'string' && !STACK.test(last)) fields.context = rest.pop();
    if (level === 'error' || level === 'fatal') {
      const stack = rest[0];
      if (stack === undefined || (typeof stack === 'string' && STACK.test(stack))) {
        rest.shift();
        if (stack) fields.stack = stack;
      }
    }
    if (rest.length) fields.params = rest;
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, message.message);
    } else if (message && typeof message === 'object') {
      const { msg, message: text, ...more } = message as Record<string, unknown>;
      this.pino[level]({ ...fields, ...more }, String(msg ?? text ?? ''));
    } else {
      this.pino[level](fields, String(message));
    }
  }
}

/** The process's logger for Nest (NestFactory `logger`); its `.pino` is given to Fastify. */
export function createLogger(settings: LogSettings, destination?: DestinationStream): PinoLoggerService {
  return new PinoLoggerService(createPino(settings, destination));
}

/** Query parameters and route parameters whose values are never logged (tokens in a logout path, a verify token…). */
const SECRET_NAME = /token|secret|password|signature|key/i;

/**
 * The request URL for a log line, with the values of secret-looking query parameters replaced, and those of
 * secret-looking route parameters when the route pattern (`/v1/logout/:refreshToken`) is given.
 */
export function logUrl(url: string, route?: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (route?.includes(':')) {
    const pattern = route.split('/');
    const segments = path.split('/');
    if (pattern.length === segments.length)
      path = segments
        .map((segment, i) => (pattern[i].startsWith(':') && SECRET_NAME.test(pattern[i]) ? 'REDACTED' : segment))
        .join('/');
  }
  if (q === -1) return path;
  const query = new URLSearchParams(url.slice(q + 1));
  const secret = [...new Set(query.keys())].filter((key) => SECRET_NAME.test(key));
  if (!secret.length) return `${path}${url.slice(q)}`;
  for (const key of secret) query.set(key, 'REDACTED');
  return `${path}?${query}`;
}
