import type { MessageEvent } from '@nestjs/common';
import { compareStreamIds, isStreamId, type LiveEvent, LiveEvents } from '@switchboard/core';
import { interval, Observable } from 'rxjs';
import { TEMPLATE_STATUS_EVENT } from './templates.service';

export const TEMPLATE_EVENTS_PING_MS = 15_000;

/**
 * The account's `template.status` events for `@Sse()`: live from the shared LiveEvents topic and, after a reconnect
 * with a Last-Event-ID, first what was missed (kept in the topic's Redis stream), each event once and in order; a
 * `ping` every 15 s keeps proxies from closing an idle stream. Unsubscribing (the client left) stops everything.
 */
export function templateEventStream(live: LiveEvents, topic: string, afterId?: string): Observable<MessageEvent> {
  return new Observable<MessageEvent>((subscriber) => {
    let lastSent = afterId ?? '0-0';
    let backlog: LiveEvent[] | null = []; // live events arriving while the missed ones are read
    const emit = (event: LiveEvent) => {
      if (!isStreamId(event.id) || compareStreamIds(event.id, lastSent) <= 0) return;
      lastSent = event.id;
      if (event.event === TEMPLATE_STATUS_EVENT)
        subscriber.next({ id: event.id, type: event.event, data: event.data as object });
    };
    // the missed events are read once listening has started, so that none falls between the two
    const catchUp = async () => {
      if (afterId) (await live.eventsAfter(topic, afterId)).events.forEach(emit);
      const arrived = backlog ?? [];
      backlog = null;
      arrived.forEach(emit);
    };
    const changes = live
      .changes(topic, { onListening: () => void catchUp().catch((error) => subscriber.error(error)) })
      .subscribe({
        next: (event) => (backlog ? backlog.push(event) : emit(event)),
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(), // events may have been missed: the client resumes from its last id
      });
    const pings = interval(TEMPLATE_EVENTS_PING_MS).subscribe(() => subscriber.next({ type: 'ping', data: '' }));
    return () => {
      changes.unsubscribe();
      pings.unsubscribe();
    };
  });
}
