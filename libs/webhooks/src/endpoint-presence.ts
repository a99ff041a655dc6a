import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ChangeNotices, NotifiedCache } from '@switchboard/core/database';
import { DataSource } from 'typeorm';

/**
 * Whether an account has any webhook endpoint, kept in memory until PostgreSQL announces that one of the account's
 * endpoints was created or deleted (`NOTIFY webhook_endpoint_changed` with the account id, migration 1764180000000).
 * A writer whose change has no account event to record for such accounts can then skip the outbox and its transaction
 * (MessageEventsService: a campaign's statuses). An endpoint created while a change is being written may miss that
 * change's event (until the notice arrives, milliseconds after its commit), as one committed a moment after the change
 * would.
 */
@Injectable()
export class WebhookEndpointPresence {
  private readonly present: NotifiedCache<boolean>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    notices: ChangeNotices,
  ) {
    this.present = new NotifiedCache<boolean>(notices, 'webhook_endpoint_changed');
  }

  /** True when any of the accounts has an endpoint (enabled or not: the outbox records events for both). */
  async anyOf(accountIds: Iterable<string>): Promise<boolean> {
    const answers = await Promise.all([...new Set(accountIds)].map((id) => this.has(id)));
    return answers.includes(true);
  }

  private has(accountId: string): Promise<boolean> {
    return this.present.get(accountId, async () => {
      const [row] = await this.db.query(
        `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE account_id = $1) AS has`,
        [accountId],
      );
      return row.has as boolean;
    });
  }
}
