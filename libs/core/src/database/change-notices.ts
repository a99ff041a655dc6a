import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { AppConfig } from '../config/config';

const RECONNECT_MS = 1_000;

interface Subscription {
  onNotice(payload: string): void;
  /** Called whenever notices may have been missed (the connection lost, or not yet listening): drop everything. */
  onReset(): void;
}

/**
 * Changes PostgreSQL announces: a table's trigger NOTIFYs a channel at commit, whoever writes (an API, a worker, the
 * operator CLI, a cascade, plain SQL), and this process hears it on one connection of its own, opened on first use.
 * `NotifiedCache` keeps rows in memory on the strength of it. While the connection is not listening (not yet, or lost:
 * it reconnects every second) `listening(channel)` is false, and a cache keeps nothing.
 */
@Injectable()
export class ChangeNotices implements OnModuleDestroy {
  private readonly logger = new Logger(ChangeNotices.name);
  private readonly subscriptions = new Map<string, Subscription[]>();
  /** Channels whose LISTEN took effect on the current connection. */
  private readonly heard = new Set<string>();
  private client?: Client;
  private retrying = false;
  private closed = false;
  /** Connecting and LISTEN statements in flight: a shutdown waits for them (ending a client mid-query cuts it off). */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly config: AppConfig) {}

  subscribe(channel: string, subscription: Subscription): void {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    this.subscriptions.set(channel, [...(this.subscriptions.get(channel) ?? []), subscription]);
    if (this.client) this.track(this.listenTo(this.client, [channel]).catch(() => undefined)); // lost: reconnects
  }

  /** Whether every notice of the channel reaches this process from now on; starts listening when not. */
  listening(channel: string): boolean {
    if (!this.client && !this.retrying && !this.closed) this.track(this.connect());
    return this.heard.has(channel);
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    // at most a few seconds: a database that does not answer must not hold the shutdown
    await Promise.race([Promise.all(this.inFlight), new Promise((resolve) => setTimeout(resolve, 3_000).unref())]);
    await this.client?.end().catch(() => undefined);
  }

  private track(work: Promise<unknown>): void {
    const settled = work.catch(() => undefined);
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.config.DATABASE_URL, connectionTimeoutMillis: 5_000 });
    this.client = client;
    client.on('notification', ({ channel, payload }) => {
      for (const s of this.subscriptions.get(channel) ?? []) s.onNotice(payload ?? '');
    });
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.heard.clear();
      this.resetAll();
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger.warn(`change notices: connection lost (${error?.message ?? 'ended'}); caches off until it is back`);
      this.retrying = true;
      setTimeout(() => {
        this.retrying = false;
        if (!this.closed) this.track(this.connect());
      }, RECONNECT_MS).unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      await this.listenTo(client, [...this.subscriptions.keys()]);
    } catch (error) {
      lost(error as Error);
    }
  }

  private async listenTo(client: Client, channels: string[]): Promise<void> {
    for (const channel of channels) {
      if (this.heard.has(channel)) continue;
      await client.query(`LISTEN ${channel}`);
      if (this.client !== client) return;
      // a change committed before LISTEN took effect was not heard
      for (const s of this.subscriptions.get(channel) ?? []) s.onReset();
      this.heard.add(channel);
    }
  }

  private resetAll(): void {
    for (const subscriptions of this.subscriptions.values()) for (const s of subscriptions) s.onReset();
  }
}

/**
 * Values read from PostgreSQL, kept in memory until a notice on `channel` names their key (`*`, or `keyOf` returning
 * `*`: all of them). Concurrent reads of one key share one read; a read begun before a notice is not kept; nothing is
 * kept while the channel is not heard, and no absent value (null / undefined) is kept at all.
 */
export class NotifiedCache<V> {
  private readonly values = new Map<string, V>();
  private readonly reads = new Map<string, Promise<V | null | undefined>>();
  private generation = 0;

  constructor(
    private readonly notices: ChangeNotices,
    private readonly channel: string,
    private readonly options: { maxEntries?: number; keyOf?: (payload: string) => string } = {},
  ) {
    notices.subscribe(channel, {
      onNotice: (payload) => this.forget(options.keyOf ? options.keyOf(payload) : payload),
      onReset: () => this.forget('*'),
    });
  }

  get<T extends V | null | undefined>(key: string, read: () => Promise<T>): Promise<T> {
    if (this.values.has(key)) return Promise.resolve(this.values.get(key) as T);
    const listening = this.notices.listening(this.channel);
    let pending = this.reads.get(key) as Promise<T> | undefined;
    if (!pending) {
      const generation = this.generation;
      const started: Promise<T> = read().then(
        (value) => {
          if (this.reads.get(key) === started) this.reads.delete(key);
          if (value !== null && value !== undefined && listening && generation === this.generation) {
            if (this.values.size >= (this.options.maxEntries ?? 10_000)) this.values.clear();
            this.values.set(key, value);
          }
          return value;
        },
        (error: unknown) => {
          if (this.reads.get(key) === started) this.reads.delete(key);
          throw error;
        },
      );
      pending = started;
      this.reads.set(key, started);
    }
    return pending;
  }

  /** Drops one key (`*`: all) and any read of it in flight, so the next get reads again. */
  forget(key: string): void {
    this.generation++;
    if (key === '*') {
      this.values.clear();
      this.reads.clear();
    } else {
      this.values.delete(key);
      this.reads.delete(key);
    }
  }
}
