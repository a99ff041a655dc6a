import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LiveEvents, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createApiApp } from '../../apps/api/src/create-api-app';
import { openSse } from '../helpers/sse';
import { startTestApp, TestApp } from '../helpers/test-app';
import { eventually } from '../helpers/sandbox';

/**
 * The shared live events (libs/core/src/live): an event published in one process reaches the Server-Sent Events
 * clients of another (Redis stream + pub/sub), `Last-Event-ID` resumes without losing or repeating anything,
 * heartbeats keep the stream open, a filter hides events without breaking resume.
 */
describe('Live events across API processes', () => {
  let t: TestApp;
  let second: NestFastifyApplication;
  let secondUrl: string;
  let publisher: LiveEvents;

  beforeAll(async () => {
    t = await startTestApp();
    publisher = t.app.get(LiveEvents);
    // A second API process on the same database and Redis prefix, with a route that streams any topic.
    second = await createApiApp(t.config);
    const live = second.get(LiveEvents);
    second
      .getHttpAdapter()
      .getInstance()
      .get('/test/live/:topic', (request: FastifyRequest, reply: FastifyReply) => {
        const { topic } = request.params as { topic: string };
        const { only } = request.query as { only?: string };
        return live.sse(request, reply, topic, {
          heartbeatMs: 200,
          filter: only ? (event) => event.event === only : undefined,
        });
      });
    await second.listen(0, '127.0.0.1');

    secondUrl = `http://127.0.0.1:${(second.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    // fetch may leave a connection open that never sent a request: Node would wait for its headers timeout (60 s)
    second?.getHttpServer().closeAllConnections();
    await second?.close();
    await t?.close();
  });

  it('an event published by one process reaches an SSE client of the other, with its stream id, in order', async () => {
    const client = await openSse(`${secondUrl}/test/live/orders`);
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toContain('text/event-stream');
    await client.subscribed();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await publisher.publish('orders', 'order.updated', { n: i }));
    const events = await client.waitForCount(5, 3000);
    expect(events.map((e) => e.id)).toEqual(ids);
    expect(events.map((e) => e.data)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(events.every((e) => e.event === 'order.updated')).toBe(true);
    // another topic is not delivered here
    await publisher.publish('other-topic', 'order.updated', { n: 99 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(client.events).toHaveLength(5);
    expect(client.comments).toContain('heartbeat');
    client.close();
  });

  it('events published in one moment (one Redis call) reach each topic’s clients in order, each with its own id', async () => {
    const a = await openSse(`${secondUrl}/test/live/moment-a`);
    const b = await openSse(`${secondUrl}/test/live/moment-b`);
    await Promise.all([a.subscribed(), b.subscribed()]);
    const published = await Promise.all(
      Array.from({ length: 60 }, (_, n) => publisher.publish(n % 3 === 0 ? 'moment-b' : 'moment-a', 'tick', { n })),
    );
    // stream ids are per topic (two topics may hand out the same one)
    expect(new Set(published.filter((_, n) => n % 3 !== 0)).size).toBe(40);
    expect(new Set(published.filter((_, n) => n % 3 === 0)).size).toBe(20);
    const [eventsA, eventsB] = await Promise.all([a.waitForCount(40, 3000), b.waitForCount(20, 3000)]);
    const expectedA = Array.from({ length: 60 }, (_, n) => n).filter((n) => n % 3 !== 0);
    expect(eventsA.map((e) => e.data)).toEqual(expectedA.map((n) => ({ n })));
    expect(eventsA.map((e) => e.id)).toEqual(expectedA.map((n) => published[n]));
    expect(eventsB.map((e) => (e.data as { n: number }).n)).toEqual([
      0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54, 57,
    ]);
    a.close();
    b.close();
  });

  it('Last-Event-ID resumes after a disconnect: every missed event once, then live ones', async () => {
    const first = await openSse(`${secondUrl}/test/live/resume`);
    await first.subscribed();
    await publisher.publish('resume', 'tick', { n: 1 });
    await publisher.publish('resume', 'tick', { n: 2 });
    const seen = await first.waitForCount(2);
    first.close();

    const missed = [];
    for (let n = 3; n <= 12; n++) missed.push(await publisher.publish('resume', 'tick', { n }));
    // Events keep coming while the client reconnects: none may be lost in the hand-over from backlog to live.
    const concurrent = (async () => {
      for (let n = 13; n <= 30; n++) await publisher.publish('resume', 'tick', { n });
    })();
    const resumed = await openSse(`${secondUrl}/test/live/resume`, { 'last-event-id': seen[1].id! });
    await concurrent;
    const events = await resumed.waitForCount(28, 5000);
    expect(events.map((e) => e.data.n)).toEqual(Array.from({ length: 28 }, (_, i) => i + 3));
    expect(events.slice(0, 10).map((e) => e.id)).toEqual(missed);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.events).toHaveLength(28); // nothing twice
    resumed.close();

    // The lastEventId query parameter works the same (for clients that cannot set headers on the first request).
    const byQuery = await openSse(`${secondUrl}/test/live/resume?lastEventId=${encodeURIComponent(missed[8])}`);
    expect((await byQuery.waitForCount(1)).map((e) => e.data.n)).toEqual([12]);
    byQuery.close();
  });

  it('a filter hides events from one client without breaking its resume position', async () => {
    const client = await openSse(`${secondUrl}/test/live/mixed?only=keep`);
    await client.subscribed();
    await publisher.publish('mixed', 'skip', { n: 1 });
    const kept = await publisher.publish('mixed', 'keep', { n: 2 });
    await publisher.publish('mixed', 'skip', { n: 3 });
    await client.waitFor((e) => e.id === kept);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.events.map((e) => e.data.n)).toEqual([2]);
    client.close();
  });

  it('forgets each client when it leaves', async () => {
    const live = second.get(LiveEvents);
    const deadline = Date.now() + 2000;
    while (live.clientCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // earlier tests'
    const before = live.clientCount;
    const a = await openSse(`${secondUrl}/test/live/leaving`);
    const b = await openSse(`${secondUrl}/test/live/leaving`);
    await Promise.all([a.subscribed(), b.subscribed()]);
    expect(live.clientCount).toBe(before + 2);
    a.close();
    b.close();
    const closing = Date.now() + 2000;
    while (live.clientCount !== before && Date.now() < closing) await new Promise((r) => setTimeout(r, 20));
    expect(live.clientCount).toBe(before);
  });

  it('changes(): onListening runs once the subscription is in place, so an event published from then on arrives', async () => {
    const live = second.get(LiveEvents);
    for (let i = 0; i < 10; i++) {
      const received: unknown[] = [];
      const published = new Promise<string>((resolve, reject) => {
        const subscription = live
          .changes(`listening-${i}`, {
            // another process publishes the moment this one says it listens
            onListening: () => publisher.publish(`listening-${i}`, 'tick', { i }).then(resolve, reject),
          })
          .subscribe((event) => {
            received.push(event.data);
            subscription.unsubscribe();
          });
      });
      await published;
      const deadline = Date.now() + 2000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(received).toEqual([{ i }]);
    }
  });

  it('after its subscriber reconnects, a process ends its streams; a client resuming from its last id gets what was published meanwhile', async () => {
    const live = second.get(LiveEvents);
    const client = await openSse(`${secondUrl}/test/live/reconnect`);
    const completed = new Promise<void>((resolve) => live.changes('reconnect').subscribe({ complete: resolve }));
    await client.subscribed();
    const seen = await publisher.publish('reconnect', 'n', 1);
    await client.waitFor((e) => e.id === seen);
    // the subscriber's connection drops (as in a network blip); events are published before it is back
    (live as unknown as { subscriber: { stream: { destroy(): void } } }).subscriber.stream.destroy();
    const missed = [await publisher.publish('reconnect', 'n', 2), await publisher.publish('reconnect', 'n', 3)];
    await client.ended;
    await completed;
    expect(client.events.map((e) => e.data)).toEqual([1]);
    const resumed = await openSse(`${secondUrl}/test/live/reconnect`, { 'last-event-id': seen });
    expect((await resumed.waitForCount(2)).map((e) => e.id)).toEqual(missed);
    resumed.close();
  });

  it('a client that drops before its first event resumes from where the topic stood when it connected', async () => {
    const before = await publisher.publish('first-drop', 'n', 0); // an event from before the client came
    const client = await openSse(`${secondUrl}/test/live/first-drop`);
    await client.subscribed();
    expect(client.events).toEqual([]);
    expect(client.lastEventId()).toBe(before);
    client.close();
    const missed = [await publisher.publish('first-drop', 'n', 1), await publisher.publish('first-drop', 'n', 2)];
    const resumed = await openSse(`${secondUrl}/test/live/first-drop`, { 'last-event-id': client.lastEventId()! });
    expect((await resumed.waitForCount(2)).map((e) => e.id)).toEqual(missed);
    resumed.close();
    // a topic with no event yet: the position is 0-0, and a resume from it gets everything published since
    const empty = await openSse(`${secondUrl}/test/live/first-drop-empty`);
    await empty.subscribed();
    expect(empty.lastEventId()).toBe('0-0');
    empty.close();
  });

  describe('publishIfWatched: events kept only while a client streams the topic', () => {
    const redisKey = (kind: string, topic: string) => `${t.config.REDIS_PREFIX}:${kind}:${topic}`;
    let redis: Redis;
    beforeAll(() => (redis = t.app.get(REDIS)));

    it('with nobody streaming, nothing is kept (only when it was skipped), and a client resuming from before gets a reset', async () => {
      const before = await publisher.publish('unwatched', 'n', 0);
      await publisher.publishIfWatched('unwatched', 'n', 1);
      await publisher.publishIfWatched('unwatched', 'n', 2);
      expect(await redis.xlen(redisKey('live', 'unwatched'))).toBe(1);
      expect(Number(await redis.get(redisKey('live-skip', 'unwatched')))).toBeGreaterThanOrEqual(
        Number(before.split('-')[0]),
      );
      // the mark lives as long as the skipped events would have (a run's topic: minutes, not the default day)
      await publisher.publishIfWatched('unwatched-short', 'n', 1, 60_000);
      const ttl = await redis.pttl(redisKey('live-skip', 'unwatched-short'));
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      const resumed = await openSse(`${secondUrl}/test/live/unwatched`, { 'last-event-id': before });
      const reset = await resumed.waitFor((e) => e.event === 'reset');
      expect(reset.data).toEqual({ reason: 'events_trimmed' });
      resumed.close();
    });

    it('while a client of another process streams the topic, its events are kept and delivered, in order', async () => {
      const client = await openSse(`${secondUrl}/test/live/watched`);
      // the stream announces itself: the publisher (another process) knows at once, without waiting to re-read
      await eventually(async () => ((await redis.exists(redisKey('live-watch', 'watched'))) ? true : undefined));
      await client.subscribed();
      for (let n = 0; n < 5; n++) await publisher.publishIfWatched('watched', 'n', n);
      expect((await client.waitForCount(5)).map((e) => e.data)).toEqual([0, 1, 2, 3, 4]);
      expect(await redis.exists(redisKey('live-skip', 'watched'))).toBe(0);
      // a resume from the first event gets the others from the stream, as for any topic
      const resumed = await openSse(`${secondUrl}/test/live/watched`, { 'last-event-id': client.events[0].id! });
      expect((await resumed.waitForCount(4)).map((e) => e.data)).toEqual([1, 2, 3, 4]);
      client.close();
      resumed.close();
    });

    /** A publisher that has not heard of a new watcher yet (the moment between the mark and its announcement). */
    const notHeardOf = (live: LiveEvents, topic: string) =>
      (live as unknown as { watchKnown: Map<string, unknown> }).watchKnown.set(topic, {
        watched: false,
        at: Date.now(),
      });

    it('an event skipped by a publisher that had not heard of the stream yet makes that stream reset, at once', async () => {
      const client = await openSse(`${secondUrl}/test/live/late-news`);
      await eventually(async () => ((await redis.exists(redisKey('live-watch', 'late-news'))) ? true : undefined));
      notHeardOf(publisher, 'late-news');
      await publisher.publishIfWatched('late-news', 'n', 1);
      const reset = await client.waitFor((e) => e.event === 'reset', 2000);
      expect(reset).toEqual({ event: 'reset', data: { reason: 'events_not_kept' } }); // no id: the position stays
      expect(client.events).toEqual([reset]);
      client.close();
    });

    it('skipIfUnwatched: false while the topic is watched or not known lately; true once known unwatched, with the skip recorded and told', async () => {
      expect(publisher.skipIfUnwatched('never-heard-of')).toBe(false); // not known: publish (the batch reads the mark)
      const client = await openSse(`${secondUrl}/test/live/lazy-data`);
      await eventually(async () => ((await redis.exists(redisKey('live-watch', 'lazy-data'))) ? true : undefined));
      await publisher.publishIfWatched('lazy-data', 'n', 1);
      expect((await client.waitForCount(1)).map((e) => e.data)).toEqual([1]);
      expect(publisher.skipIfUnwatched('lazy-data')).toBe(false);
      notHeardOf(publisher, 'lazy-data');
      expect(publisher.skipIfUnwatched('lazy-data')).toBe(true);
      const reset = await client.waitFor((e) => e.event === 'reset', 2000);
      expect(reset).toEqual({ event: 'reset', data: { reason: 'events_not_kept' } });
      expect(Number(await redis.get(redisKey('live-skip', 'lazy-data')))).toBeGreaterThan(0);
      client.close();
    });

    it('changes() counts as watching, and reports a skipped event as a reset', async () => {
      const live = second.get(LiveEvents);
      const received: Array<{ event: string; data: unknown }> = [];
      let onListening = () => {};
      const listening = new Promise<void>((resolve) => (onListening = resolve));
      const subscription = live
        .changes('run-like', { onListening })
        .subscribe((event) => received.push({ event: event.event, data: event.data }));
      try {
        await listening;
        await publisher.publishIfWatched('run-like', 'changed', null);
        await eventually(async () => (received.length === 1 ? true : undefined));
        notHeardOf(publisher, 'run-like');
        await publisher.publishIfWatched('run-like', 'changed', null);
        await eventually(async () => (received.length === 2 ? true : undefined), 2000);
        expect(received).toEqual([
          { event: 'changed', data: null },
          { event: 'reset', data: { reason: 'events_not_kept' } },
        ]);
      } finally {
        subscription.unsubscribe();
      }
    });

    it('once the last client leaves, the topic stays watched until its mark expires (30 s), then events are skipped', async () => {
      const client = await openSse(`${secondUrl}/test/live/left`);
      await eventually(async () => ((await redis.exists(redisKey('live-watch', 'left'))) ? true : undefined));
      client.close();
      await client.ended;
      expect(await redis.pttl(redisKey('live-watch', 'left'))).toBeGreaterThan(20_000);
      await redis.del(redisKey('live-watch', 'left')); // as if 30 s had passed
      // a process re-reads the mark at most every 5 s; a fresh process (no memory of the topic) reads it now
      const fresh = await createApiApp(t.config);
      try {
        const live = fresh.get(LiveEvents);
        await live.publishIfWatched('left', 'n', 1);
        expect(await redis.exists(redisKey('live', 'left'))).toBe(0);
        const firstSkip = Number(await redis.get(redisKey('live-skip', 'left')));
        expect(firstSkip).toBeGreaterThan(0);
        // now known to be unwatched: the next events are not even queued, their skip is still recorded
        await new Promise((resolve) => setTimeout(resolve, 5));
        await Promise.all([live.publishIfWatched('left', 'n', 2), live.publishIfWatched('left', 'n', 3)]);
        await eventually(async () =>
          Number(await redis.get(redisKey('live-skip', 'left'))) > firstSkip ? true : undefined,
        );
        expect(await redis.exists(redisKey('live', 'left'))).toBe(0);
      } finally {
        await fresh.close();
      }
    });
  });
});
