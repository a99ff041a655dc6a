import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  isJSONRPCNotification,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders } from 'node:http';

/** What an exchange answers over HTTP: a status and, unless 202, a JSON body. */
export interface ExchangeAnswer {
  status: number;
  body?: unknown;
}

/** A JSON-RPC error that answers no request of its own (`id: null`): the transport's and the endpoint's refusals. */
export const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

const httpError = (status: number, code: number, message: string): ExchangeAnswer => ({
  status,
  body: jsonRpcError(code, message),
});

/**
 * One POST of MCP's Streamable HTTP transport, stateless and answered with JSON, as the SDK's
 * `StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })` answers it, with its
 * rules and messages (Accept, Content-Type, batch size, JSON-RPC shape, one initialize per request, the
 * protocol-version header, 202 for notifications only, a batch's answers in its order), without the web `Request` and
 * `Response` objects and the Node ↔ web conversion that transport goes through: those cost more than the tool call of
 * a list (docs/performance.md, "MCP"). The server speaks to it through the SDK's `Transport` interface.
 */
export class JsonExchange implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly answers = new Map<RequestId, JSONRPCMessage | undefined>();
  private answered?: () => void;
  private closed = false;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.answered?.(); // a server closed early (the client left) answers nothing more: the exchange ends
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if ('method' in message) {
      // a notification (progress, logging) has no stream to travel on in a JSON answer, as in the SDK's JSON mode; a
      // request to the client (ping, elicitation) could never be answered: refused at once rather than after its timeout
      if ('id' in message) throw new Error('A stateless MCP exchange cannot send requests to the client');
      return;
    }
    const id = (message as { id?: RequestId }).id;
    // the first answer to an id is the one sent (as in the SDK, a second one is an error)
    if (id === undefined || !this.answers.has(id) || this.answers.get(id) !== undefined)
      throw new Error(`No request ${String(id)} waits for an answer in this exchange`);
    this.answers.set(id, message);
    if (![...this.answers.values()].includes(undefined)) this.answered?.();
  }

  /** Answers one POST: its headers, its body as Fastify parsed it, the caller's auth. */
  async exchange(headers: IncomingHttpHeaders, body: unknown, authInfo: AuthInfo): Promise<ExchangeAnswer> {
    const accept = headers.accept;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream'))
      return httpError(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    if (!isJsonContentType(headers['content-type']))
      return httpError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE)
      return httpError(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((m) => JSONRPCMessageSchema.parse(m));
    } catch {
      return httpError(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (messages.some(isInitializeRequest)) {
      if (messages.length > 1)
        return httpError(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    } else {
      const version = headers['mcp-protocol-version'];
      if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
        return httpError(
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        );
    }

    const extra = { authInfo, requestInfo: { headers } };
    for (const message of messages) {
      if (isJSONRPCRequest(message)) this.answers.set(message.id, undefined);
      // a request cancelled by a later message of its batch is never answered (the server drops it): not waited for
      else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled')
        this.answers.delete((message.params as { requestId?: RequestId } | undefined)?.requestId as RequestId);
    }
    if (this.answers.size === 0) {
      for (const message of messages) this.onmessage?.(message, extra);
      return { status: 202 };
    }
    const done = new Promise<void>((resolve) => (this.answered = resolve));
    for (const message of messages) this.onmessage?.(message, extra);
    await done;
    if (this.closed) return { status: 503 }; // nobody is left to read it
    const answers = [...this.answers.values()];
    return { status: 200, body: answers.length === 1 ? answers[0] : answers };
  }
}
