import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import { Observable } from 'rxjs';
import { PassThrough } from 'node:stream';
import { MicroBatcher } from '../batching/micro-batcher';
import { AppConfig } from '../config/config';
import { closeRedis } from '../redis/redis';
import { REDIS } from '../redis/redis.module';
import { compareStreamIds, isStreamId } from './stream-ids';
import { ACCESS_ENDED, type AccessCheck, accessCheckOf, watchAccess } from './access-check';

/** One event of a topic: `id` is its Redis stream id (the SSE `id:`, what a client resumes from). */
export interface LiveEvent {
  id: string;
  event: string;
  /** The payload as published (JSON-serialisable). */
  data: unknown;
}

export interface SseOptions {
  /** Resume after this id (default: the request's `Last-Event-ID` header, then its `lastEventId` query parameter). */
  lastEventId?: string;
  /** Only events this returns true for are written (e.g. a session's scope); the others are skipped, not lost. */
  filter?: (event: LiveEvent) => boolean;
  /** Comment line interval (default 15 s). */
  heartbeatMs?: number;
  /**
   * The state now, for this client only (not published to the topic, where it could arrive after a newer one): read
   * once listening has started and written before any live event, without an `id:` (not a resume position).
   */
  initial?: () => Promise<{ event: string; data: unknown } | null>;
  /**
   * Whether the reader may still read (its session not expired, its client not revoked): asked every
   * LIVE_EVENTS_RECHECK_MS; on false the stream ends with an `end` event (a failed check says nothing: asked again at
   * the next tick). Guards run only when it opens.
   * Default: the check the authentication guard attached to the request (accessCheckOf).
   */
  stillValid?: AccessCheck;
}

/** Events kept per topic for resuming (XADD MAXLEN ~): about this many, the oldest trimmed first. */
export const LIVE_EVENTS_KEPT_PER_TOPIC = 1000;
/** A topic's stream is dropped this long after its last event (unless its publisher says otherwise). */
const TOPIC_TTL_MS = 24 * 3600_000;
/** A comment line this often keeps proxies and browsers from closing an idle stream. */
export const LIVE_EVENTS_HEARTBEAT_MS = 15_000;

/**
 * XADD (bounded) and PUBLISH in one step, so the order of the notifications is the order of the stream and a
 * subscriber never sees an event the stream does not hold. The notification is `id \n event \n data`. One call
 * publishes the events of one moment, in order (KEYS: their streams; ARGV: the bound, then event, data, TTL and
 * channel of each), and answers their ids.
 */
const PUBLISH_SCRIPT = `
local ids = {}
for i = 1, #KEYS do
  local a = 1 + (i - 1) * 4
  local id = redis.call('XADD', KEYS[i], 'MAXLEN', '~', ARGV[1], '*', 'event', ARGV[a + 1], 'data', ARGV[a + 2])
  redis.call('PEXPIRE', KEYS[i], ARGV[a + 3])
  redis.call('PUBLISH', ARGV[a + 4], id .. '\\n' .. ARGV[a + 1] .. '\\n' .. ARGV[a + 2])
  ids[i] = id
end
return ids`;

/**
 * Topics published with `publishIfWatched` get events only while a client streams them. A stream (or `changes()`)
 * marks its topic watched for this long, again every WATCH_REFRESH_MS while it is open, and announces it at once on
 * the watch channel; a publisher reads a topic's mark at most every WATCH_RECHECK_MS otherwise.
 */
const WATCH_TTL_MS = 30_000;
const WATCH_REFRESH_MS = 10_000;
const WATCH_RECHECK_MS = 5_000;
/** What a skip notifies on the topic's channel: a `reset` without a stream id (nothing of it was kept). */
const SKIPPED_EVENT = 'reset';
const SKIPPED_DATA = JSON.stringify({ reason: 'events_not_kept' });

/** Marks the topics watched (KEYS: their marks; ARGV: TTL, the watch channel or '' to tell nobody, the topics). */
const WATCH_SCRIPT = `
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], '1', 'PX', ARGV[1])
  if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], ARGV[2 + i]) end
end
return #KEYS`;

