import { Injectable } from '@nestjs/common';
import { LiveEvents } from '@switchboard/core';
import { map, Observable } from 'rxjs';

/**
 * "This run changed": published by the driver after each committed step, through the shared live events (libs/core
 * live), so every API process can push it to the browsers watching that run (Server-Sent Events,
 * GET /v1/workflow-runs/{id}/events).
 */
@Injectable()
export class RunEvents {
  constructor(private readonly live: LiveEvents) {}

  private topic(runId: string) {
    return `workflow-run:${runId}`;
  }

  async publish(runId: string): Promise<void> {
    await this.live.publishQuietly(this.topic(runId), 'changed', null);
  }

  /** Emits (no value) each time the run changes, until unsubscribed. */
  changes(runId: string): Observable<void> {
    return this.live.changes(this.topic(runId)).pipe(map(() => undefined));
  }
}
