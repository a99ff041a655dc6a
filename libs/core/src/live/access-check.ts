import type { MessageEvent } from '@nestjs/common';
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';

/**
 * Whether the credentials a request came in with would still be let in now (not expired, signed out, deleted,
 * rotated, or stripped of the route's grant). The authentication guard attaches one to every request it lets through;
 * a live stream, which outlasts the guard's one check, asks it again while it stays open (LiveEvents.sse).
 */
export type AccessCheck = () => Promise<boolean>;

const ACCESS_CHECK = Symbol('accessCheck');

export function attachAccessCheck(request: object, check: AccessCheck): void {
  (request as { [ACCESS_CHECK]?: AccessCheck })[ACCESS_CHECK] = check;
}

export function accessCheckOf(request: object): AccessCheck | undefined {
  return (request as { [ACCESS_CHECK]?: AccessCheck })[ACCESS_CHECK];
}

/** How often an open live stream asks its reader's access again. */
export const LIVE_EVENTS_RECHECK_MS = 5_000;

/** The event that ends a live stream whose reader's access has ended. */
export const ACCESS_ENDED = { type: 'end', data: { reason: 'access_ended' } } as const;

/**
 * For `@Sse()` streams: asks `check` every LIVE_EVENTS_RECHECK_MS and, once it says no (or fails), sends ACCESS_ENDED
 * and completes. Without a check the stream is left as it is.
 */
export function endWhenAccessEnds(check: AccessCheck | undefined): MonoTypeOperatorFunction<MessageEvent> {
  if (!check) return (source) => source;
  return (source) =>
    new Observable<MessageEvent>((subscriber) => {
      const inner = source.subscribe(subscriber);
      const timer = setInterval(
        () =>
          void check()
            .catch(() => false)
            .then((valid) => {
              if (valid || subscriber.closed) return;
              subscriber.next({ type: ACCESS_ENDED.type, data: ACCESS_ENDED.data });
              subscriber.complete();
            }),
        LIVE_EVENTS_RECHECK_MS,
      );
      return () => {
        clearInterval(timer);
        inner.unsubscribe();
      };
    });
}
