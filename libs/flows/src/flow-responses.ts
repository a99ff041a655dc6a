/**
 * Completed forms: called by the message store (libs/messaging `MessageEventsService.recordInbound`) inside the
 * transaction that stores an inbound `nfm_reply`, so the message and its flow response are written together.
 * Plain SQL over the caller's transaction: no Nest, and no import of libs/messaging (which imports this).
 */

/** Anything with TypeORM's `query` (an EntityManager, a DataSource, a QueryRunner). */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export interface InboundFlowReply {
  accountId: string;
  /** messages.id of the stored inbound message */
  messageId: string;
  /** the customer's number (digits) */
  from: string;
  /** the parsed `nfm_reply.response_json` */
  flowResponse: Record<string, unknown>;
  /** unix seconds */
  timestamp: number;
}

/**
 * Stores the response when its `flow_token` is one this account put into a sent flow message (flow_sends); replies
 * with an unknown or missing token are left as plain messages. Idempotent per message.
 */
export async function recordFlowResponse(db: SqlRunner, reply: InboundFlowReply): Promise<void> {
  const token = reply.flowResponse?.flow_token;
  if (typeof token !== 'string' || token.length === 0) return;
  await db.query(
    `INSERT INTO flow_responses (account_id, flow_id, flow_token, contact_number, response, message_id, received_at)
     SELECT s.account_id, s.flow_id, s.flow_token, $3, $4, $5, to_timestamp($6)
     FROM flow_sends s WHERE s.account_id = $1 AND s.flow_token = $2
     ON CONFLICT (message_id) DO NOTHING`,
    [reply.accountId, token, reply.from, JSON.stringify(reply.flowResponse), reply.messageId, reply.timestamp],
  );
}
