import { HttpException, type MessageEvent } from '@nestjs/common';
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';

/**
 * Whether the credentials a request came in with would still be let in now (not expired, signed out, deleted,
 * rotated, or stripped of the route's grant): false when not; a rejection when it cannot tell (see accessRefused).
 * The authentication guard attaches one to every request it lets through; a live stream, which outlasts the guard's
 * one check, asks it again while it stays open (LiveEvents.sse).
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
 * For AccessCheck implementations, as the rejection handler of the re-check: a 401 or 403 means the access has ended
 * (false); any other failure (the database away) says nothing about it and is passed on.
 */
export function accessRefused(error: unknown): false {
  const status = error instanceof HttpException ? error.getStatus() : 0;
  if (status === 401 || status === 403) return false;
  throw error;
}

/**
 * Asks `check` every LIVE_EVENTS_RECHECK_MS, one question at a time, and calls `ended` once it answers false (a
 * failed check says nothing: the stream goes on, and the next tick asks again). Returns the stop.
 */
export function watchAccess(check: AccessCheck, ended: () => void): () => void {
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;
    asking = true;
    check().then(
      (valid) => {
        asking = false;
        if (valid) return;
        clearInterval(timer);
        ended();
      },
      () => {
        asking = false;
      },
    );
  }, LIVE_EVENTS_RECHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** For `@Sse()` streams: once `check` says the reader's access has ended (watchAccess), sends ACCESS_ENDED and completes. */
export function endWhenAccessEnds(check: AccessCheck | undefined): MonoTypeOperatorFunction<MessageEvent> {
  if (!check) return (source) => source;
  return (source) =>
    new Observable<MessageEvent>((subscriber) => {
      const inner = source.subscribe(subscriber);
      const stop = watchAccess(check, () => {
        subscriber.next({ type: ACCESS_ENDED.type, data: ACCESS_ENDED.data });
        subscriber.complete();
      });
      return () => {
        stop();
        inner.unsubscribe();
      };
    });
}
