import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ChangeNotices, NotifiedCache } from '@switchboard/core/database';
import { DataSource } from 'typeorm';
import { readClientState, type ClientState } from './client-lifecycle';

/**
 * The client rows the guard checks on every request (exists, account, grants, secret version), kept in memory until
 * PostgreSQL announces a change to one: a trigger on api_clients NOTIFYs `api_client_changed` with the client id at
 * commit (deleted, or its grants, secret or account changed; `*` for a TRUNCATE). While that is not heard, every
 * request reads the row (ChangeNotices).
 */
@Injectable()
export class ClientStateCache {
  private readonly states: NotifiedCache<ClientState>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    notices: ChangeNotices,
  ) {
    this.states = new NotifiedCache<ClientState>(notices, 'api_client_changed');
  }

  /** The client's current state; undefined when it does not exist. */
  get(clientId: string): Promise<ClientState | undefined> {
    return this.states.get(clientId, () => readClientState(this.db, clientId));
  }

  /** After a change made by this process: the next request reads again without waiting for the notice. */
  forget(clientId: string): void {
    this.states.forget(clientId);
  }
}
