import { Controller, Delete, Get, HttpException, Inject, Logger, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { AuthService, type AuthenticatedClient, Public, RedisThrottlerStorage } from '@switchboard/auth';
import { AppConfig, REDIS } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type Redis from 'ioredis';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { JsonExchange, jsonRpcError } from './json-exchange';
import { McpServerFactory, type ToolCalls } from './mcp-server.factory';
import { originAllowed, parseAllowedOrigins } from './origin';

/** The tools the `tools/call` messages of a POST (one message or a batch) name, and what else it asks. */
function toolCallsOf(body: unknown): ToolCalls {
  const messages = (Array.isArray(body) ? body : [body]) as Array<{ method?: unknown; params?: { name?: unknown } }>;
  const calls = messages.filter((m) => m?.method === 'tools/call' && typeof m.params?.name === 'string');
  return {
    tools: calls.map((m) => m.params!.name as string),
    onlyCalls: calls.length === messages.length,
    listsTools: messages.some((m) => m?.method === 'tools/list'),
  };
}

/**
 * How many JSON-RPC messages a POST carries, for the rate limit: a batch counts each of its messages (up to the
 * transport's 100; a larger batch is refused), so batching does not multiply what a client may call.
 */
function messagesIn(body: unknown): number {
  return Array.isArray(body) ? Math.min(Math.max(body.length, 1), MAX_BATCH_SIZE) : 1;
}

/**
 * `POST {base_url}/mcp`: the MCP server (Streamable HTTP, stateless, JSON responses). In order: Origin (403), the access
 * token exactly as REST takes it (401 + WWW-Authenticate), the MCP rate limit of the Client ID (429 + Retry-After, its
 * own counter beside the REST one), then a server built for this client's grants answers the JSON-RPC request through
 * a `JsonExchange` (the Streamable HTTP transport's rules, without its web Request/Response round trip). Not behind
 * the global REST guards: @Public (checked here, to answer as OAuth resource servers do) and @SkipThrottle (counted
 * here, apart from REST).
 */
@ApiExcludeController()
@Public()
@SkipThrottle()
@Controller('mcp')
export class McpController {
  private readonly logger = new Logger('Mcp');
  private readonly limiter: RedisThrottlerStorage;
  private readonly allowedOrigins: string[];

  constructor(
    private readonly auth: AuthService,
    private readonly servers: McpServerFactory,
    private readonly config: AppConfig,
    @Inject(REDIS) redis: Redis,
  ) {
    this.limiter = new RedisThrottlerStorage(redis, config.REDIS_PREFIX);
    this.allowedOrigins = parseAllowedOrigins(config.MCP_ALLOWED_ORIGINS);
  }

  @Post()
  async handle(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!originAllowed(request.headers.origin, this.config.baseUrl, this.allowedOrigins)) {
      void reply.status(403).send(jsonRpcError(-32000, `Forbidden: Origin ${request.headers.origin} is not allowed`));
      return;
    }

    const client = await this.authenticate(request, reply);
    if (!client) return;

    const windowMs = this.config.RATE_LIMIT_WINDOW_MS;
    const limit = this.config.MCP_RATE_LIMIT_PER_MINUTE;
    const { isBlocked, timeToExpire } = await this.count(client.clientId, messagesIn(request.body), windowMs, limit);
    if (isBlocked) {
      void reply
        .status(429)
        .header('retry-after', String(timeToExpire))
        .send({
          statusCode: 429,
          message: `Rate limit exceeded: ${limit} MCP requests per ${Math.round(windowMs / 1000)} seconds. Retry after ${timeToExpire} seconds.`,
        });
      return;
    }

    if (reply.raw.destroyed) return; // the client left while it was authenticated and counted
    const server = this.servers.create(client, toolCallsOf(request.body));
    const exchange = new JsonExchange();
    let answered = false;
    // a client that leaves before its answer closes the server (its handlers are aborted, the exchange ends)
    reply.raw.once('close', () => answered || void server.close());
    try {
      await server.connect(exchange);
      const answer = await exchange.exchange(request.headers, request.body, {
        token: client.token,
        clientId: client.clientId,
        scopes: client.grants,
        extra: { accountId: client.accountId },
      });
      answered = true;
      void reply.status(answer.status).send(answer.body);
    } catch (error) {
      answered = true;
      this.logger.error({
        msg: 'MCP request failed',
        requestId: request.id,
        err: error instanceof Error ? error.stack : error,
      });
      void reply.status(500).send(jsonRpcError(-32603, 'Internal server error'));
    } finally {
      void server.close(); // what a handler may still hold (a timer of a request to the client) ends with the exchange
    }
  }

  /** Counts `hits` requests of the client; blocked at the first over the limit (a batch is refused whole). */
  private async count(clientId: string, hits: number, windowMs: number, limit: number) {
    let record = await this.limiter.increment(`mcp:client:${clientId}`, windowMs, limit);
    for (let i = 1; i < hits && !record.isBlocked; i++)
      record = await this.limiter.increment(`mcp:client:${clientId}`, windowMs, limit);
    return record;
  }

  /** GET (server-to-client SSE stream) and DELETE (session end) need sessions: this server is stateless (MCP spec: 405). */
  @Get()
  get(@Res() reply: FastifyReply): void {
    this.methodNotAllowed(reply);
  }

  @Delete()
  delete(@Res() reply: FastifyReply): void {
    this.methodNotAllowed(reply);
  }

  private methodNotAllowed(reply: FastifyReply): void {
    void reply
      .status(405)
      .header('allow', 'POST')
      .send(jsonRpcError(-32000, 'Method not allowed: this MCP server is stateless; use POST'));
  }

  /** The token as REST takes it (with or without `Bearer `); failures answer 401 with REST's message and a Bearer challenge. */
  private async authenticate(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<(AuthenticatedClient & { token: string }) | null> {
    const token = request.headers.authorization?.replace(/^Bearer\s+/i, '').trim();
    let message = 'jwt must be provided';
    if (token) {
      try {
        // as REST's guard: the client is re-read, so a deleted client or a rotated secret is refused at once
        return { ...(await this.auth.authenticateAccessToken(token)), token };
      } catch (error) {
        if (!(error instanceof HttpException)) throw error;
        message = (error.getResponse() as { message: string }).message;
      }
    }
    const challenge = token
      ? `Bearer realm="switchboard", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`
      : 'Bearer realm="switchboard"';
    void reply.status(401).header('www-authenticate', challenge).send({ message });
    return null;
  }
}
