import { BadRequestException, HttpException, NotFoundException, UnauthorizedException } from '@nestjs/common';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { errorBody } from './error-body';

/** The one error shape (docs/errors.md), for what the e2e tests cannot easily provoke. */
function answer(exception: unknown): { status: number; body: unknown; headers?: Record<string, string> } {
  const sent: { status: number; body: unknown; headers?: Record<string, string> } = { status: 0, body: undefined };
  const chain = {
    header: (name: string, value: string) => ((sent.headers = { ...sent.headers, [name]: value }), chain),
    send: (b: unknown) => (sent.body = b),
  };
  const reply = { status: (s: number) => ((sent.status = s), chain) };
  const host = { switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ id: 'req-1', url: '/x' }) }) };
  new AllExceptionsFilter().catch(exception, host as never);
  return sent;
}

describe('errorBody / AllExceptionsFilter', () => {
  it('keeps SPEC members and adds statusCode, message and field', () => {
    expect(errorBody(401, { error: 'Invalid credentials' })).toEqual({
      statusCode: 401,
      message: 'Invalid credentials',
      error: 'Invalid credentials',
    });
    expect(errorBody(403, { message: 'Unauthorized to make this request', required_grant: '/contacts' })).toEqual({
      statusCode: 403,
      message: 'Unauthorized to make this request',
      required_grant: '/contacts',
    });
    expect(errorBody(400, { message: 'a', errors: [{ field: 'x.y', message: 'a' }] })).toEqual({
      statusCode: 400,
      message: 'a',
      field: 'x.y',
      errors: [{ field: 'x.y', message: 'a' }],
    });
    expect(errorBody(404, 'Workflow not found')).toEqual({ statusCode: 404, message: 'Workflow not found' });
    // a structured `error` member (terminus' failing checks) is kept
    expect(errorBody(503, { status: 'error', error: { redis: { status: 'down' } } })).toEqual({
      statusCode: 503,
      message: 'Service Unavailable',
      status: 'error',
      error: { redis: { status: 'down' } },
    });
  });

  it("drops Nest's generic error member and joins array messages", () => {
    expect(answer(new NotFoundException()).body).toEqual({ statusCode: 404, message: 'Not Found' });
    expect(answer(new BadRequestException(['a is bad', 'b is bad'])).body).toEqual({
      statusCode: 400,
      message: 'a is bad; b is bad',
    });
    expect(answer(new UnauthorizedException({ message: 'jwt expired' })).body).toEqual({
      statusCode: 401,
      message: 'jwt expired',
    });
  });

  it("maps Fastify's own client errors, also when Nest wraps them", () => {
    const tooLarge = Object.assign(new Error('Request body is too large'), {
      statusCode: 413,
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    });
    expect(answer(tooLarge)).toEqual({ status: 413, body: { statusCode: 413, message: 'Request body is too large' } });
    const media = Object.assign(new Error('Unsupported Media Type'), {
      statusCode: 415,
      code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    });
    expect(answer(new HttpException('Unsupported Media Type', 415, { cause: media }))).toEqual({
      status: 415,
      body: { statusCode: 415, message: 'Unsupported media type: send the request body as application/json' },
    });
  });

  it('a PostgreSQL data exception (class 22) is a 400, any other error a 500 that leaks nothing', () => {
    const outOfRange = Object.assign(new Error('value "100000000000000000000" is out of range for type bigint'), {
      name: 'QueryFailedError',
      driverError: { code: '22003' },
    });
    expect(answer(outOfRange)).toEqual({
      status: 400,
      body: { statusCode: 400, message: 'A value of the request is out of range or malformed for its field' },
    });
    const other = Object.assign(new Error('relation "x" does not exist'), {
      name: 'QueryFailedError',
      driverError: { code: '42P01' },
    });
    expect(answer(other)).toEqual({
      status: 500,
      body: { statusCode: 500, message: 'Internal server error', requestId: 'req-1' },
    });
  });

  it('a request body cut off by the client (an upload cancelled) is a 400, not a logged 500', () => {
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    expect(answer(aborted)).toEqual({ status: 400, body: { statusCode: 400, message: 'The request was aborted' } });
  });

  it('a deadlock or serialization failure (from TypeORM or pg) is a 503 with Retry-After, for a retry', () => {
    const retry = {
      status: 503,
      headers: { 'retry-after': '1' },
      body: { statusCode: 503, message: 'The request met a concurrent change; retry it', requestId: 'req-1' },
    };
    const deadlock = Object.assign(new Error('deadlock detected'), { name: 'error', severity: 'ERROR', code: '40P01' });
    expect(answer(deadlock)).toEqual(retry);
    const serialization = Object.assign(new Error('could not serialize access due to concurrent update'), {
      name: 'QueryFailedError',
      driverError: { code: '40001' },
    });
    expect(answer(serialization)).toEqual(retry);
    // the code alone, on an error that did not come from PostgreSQL, is not enough
    expect(answer(Object.assign(new Error('x'), { code: '40P01' })).status).toBe(500);
  });
});