/**
 * Records that events of these topics were not kept (KEYS: their skip marks; ARGV: the notification, then each topic's
 * channel and TTL), at Redis's time in ms, and tells any listener at once: a stream that opened just before the
 * publisher heard of it then resets its client. A mark lives as long as the topic's events would have.
 */
const SKIP_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], now, 'PX', ARGV[2 * i + 1])
  redis.call('PUBLISH', ARGV[2 * i], ARGV[1])
end
return now`;

interface Publication {
  topic: string;
  event: string;
  data: unknown;
  ttlMs: number;
  /** kept only while a client streams the topic (publishIfWatched) */
  whenWatched: boolean;
}

type Listener = (event: LiveEvent) => void;

/**
 * Live updates for browsers, shared by every module (inbox, run view, template status, campaign live view).
 *
 * `publish(topic, event, data)` appends to a Redis stream per topic (bounded) and notifies over pub/sub; any process
 * may publish (API or worker). `sse(request, reply, topic)` streams a topic as Server-Sent Events from whichever API
 * process the browser reached: the `id:` of each event is its stream id, a reconnect with `Last-Event-ID` replays what
 * was missed from the stream (XRANGE) before going live, a comment line every 15 s keeps the connection open. Each
 * process holds one subscriber connection and fans each notification out to its local clients.
 */
@Injectable()
export class LiveEvents implements OnModuleDestroy {
  private readonly logger = new Logger('LiveEvents');
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly subscriptions = new Map<string, Promise<unknown>>();
  private readonly openStreams = new Set<() => void>();
  /** What ends each `changes()` subscription (after a reconnect of the subscriber, see subscriberConnection). */
  private readonly openChanges = new Set<() => void>();
  /** The events published in one moment go to Redis in one call (a webhook's 100 statuses: 100 inbox events). */
  private readonly publications = new MicroBatcher((items: Publication[]) => this.publishMany(items), {
    maxItems: 500,
  });
  /** Topics streamed by this process's clients (open streams and `changes()` per topic), marked watched in Redis. */
  private readonly watchedHere = new Map<string, number>();
  private watchRefresh: NodeJS.Timeout | null = null;
  /** What this process knows of other processes' watchers, per topic, and when it last read or heard it. */
  private readonly watchKnown = new Map<string, { watched: boolean; at: number }>();
  /** Topics whose events were just skipped without queueing them, recorded together (markSkips). */
  private readonly skipsToMark = new Map<string, number>();
  private skipMarks: Promise<void> | null = null;
  private watchNotices: Promise<unknown> | null = null;
  private readonly scripts: Redis & {
    sbLivePublish(numberOfKeys: number, ...args: Array<string | number>): Promise<string[]>;
    sbLiveWatch(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
    sbLiveSkip(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
  };

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {
    // sent by their SHA (EVALSHA; ioredis resends the text only after a NOSCRIPT), not as the whole script every time
    redis.defineCommand('sbLivePublish', { lua: PUBLISH_SCRIPT });
    redis.defineCommand('sbLiveWatch', { lua: WATCH_SCRIPT });
    redis.defineCommand('sbLiveSkip', { lua: SKIP_SCRIPT });
    this.scripts = redis as typeof this.scripts;
  }

  private async publishMany(items: Publication[]): Promise<string[]> {
    const watched = await this.watchedAmong([...new Set(items.filter((p) => p.whenWatched).map((p) => p.topic))]);
    const kept = items.filter((p) => !p.whenWatched || watched.has(p.topic));
    const skipped = new Map(items.filter((p) => p.whenWatched && !watched.has(p.topic)).map((p) => [p.topic, p.ttlMs]));
    const [ids] = await Promise.all([
      kept.length
        ? this.scripts.sbLivePublish(
            kept.length,
            ...kept.map((p) => this.key(p.topic)),
            LIVE_EVENTS_KEPT_PER_TOPIC,
            ...kept.flatMap((p) => [p.event, JSON.stringify(p.data ?? null), p.ttlMs, this.channel(p.topic)]),
          )
        : [],
      skipped.size ? this.markSkipped(skipped) : 0,
    ]);
    const byItem = new Map(kept.map((p, i) => [p, ids[i]]));
    return items.map((p) => byItem.get(p) ?? '');
  }

  private key(topic: string) {
    return `${this.config.REDIS_PREFIX}:live:${topic}`;
  }

  private channel(topic: string) {
    return `${this.config.REDIS_PREFIX}:live-notify:${topic}`;
  }

  private watchKey(topic: string) {
    return `${this.config.REDIS_PREFIX}:live-watch:${topic}`;
  }

  private skipKey(topic: string) {
    return `${this.config.REDIS_PREFIX}:live-skip:${topic}`;
  }

  /** Announces watched topics to every process at once (channel payload: the topic). */
  private get watchChannel() {
    return `${this.config.REDIS_PREFIX}:live-watch`;
  }

  /**
   * The topics some client streams, as far as this process knows: marks read again (one MGET for all) when not read
   * or heard of for WATCH_RECHECK_MS. When unsure (Redis refused the read), a topic counts as watched.
   */
  private async watchedAmong(topics: string[]): Promise<Set<string>> {
    if (!topics.length) return new Set();
    this.watchNotices ??= this.subscriberConnection()
      .subscribe(this.watchChannel)
      .catch(() => (this.watchNotices = null));
    const stale = topics.filter((topic) => this.knownWatched(topic) === undefined);
    if (stale.length) {
      const marks = await this.redis.mget(...stale.map((topic) => this.watchKey(topic))).catch(() => null);
      stale.forEach((topic, i) => this.know(topic, marks === null || marks[i] !== null));
    }
    return new Set(topics.filter((topic) => this.knownWatched(topic)));
  }

  /** Whether a client streams the topic, when this process knows (its own clients, or read or heard of lately). */
  private knownWatched(topic: string): boolean | undefined {
    if (this.watchedHere.has(topic)) return true;
    const known = this.watchKnown.get(topic);
    return known && Date.now() - known.at < WATCH_RECHECK_MS ? known.watched : undefined;
  }

  private know(topic: string, watched: boolean): void {
    if (this.watchKnown.size >= 10_000) this.watchKnown.clear();
    this.watchKnown.set(topic, { watched, at: Date.now() });
  }

  /** Marks the topic watched by one more client of this process, and tells every process. */
  private async watch(topic: string): Promise<void> {
    this.watchedHere.set(topic, (this.watchedHere.get(topic) ?? 0) + 1);
    this.watchRefresh ??= setInterval(() => {
      const topics = [...this.watchedHere.keys()];
      if (topics.length)
        this.scripts
          .sbLiveWatch(topics.length, ...topics.map((t) => this.watchKey(t)), WATCH_TTL_MS, '')
          .catch((error) => this.logger.warn({ msg: 'live topics not marked watched', error: String(error) }));
    }, WATCH_REFRESH_MS).unref();
    await this.scripts.sbLiveWatch(1, this.watchKey(topic), WATCH_TTL_MS, this.watchChannel, topic);
  }

  private unwatch(topic: string): void {
    const n = (this.watchedHere.get(topic) ?? 0) - 1;
    if (n > 0) this.watchedHere.set(topic, n);
    else this.watchedHere.delete(topic);
  }

  /** The time (Redis ms) an event of the topic was last not kept (publishIfWatched while unwatched), or 0. */
  private async skippedAt(topic: string): Promise<number> {
    return Number((await this.redis.get(this.skipKey(topic))) ?? 0);
  }

  /** Records the skips (topic → how long its events would have been kept) and notifies the topics' listeners. */
  private markSkipped(skips: Map<string, number>): Promise<number> {
    return this.scripts.sbLiveSkip(
      skips.size,
      ...[...skips.keys()].map((topic) => this.skipKey(topic)),
      `\n${SKIPPED_EVENT}\n${SKIPPED_DATA}`,
      ...[...skips].flatMap(([topic, ttlMs]) => [this.channel(topic), ttlMs]),
    );
  }

  /** Appends an event to the topic and notifies every process; resolves to its id. The topic lives `ttlMs` longer. */
  publish(topic: string, event: string, data: unknown, ttlMs = TOPIC_TTL_MS): Promise<string> {
    return this.publications.add({ topic, event, data, ttlMs, whenWatched: false });
  }

  /** Like `publish`, but a failure is logged instead of thrown: for callers whose own work already succeeded. */
  async publishQuietly(topic: string, event: string, data: unknown, ttlMs?: number): Promise<void> {
    await this.publish(topic, event, data, ttlMs).catch((error) =>
      this.logger.warn({ msg: 'live event not published', topic, event, error: String(error) }),
    );
  }

  /**
   * Like `publishQuietly`, for topics whose events matter only to clients streaming them now (the inbox, a run's
   * view): while no client streams the topic, the event is not kept, only the time it was skipped. A client that
   * resumes from before that time gets a `reset` (reload) instead of the missing events, and so does a client whose
   * stream opened just before a publisher heard of it (the skip is notified on the topic's channel). Campaign statuses
   * reach the inbox topic by the thousand a second, and are wanted only while watched.
   */
  publishIfWatched(topic: string, event: string, data: unknown, ttlMs = TOPIC_TTL_MS): Promise<void> {
    if (this.skipIfUnwatched(topic, ttlMs)) return Promise.resolve();
    return this.publications.add({ topic, event, data, ttlMs, whenWatched: true }).then(
      () => undefined,
      (error) => this.logger.warn({ msg: 'live event not published', topic, event, error: String(error) }),
    );
  }

  /**
   * When this process knows that no client streams the topic, records the skip as `publishIfWatched` would and returns
   * true: nothing to serialise or queue, and a publisher need not build the event's data (the inbox reads a message
   * from the database for it). Otherwise (watched, or not known lately) false: publish.
   */
  skipIfUnwatched(topic: string, ttlMs = TOPIC_TTL_MS): boolean {
    if (this.knownWatched(topic) !== false) return false;
    // recorded with the other skips of this moment, in one call
    this.skipsToMark.set(topic, ttlMs);
    this.skipMarks ??= new Promise((resolve) => setImmediate(resolve)).then(() => this.markSkips());
    return true;
  }

  private async markSkips(): Promise<void> {
    const skips = new Map(this.skipsToMark);
    this.skipsToMark.clear();
    this.skipMarks = null;
    await this.markSkipped(skips).catch((error) =>
      this.logger.warn({ msg: 'live event skips not recorded', error: String(error) }),
    );
  }

  /** The topic's events after `afterId` still kept (oldest first), and whether older ones were trimmed away. */
  async eventsAfter(topic: string, afterId: string): Promise<{ events: LiveEvent[]; gap: boolean }> {
    const key = this.key(topic);
    const [entries, first, skippedAt] = await Promise.all([
      this.redis.xrange(key, `(${afterId}`, '+', 'COUNT', LIVE_EVENTS_KEPT_PER_TOPIC * 2),
      this.redis.xrange(key, '-', '+', 'COUNT', 1),
      this.skippedAt(topic),
    ]);
    const events = entries.map(([id, fields]) => toEvent(id, fields));
    // Anything between afterId and the oldest kept event was trimmed (or the stream expired), or an event after it was
    // not kept (publishIfWatched while nobody watched): the client must reload.
    const gap =
      (first.length > 0 && compareStreamIds(first[0][0], afterId) > 0 && (await this.trimmedAfter(key, afterId))) ||
      skippedAt >= Number(afterId.split('-')[0]);
    return { events, gap };
  }

  /** The id of the topic's newest event kept, or `0-0` (before any). */
  private async lastId(topic: string): Promise<string> {
    const [newest] = await this.redis.xrevrange(this.key(topic), '+', '-', 'COUNT', 1);
    return newest?.[0] ?? '0-0';
  }

  private async trimmedAfter(key: string, afterId: string): Promise<boolean> {
    const info = (await this.redis.call('XINFO', 'STREAM', key)) as unknown[];
    const at = info.indexOf('max-deleted-entry-id');
    const maxDeleted = at >= 0 ? String(info[at + 1]) : '0-0';
    return compareStreamIds(maxDeleted, afterId) > 0;
  }

  /**
   * Live events of a topic (no history) until unsubscribed: for server-side consumers such as `@Sse()` handlers.
   * `onListening` runs once Redis has confirmed the subscription: state read from then on misses no later event, while
   * state read before it may (a change in between would notify nobody).
   */
  changes(topic: string, options: { onListening?: () => void } = {}): Observable<LiveEvent> {
    return new Observable<LiveEvent>((subscriber) => {
      const listener: Listener = (event) => subscriber.next(event);
      const end = () => subscriber.complete();
      this.openChanges.add(end);
      let watching = false;
      // listening first, then watched: an event a publisher skips before it hears of this watcher comes as a `reset`
      this.listen(topic, listener)
        .then(async () => {
          if (subscriber.closed) return;
          watching = true;
          await this.watch(topic);
          if (!subscriber.closed) options.onListening?.();
        })
        .catch((error) => subscriber.error(error));
      return () => {
        if (watching) this.unwatch(topic);
        this.openChanges.delete(end);
        this.unlisten(topic, listener);
      };
    });
  }

  /**
   * Streams a topic to a Fastify reply as Server-Sent Events until the client leaves. Call it from a handler that
   * has already checked access (guards run before; nothing may be sent on the reply afterwards).
   */
  async sse(request: FastifyRequest, reply: FastifyReply, topic: string, options: SseOptions = {}): Promise<void> {
    const lastEventId = options.lastEventId ?? lastEventIdOf(request);
    const accepts = options.filter ?? (() => true);
    const body = new PassThrough();
    let lastSent = lastEventId ?? '0-0';
    let pending: LiveEvent[] | null = []; // live events arriving while the backlog is read
    const write = (event: LiveEvent) => {
      // a skipped event (publishIfWatched before the publisher heard of this stream): the client reloads; no `id:`, so
      // its resume position stays where it is
      if (!event.id) return void body.write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
      if (compareStreamIds(event.id, lastSent) <= 0) return; // already sent from the backlog
      lastSent = event.id;
      if (accepts(event)) body.write(formatEvent(event));
    };
    const listener: Listener = (event) => (pending ? pending.push(event) : write(event));
    const heartbeat = setInterval(() => body.write(': heartbeat\n\n'), options.heartbeatMs ?? LIVE_EVENTS_HEARTBEAT_MS);
    heartbeat.unref();
    const stillValid = options.stillValid ?? accessCheckOf(request);
    const stopWatching =
      stillValid &&
      watchAccess(stillValid, () => {
        if (!this.openStreams.has(close)) return;
        body.write(`event: ${ACCESS_ENDED.type}\ndata: ${JSON.stringify(ACCESS_ENDED.data)}\n\n`);
        close();
      });
    let watching = false;
    const close = () => {
      if (!this.openStreams.has(close)) return;
      clearInterval(heartbeat);
      if (stopWatching) stopWatching();
      if (watching) this.unwatch(topic);
      this.unlisten(topic, listener);
      this.openStreams.delete(close);
      body.end();
    };
    this.openStreams.add(close);
    reply.raw.on('close', close);

    reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(body);
    body.write(': connected\nretry: 2000\n\n');
    try {
      await this.listen(topic, listener);
      if (!this.openStreams.has(close)) return; // the client left meanwhile
      watching = true;
      await this.watch(topic); // after listening: a publisher that skips before it hears of this stream notifies it
      if (!this.openStreams.has(close)) return;
      if (lastEventId) {
        const { events, gap } = await this.eventsAfter(topic, lastEventId);
        if (gap) body.write(formatEvent({ id: lastSent, event: 'reset', data: { reason: 'events_trimmed' } }));
        events.forEach(write);
      } else {
        // Where the topic stands now, as a resume position without an event (an `id:` line alone sets a browser's
        // last event id and dispatches nothing): a client that drops before its first event resumes from here
        // instead of missing what was published while it reconnected.
        body.write(`id: ${await this.lastId(topic)}\n\n`);
      }
      const now = await options.initial?.();
      if (now) body.write(`event: ${now.event}\ndata: ${JSON.stringify(now.data)}\n\n`);
      const arrived = pending;
      pending = null;
      arrived.forEach(write);
    } catch (error) {
      this.logger.warn({ msg: 'live stream failed', topic, error: String(error) });
      close();
    }
  }

  private async listen(topic: string, listener: Listener): Promise<void> {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    let subscribed = this.subscriptions.get(topic);
    if (!subscribed) {
      subscribed = this.subscriberConnection().subscribe(this.channel(topic));
      this.subscriptions.set(topic, subscribed);
    }
    await subscribed;
  }

  private unlisten(topic: string, listener: Listener): void {
    const set = this.listeners.get(topic);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(topic);
    this.subscriptions.delete(topic);
    this.subscriber?.unsubscribe(this.channel(topic)).catch(() => undefined);
  }

  private subscriberConnection(): Redis {
    if (this.subscriber) return this.subscriber;
    const subscriber = this.redis.duplicate();
    const prefix = this.channel('');
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.watchChannel) return this.know(message, true);
      const set = this.listeners.get(channel.slice(prefix.length));
      if (!set) return;
      const event = parseNotification(message);
      if (event) set.forEach((listener) => listener(event));
    });
    subscriber.on('error', (error) => this.logger.warn({ msg: 'live events subscriber', error: String(error) }));
    // ioredis subscribes again after a reconnect, but what was published in between reached nobody. Every stream is
    // ended: browsers reconnect (EventSource does by itself, `retry: 2000`) with their Last-Event-ID, and what they
    // missed is replayed from the topic's stream; `changes()` consumers complete and start over from the state now.
    let connected = false;
    subscriber.on('ready', () => {
      if (connected) this.endAllStreams('the live events subscriber reconnected');
      connected = true;
    });
    return (this.subscriber = subscriber);
  }

  /** Number of clients of this process currently streaming (all topics). */
  get clientCount(): number {
    return this.openStreams.size;
  }

  /** Ends every stream of this process (`reason`, when given, is logged: an interruption clients will notice). */
  private endAllStreams(reason?: string): void {
    const count = this.openStreams.size + this.openChanges.size;
    if (count && reason) this.logger.warn({ msg: 'live streams ended', reason, count });
    [...this.openStreams].forEach((close) => close());
    [...this.openChanges].forEach((end) => end());
  }

  async onModuleDestroy() {
    if (this.watchRefresh) clearInterval(this.watchRefresh);
    this.endAllStreams();
    await closeRedis(this.subscriber);
  }
}

function lastEventIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
  const value = typeof header === 'string' && header ? header : typeof query === 'string' ? query : undefined;
  return value && isStreamId(value) ? value : undefined;
}

function toEvent(id: string, fields: string[]): LiveEvent {
  const map: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, event: map.event, data: JSON.parse(map.data ?? 'null') };
}

function parseNotification(message: string): LiveEvent | null {
  const first = message.indexOf('\n');
  const second = message.indexOf('\n', first + 1);
  if (first < 0 || second < 0) return null;
  return {
    id: message.slice(0, first),
    event: message.slice(first + 1, second),
    data: JSON.parse(message.slice(second + 1)),
  };
}

/** One SSE block: JSON.stringify never emits a raw newline, so `data:` is one line. */
export function formatEvent(event: LiveEvent): string {
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
