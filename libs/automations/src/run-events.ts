import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AppConfig, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import { Observable } from 'rxjs';

/**
 * "This run changed": published by the driver after each committed step, on one Redis channel, so every API process
 * can push it to the browsers watching that run (Server-Sent Events, GET /v1/workflow-runs/{id}/events).
 * One subscriber connection per process, opened on first use.
 */
@Injectable()
export class RunEvents implements OnModuleDestroy {
  private readonly logger = new Logger('RunEvents');
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Set<() => void>>();

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {}

  private get channel() {
    return `${this.config.REDIS_PREFIX}:run-events`;
  }

  async publish(runId: string): Promise<void> {
    await this.redis
      .publish(this.channel, runId)
      .catch((error) => this.logger.warn({ msg: 'run event not published', runId, error: String(error) }));
  }

  /** Emits (no value) each time the run changes, until unsubscribed. */
  changes(runId: string): Observable<void> {
    return new Observable<void>((subscriber) => {
      const listener = () => subscriber.next();
      let set = this.listeners.get(runId);
      if (!set) this.listeners.set(runId, (set = new Set()));
      set.add(listener);
      this.ensureSubscribed().catch((error) => subscriber.error(error));
      return () => {
        set.delete(listener);
        if (set.size === 0) this.listeners.delete(runId);
      };
    });
  }

  private async ensureSubscribed(): Promise<void> {
    if (this.subscriber) return;
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('message', (_channel: string, runId: string) =>
      this.listeners.get(runId)?.forEach((listener) => listener()),
    );
    await this.subscriber.subscribe(this.channel);
  }

  async onModuleDestroy() {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
}
