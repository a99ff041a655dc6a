import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';

const STATE = Symbol('httpDrainState');
interface RequestState {
  handler: 'not started' | 'running' | 'finished';
  /** still counted in `pending` */
  counted: boolean;
}
type TrackedRequest = { [STATE]?: RequestState };

/**
 * Graceful stop of the HTTP side, run by `app.close()` before any module's shutdown hook (Nest calls the adapter's
 * `beforeClose` first), so the database pool and Redis outlive every request that still uses them:
 *
 * 1. stop accepting connections; requests arriving on open keep-alive connections get 503 with `Connection: close`;
 * 2. wait for every request received to be handled: until its route handler returns, including handlers whose client
 *    has already gone away (they still query the database: counting sockets or responses would miss them);
 * 3. once no handler runs: close event streams (SSE; clients reconnect elsewhere with Last-Event-ID), let responses
 *    still being written finish, close keep-alive connections as they become idle.
 *
 * After `timeoutMs` the remaining connections are destroyed and the handlers are no longer waited for.
 */
export class HttpDrain {
  /** Requests received and not done: their handler runs or is still to run. */
  private pending = 0;
  private readonly replies = new Set<FastifyReply>();
  private idle: Array<() => void> = [];
  private draining = false;

  constructor(private readonly timeoutMs: () => number) {}

  /** Must be called before the routes are registered (before `app.init()` / `listen()`). */
  install(fastify: FastifyInstance): void {
    const drain = this;
    fastify.addHook('onRoute', (route) => {
      const handler = route.handler;
      route.handler = function trackedHandler(this: unknown, request, reply) {
        return drain.runHandler(request.raw, () => handler.call(this as FastifyInstance, request, reply));
      } as typeof handler;
    });
    fastify.addHook('onRequest', (request, reply, done) => {
      if (this.draining) {
        void reply.code(503).header('connection', 'close').send({
          statusCode: 503,
          message: 'The server is shutting down: retry on another instance',
        });
        return;
      }
      const state: RequestState = { handler: 'not started', counted: true };
      (request.raw as TrackedRequest)[STATE] = state;
      this.pending++;
      this.replies.add(reply);
      reply.raw.once('close', () => {
        this.replies.delete(reply);
        // answered without a handler (404, refused by a hook) or the client left before its handler started
        if (state.handler === 'not started') this.done(state);
      });
      done();
    });
  }

  /** Requests received whose handler has not finished (tests wait on it). */
  get inFlight(): number {
    return this.pending;
  }

  private async runHandler<T>(raw: object, run: () => T | Promise<T>): Promise<T> {
    let state = (raw as TrackedRequest)[STATE];
    if (!state || !state.counted) {
      // not seen by onRequest, or already given up as done: count it for the time it runs
      state = { handler: 'not started', counted: true };
      this.pending++;
    }
    state.handler = 'running';
    try {
      return await run();
    } finally {
      state.handler = 'finished';
      this.done(state);
    }
  }

  private done(state: RequestState): void {
    if (!state.counted) return;
    state.counted = false;
    this.pending--;
    if (this.pending === 0) for (const wake of this.idle.splice(0)) wake();
  }

  private handlersDone(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async drain(fastify: FastifyInstance): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    const server = fastify.server;
    const closed = server.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs());
    });
    // Event streams (SSE) are closed, now and as they start: EventSource clients reconnect to another instance with
    // Last-Event-ID. Their handlers are not waited for (Nest's @Sse handler only returns when the stream ends).
    const closeStreams = () => {
      for (const reply of this.replies) {
        if (!isEventStream(reply)) continue;
        const state = (reply.request.raw as TrackedRequest)[STATE];
        if (state) this.done(state);
        reply.raw.destroy();
      }
    };
    closeStreams();
    // Keep-alive connections are closed as soon as they are idle.
    server.closeIdleConnections();
    const ticker = setInterval(() => {
      closeStreams();
      server.closeIdleConnections();
    }, 50);
    try {
      // Every request received is answered (its handler finished), then responses still being written finish.
      if ((await Promise.race([this.handlersDone().then(() => 'done' as const), timedOut])) === 'done')
        await Promise.race([closed, timedOut]);
    } finally {
      clearInterval(ticker);
      clearTimeout(timer);
      server.closeAllConnections();
    }
  }
}

/** A Server-Sent Events response: its type set through Fastify (LiveEvents) or written by Nest's @Sse. */
function isEventStream(reply: FastifyReply): boolean {
  const type = reply.getHeader('content-type') ?? reply.raw.getHeader('content-type');
  const written = (reply.raw as { _header?: string | null })._header ?? '';
  return /text\/event-stream/i.test(`${String(type ?? '')}\n${written}`);
}

/** Fastify adapter whose `beforeClose` (the first step of `app.close()`) drains HTTP: see HttpDrain. */
export class DrainingFastifyAdapter extends FastifyAdapter {
  readonly drain: HttpDrain;

  constructor(options: FastifyServerOptions, shutdownTimeoutMs: number) {
    super(options);
    this.drain = new HttpDrain(() => shutdownTimeoutMs);
    this.drain.install(this.getInstance());
  }

  override async beforeClose(): Promise<void> {
    super.beforeClose();
    await this.drain.drain(this.getInstance());
  }
}
