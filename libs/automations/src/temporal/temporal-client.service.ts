import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@switchboard/core';
import { Client, Connection } from '@temporalio/client';
import { temporalConnectionOptions } from './connection-options';

/** How long a connection attempt or a readiness check may take. */
export const TEMPORAL_CONNECT_TIMEOUT_MS = 5_000;
export const TEMPORAL_HEALTH_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The API-side Temporal client (`@temporalio/client`), for the Temporal driver: the Connection is created lazily
 * on first use (a process whose driver is embedded never connects), shared by concurrent callers, retried on the
 * next call after a failure, and closed on shutdown.
 */
@Injectable()
export class TemporalClientService implements OnApplicationShutdown {
  private readonly logger = new Logger('TemporalClient');
  private connecting?: Promise<{ client: Client; connection?: Connection }>;
  private closed = false;
  /** Connection attempts in flight (also ones replaced by useClient), awaited on shutdown so none leaks. */
  private readonly attempts = new Set<Promise<unknown>>();

  constructor(private readonly config: AppConfig) {}

  get address(): string | undefined {
    return this.config.TEMPORAL_ADDRESS;
  }

  /** The client, connecting on first use. Rejects (and retries on the next call) when Temporal is unreachable. */
  async getClient(): Promise<Client> {
    return (await this.connected()).client;
  }

  /**
   * Replaces the connection with a ready client (tests inject a fake; an embedding app may share its own).
   * The service does not close a client it was given.
   */
  useClient(client: Client): void {
    this.connecting = Promise.resolve({ client });
  }

  /** Readiness: connects if needed and asks the frontend for its system info, within TEMPORAL_HEALTH_TIMEOUT_MS. */
  async check(): Promise<void> {
    const { client, connection } = await withTimeout(
      this.connected(),
      TEMPORAL_HEALTH_TIMEOUT_MS,
      'connecting to Temporal',
    );
    if (!connection) {
      // An injected client: ask through whatever connection it carries.
      const injected = (client as { connection?: { ensureConnected?: () => Promise<void> } }).connection;
      if (injected?.ensureConnected)
        await withTimeout(injected.ensureConnected(), TEMPORAL_HEALTH_TIMEOUT_MS, 'Temporal health check');
      return;
    }
    await connection.withDeadline(Date.now() + TEMPORAL_HEALTH_TIMEOUT_MS, () =>
      connection.workflowService.getSystemInfo({}),
    );
  }

  /**
   * How many workers poll `taskQueue` for workflow tasks (the worker processes' Temporal health), within
   * TEMPORAL_HEALTH_TIMEOUT_MS; undefined for an injected client without a connection of ours.
   */
  async workflowPollers(taskQueue: string): Promise<number | undefined> {
    const { connection } = await withTimeout(this.connected(), TEMPORAL_HEALTH_TIMEOUT_MS, 'connecting to Temporal');
    if (!connection) return undefined;
    const res = await connection.withDeadline(Date.now() + TEMPORAL_HEALTH_TIMEOUT_MS, () =>
      connection.workflowService.describeTaskQueue({
        namespace: this.config.TEMPORAL_NAMESPACE,
        taskQueue: { name: taskQueue },
        taskQueueType: 1 /* WORKFLOW */,
      }),
    );
    return res.pollers?.length ?? 0;
  }

  private connected(): Promise<{ client: Client; connection?: Connection }> {
    if (this.closed) return Promise.reject(new Error('the Temporal client is closed (shutting down)'));
    if (!this.connecting) {
      const address = this.config.TEMPORAL_ADDRESS;
      if (!address) return Promise.reject(new Error('TEMPORAL_ADDRESS is not set'));
      let attempt!: Promise<{ client: Client; connection?: Connection }>;
      // eslint-disable-next-line prefer-const -- the promise refers to itself below
      attempt = (async () => {
        // lazy + ensureConnected (not Connection.connect) so a failed attempt's channel can be closed.
        const connection = Connection.lazy({
          ...temporalConnectionOptions(this.config),
          connectTimeout: TEMPORAL_CONNECT_TIMEOUT_MS,
        });
        try {
          await connection.ensureConnected();
        } catch (error) {
          await connection.close().catch(() => undefined);
          throw error;
        }
        if (this.closed || this.connecting !== attempt) {
          // Shut down, or replaced (useClient) while connecting.
          await connection.close().catch(() => undefined);
          if (this.closed) throw new Error('the Temporal client is closed (shutting down)');
          return this.connecting!;
        }
        this.logger.log({ msg: 'connected to Temporal', address, namespace: this.config.TEMPORAL_NAMESPACE });
        return { client: new Client({ connection, namespace: this.config.TEMPORAL_NAMESPACE }), connection };
      })();
      this.connecting = attempt;
      const settled = attempt.catch(() => undefined).finally(() => this.attempts.delete(settled));
      this.attempts.add(settled);
      attempt.catch(() => {
        if (this.connecting === attempt) this.connecting = undefined; // the next call tries again
      });
    }
    return this.connecting;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const current = this.connecting;
    this.connecting = undefined;
    await Promise.all([...this.attempts]);
    const connected = await current?.catch(() => undefined);
    await connected?.connection
      ?.close()
      .catch((error: Error) =>
        this.logger.warn({ msg: 'closing the Temporal connection failed', error: error.message }),
      );
  }
}
