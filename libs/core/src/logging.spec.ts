import { Logger } from '@nestjs/common';
import { createLogger, logUrl, requestLogger, type LogSettings } from './logging';
import { acceptedRequestId, inJobContext, runWithRequestId, withRequestId } from './request-context';

function capture(settings: Partial<LogSettings> = {}) {
  const raw: string[] = [];
  const logger = createLogger(
    { LOG_LEVEL: 'trace', LOG_FORMAT: 'json', ...settings },
    { write: (line: string) => void raw.push(line) },
  );
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, raw, lines };
}

describe('logging', () => {
  it("writes Nest's calls as one JSON shape: level, time, pid, context, msg, fields", () => {
    const { logger, lines } = capture();
    logger.log('started', 'Worker');
    logger.warn({ msg: 'slow', ms: 12 }, 'Pacer');
    logger.debug('detail');
    logger.verbose('very detailed', 'X');
    expect(lines()).toEqual([
      { level: 'info', time: expect.any(String), pid: process.pid, context: 'Worker', msg: 'started' },
      { level: 'warn', time: expect.any(String), pid: process.pid, context: 'Pacer', ms: 12, msg: 'slow' },
      { level: 'debug', time: expect.any(String), pid: process.pid, msg: 'detail' },
      { level: 'trace', time: expect.any(String), pid: process.pid, context: 'X', msg: 'very detailed' },
    ]);
    expect(Date.parse(lines()[0].time as string)).not.toBeNaN();
  });

  it('tells an error stack from a context, as Nest passes them', () => {
    const { logger, lines } = capture();
    const stack = new Error('boom').stack!;
    logger.error('failed', stack, 'Sender'); // new Logger('Sender').error('failed', stack)
    logger.error('failed', undefined, 'Sender'); // new Logger('Sender').error('failed')
    logger.error('failed', stack); // Logger.error('failed', stack) without a context
    logger.error(new Error('thrown'), 'Sender');
    const [withStack, plain, noContext, thrown] = lines();
    expect(withStack).toMatchObject({ level: 'error', context: 'Sender', msg: 'failed', stack });
    expect(plain).toEqual({
      level: 'error',
      time: expect.any(String),
      pid: process.pid,
      context: 'Sender',
      msg: 'failed',
    });
    expect(noContext).toMatchObject({ msg: 'failed', stack });
    expect(noContext.context).toBeUndefined();
    expect(thrown).toMatchObject({ context: 'Sender', msg: 'thrown', err: { type: 'Error', message: 'thrown' } });
  });

  it("Nest's start-up chatter (modules, routes) is debug; the rest of Nest's lines stay info", () => {
    const { logger, lines } = capture({ LOG_LEVEL: 'info' });
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('Mapped {/health, GET} route', 'RouterExplorer');
    logger.log('Nest application successfully started', 'NestApplication');
    expect(lines().map((l) => l.msg)).toEqual(['Nest application successfully started']);
  });

  it('honours LOG_LEVEL, silent included', () => {
    const warn = capture({ LOG_LEVEL: 'warn' });
    warn.logger.log('no');
    warn.logger.warn('yes');
    expect(warn.lines().map((l) => l.msg)).toEqual(['yes']);
    const silent = capture({ LOG_LEVEL: 'silent' });
    silent.logger.fatal('no');
    silent.logger.error('no');
    expect(silent.raw).toEqual([]);
  });

  it('adds the request id inside a request or job, once, also on a logger already bound to it', () => {
    const { logger, raw, lines } = capture();
    runWithRequestId('req-1', () => {
      logger.log('inside', 'A');
      requestLogger(logger.pino, 'req-1').info('bound');
    });
    logger.log('outside', 'A');
    inJobContext({ data: withRequestId({ x: 1 }) }, () => logger.log('job without id'));
    runWithRequestId('req-2', () => inJobContext({ data: withRequestId({ x: 1 }) }, () => logger.log('job')));
    expect(lines().map((l) => [l.msg, l.requestId])).toEqual([
      ['inside', 'req-1'],
      ['bound', 'req-1'],
      ['outside', undefined],
      ['job without id', undefined],
      ['job', 'req-2'],
    ]);
    expect(raw[1].match(/"requestId"/g)).toHaveLength(1);
  });

  it('Nest Logger instances anywhere write through it once it is the app logger', () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(logger);
    try {
      new Logger('Somewhere').warn('through pino');
    } finally {
      Logger.overrideLogger(true);
    }
    expect(lines()).toEqual([
      { level: 'warn', time: expect.any(String), pid: process.pid, context: 'Somewhere', msg: 'through pino' },
    ]);
  });
});

describe('acceptedRequestId', () => {
  it.each(['abc-123', 'A.b_c-9', 'x'.repeat(128)])('keeps %s', (id) => expect(acceptedRequestId(id)).toBe(id));
  it.each([undefined, '', 'a b', 'x'.repeat(129), 'a/b', 'ü', 'a\nb'])('replaces %p with a UUID', (id) => {
    expect(acceptedRequestId(id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
  it('replaces a repeated header (an array)', () => {
    expect(acceptedRequestId(['a', 'b'])).not.toBe('a');
  });
});

describe('logUrl', () => {
  it('replaces the values of secret query parameters and keeps the others', () => {
    expect(logUrl('/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=s3cret&hub.challenge=7')).toBe(
      '/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=REDACTED&hub.challenge=7',
    );
    expect(logUrl('/embed/x?token=abc&page=2')).toBe('/embed/x?token=REDACTED&page=2');
    expect(logUrl('/v2/contacts?page=2&search=ann%20b')).toBe('/v2/contacts?page=2&search=ann%20b');
    expect(logUrl('/health')).toBe('/health');
  });

  it('replaces secret route parameters when the route is known', () => {
    expect(logUrl('/v1/logout/eyJhbGciOi.abc', '/v1/logout/:refreshToken')).toBe('/v1/logout/REDACTED');
    expect(logUrl('/v2/contacts/12?x=1', '/v2/contacts/:contact_id')).toBe('/v2/contacts/12?x=1');
  });
});
