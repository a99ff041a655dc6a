import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AppConfig } from '@switchboard/core';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { readClientState, type ClientState } from './client-lifecycle';

const CHANNEL = 'api_client_changed';
const MAX_ENTRIES = 10_000;
const RECONNECT_MS = 1_000;

/**
 * The client rows the guard checks on every request (exists, account, grants, secret version), kept in memory for as
 * long as PostgreSQL tells this process about every change to them. A trigger on api_clients NOTIFYs the client id at
 * commit, whoever made the change (this API, another API process, the operator CLI, a cascade, plain SQL), and the
 * entry is dropped. While the listening connection is not up (before the first request, after it was lost) nothing is
 * kept: every request reads the row, as it did before this cache.
 */
@Injectable()
export class ClientStateCache implements OnModuleDestroy {
  private readonly logger = new Logger(ClientStateCache.name);
  private readonly states = new Map<string, ClientState>();
  private readonly reads = new Map<string, Promise<ClientState | undefined>>();
  /** Bumped by every change and by every change of the listener's state: a read begun before it is not kept. */
  private generation = 0;
  private listener?: Client;
  private listening = false;
  private retrying = false;
  private closed = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** The client's current state; undefined when it does not exist (not kept: a client created later is found). */
  get(clientId: string): Promise<ClientState | undefined> {
    const known = this.states.get(clientId);
    if (known) return Promise.resolve(known);
    if (!this.listener && !this.retrying) void this.listen();
    // Concurrent requests of one client share one read.
    let read = this.reads.get(clientId);
    if (!read) {
      const generation = this.generation;
      read = readClientState(this.db, clientId).then((state) => {
        if (this.reads.get(clientId) === read) this.reads.delete(clientId);
        if (state && this.listening && generation === this.generation) {
          if (this.states.size >= MAX_ENTRIES) this.states.clear();
          this.states.set(clientId, state);
        }
        return state;
      });
      read.catch(() => this.reads.get(clientId) === read && this.reads.delete(clientId));
      this.reads.set(clientId, read);
    }
    return read;
  }

  /** Drops what is known of one client (`*`: of all), and any read of it in flight, so the next request reads again. */
  forget(clientId: string): void {
    this.generation++;
    if (clientId === '*') {
      this.states.clear();
      this.reads.clear();
    } else {
      this.states.delete(clientId);
      this.reads.delete(clientId);
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const listener = new Client({ connectionString: this.config.DATABASE_URL });
    this.listener = listener;
    listener.on('notification', (notice) => this.forget(notice.payload ?? '*'));
    const lost = (error?: Error) => {
      if (this.listener !== listener) return;
      this.listening = false;
      this.forget('*');
      this.listener = undefined;
      listener.end().catch(() => undefined);
      if (this.closed) return;
      this.logger.warn(
        `client changes: listening connection lost (${error?.message ?? 'ended'}); reading every request`,
      );
      this.retrying = true;
      setTimeout(() => {
        this.retrying = false;
        void this.listen();
      }, RECONNECT_MS).unref();
    };
    listener.on('error', lost);
    listener.on('end', () => lost());
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
      if (this.listener !== listener) return;
      this.forget('*'); // a change made before LISTEN took effect was not heard
      this.listening = true;
    } catch (error) {
      lost(error as Error);
    }
  }
}
