import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { InboundMessages, type InboundMessage, type InboundMessageListener } from '@switchboard/messaging';
import { DataSource } from 'typeorm';

/**
 * Completed forms: a customer's `nfm_reply` whose `flow_token` is one this account put into a sent flow message
 * (flow_sends) is stored for GET /v2/flows/{flow_id}/responses; replies with an unknown or missing token stay plain
 * messages. Heard from libs/messaging's InboundMessages after the message is stored; idempotent per message (a
 * redelivered webhook is heard again).
 */
@Injectable()
export class FlowResponsesListener implements InboundMessageListener, OnModuleInit {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly inbound: InboundMessages,
  ) {}

  onModuleInit() {
    this.inbound.subscribe(this);
  }

  async onInboundMessage({ accountId, messageId, event }: InboundMessage): Promise<void> {
    if (event.interactiveType !== 'nfm_reply' || !event.flowResponse) return;
    const token = event.flowResponse.flow_token;
    if (typeof token !== 'string' || token.length === 0) return;
    await this.db.query(
      `INSERT INTO flow_responses (account_id, flow_id, flow_token, contact_number, response, message_id, received_at)
       SELECT s.account_id, s.flow_id, s.flow_token, $3, $4, $5, to_timestamp($6)
       FROM flow_sends s WHERE s.account_id = $1 AND s.flow_token = $2
       ON CONFLICT (message_id) DO NOTHING`,
      [accountId, token, event.from, JSON.stringify(event.flowResponse), messageId, event.timestamp],
    );
  }
}
