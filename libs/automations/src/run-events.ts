import { Injectable } from '@nestjs/common';
import { LiveEvents } from '@switchboard/core';
import { Observable } from 'rxjs';

/**
 * A run's stream is kept this long after its last change (a topic per run: at hundreds of runs per second, the 24 h of
 * other topics would fill Redis). Nothing needs its history for long: the run's event stream starts with the run as it
 * is now.
 */
const RUN_TOPIC_TTL_MS = 15 * 60_000;

/**
 * "This run changed": published by the driver after each committed step, through the shared live events (libs/core
 * live), so every API process can push it to the browsers watching that run (Server-Sent Events,
 * GET /v1/workflow-runs/{id}/events); only while one does (`publishIfWatched`: a change nobody watches is not kept).
 */
@Injectable()
export class RunEvents {
  constructor(private readonly live: LiveEvents) {}

  private topic(runId: string) {
    return `workflow-run:${runId}`;
  }

  async publish(runId: string): Promise<void> {
    await this.live.publishIfWatched(this.topic(runId), 'changed', null, RUN_TOPIC_TTL_MS);
  }

  /**
   * Emits (no value) once the run's changes are listened to, then each time the run changes, until unsubscribed: a
   * read of the run at each emission is never older than its last change. Completes when changes may have been missed
   * (LiveEvents' subscriber reconnected): the browser's EventSource reconnects and starts from the run as it is.
   */
  watch(runId: string): Observable<void> {
    return new Observable<void>((subscriber) => {
      const changes = this.live.changes(this.topic(runId), { onListening: () => subscriber.next() }).subscribe({
        next: () => subscriber.next(),
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => changes.unsubscribe();
    });
  }
}
