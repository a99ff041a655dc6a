import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { EmptyResultSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { JsonExchange } from './json-exchange';

const authInfo = { token: 't', clientId: 'c', scopes: ['/templates'], extra: { accountId: '1' } };

function server(): McpServer {
  const s = new McpServer({ name: 'parity', version: '1.0.0' });
  s.registerTool('echo', { description: 'echoes', inputSchema: { text: z.string() } }, async ({ text }, extra) => ({
    content: [{ type: 'text', text: `${text} (${extra.authInfo?.clientId})` }],
  }));
  s.registerTool('slow', { description: 'answers after 30 ms' }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { content: [{ type: 'text', text: 'slow' }] };
  });
  s.registerTool('fails', { description: 'throws' }, async () => {
    throw new Error('it broke');
  });
  s.registerTool('pings', { description: 'asks the client' }, async (extra) => {
    const error = await extra.sendRequest({ method: 'ping' }, EmptyResultSchema).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    return { content: [{ type: 'text', text: error }] };
  });
  return s;
}

/** What the SDK's own stateless JSON transport answers for this POST. */
async function sdkAnswer(headers: Record<string, string>, body: unknown) {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server().connect(transport);
  const response = await transport.handleRequest(
    new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(body) }),
    { authInfo, parsedBody: body },
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function ourAnswer(headers: Record<string, string>, body: unknown) {
  const exchange = new JsonExchange();
  await server().connect(exchange);
  return exchange.exchange(headers, body, authInfo);
}

const json = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const call = (id: number | string, text: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text } },
});
const callTool = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } });
const notification = () => ({ jsonrpc: '2.0', method: 'notifications/initialized' });
const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
});

describe('JsonExchange answers each POST as the SDK’s stateless JSON transport does', () => {
  const cases: Array<[string, Record<string, string>, unknown]> = [
    ['a tool call', json, call(1, 'hi')],
    ['initialize', json, initialize(1)],
    ['tools/list', json, { jsonrpc: '2.0', id: 'a', method: 'tools/list' }],
    ['an unknown method', json, { jsonrpc: '2.0', id: 2, method: 'nope' }],
    ['a tool call with bad arguments', json, { ...call(3, 'x'), params: { name: 'echo', arguments: { text: 1 } } }],
    [
      'a batch, answered in its order',
      json,
      [call(1, 'one'), { jsonrpc: '2.0', method: 'notifications/x' }, call(2, 'two')],
    ],
    ['a notification only (202)', json, { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['no text/event-stream in Accept (406)', { ...json, accept: 'application/json' }, call(1, 'hi')],
    ['a Content-Type other than JSON (415)', { ...json, 'content-type': 'text/plain' }, call(1, 'hi')],
    ['Content-Type with a charset', { ...json, 'content-type': 'application/json; charset=utf-8' }, call(1, 'hi')],
    ['not JSON-RPC (400)', json, { hello: 'world' }],
    ['a batch of 101 (400)', json, Array.from({ length: 101 }, (_, i) => call(i, 'x'))],
    ['two initialize requests (400)', json, [initialize(1), initialize(2)]],
    ['an unsupported protocol version (400)', { ...json, 'mcp-protocol-version': '1999-01-01' }, call(1, 'hi')],
    ['a supported protocol version', { ...json, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, call(1, 'hi')],
    ['initialize with an unsupported version header', { ...json, 'mcp-protocol-version': '1999-01-01' }, initialize(1)],
    ['a batch whose first call answers last', json, [callTool(1, 'slow'), call(2, 'fast')]],
    ['a one-element batch', json, [call(1, 'alone')]],
    ['two requests with one id (the first answer is sent)', json, [call(1, 'one'), call(1, 'two')]],
    ['ids 1 and "1" in one batch', json, [call(1, 'number'), call('1', 'string')]],
    ['a batch of exactly 100', json, Array.from({ length: 100 }, (_, i) => call(i, 'x'))],
    ['responses and notifications only (202)', json, [{ jsonrpc: '2.0', id: 9, result: {} }, notification()]],
    ['a tool that throws', json, callTool(1, 'fails')],
    ['no Accept header (406)', { 'content-type': 'application/json' }, call(1, 'hi')],
    ['no Content-Type header (415)', { accept: json.accept }, call(1, 'hi')],
  ];

  it.each(cases)('%s', async (_name, headers, body) => {
    const [ours, sdk] = await Promise.all([ourAnswer(headers, body), sdkAnswer(headers, body)]);
    expect(ours).toEqual(sdk);
  });
});

describe('JsonExchange where the SDK transport never answers', () => {
  it('a request cancelled by a later message of its batch is not waited for; the others are answered', async () => {
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } };
    expect(await ourAnswer(json, [callTool(1, 'slow'), cancel, call(2, 'kept')])).toEqual({
      status: 200,
      body: expect.objectContaining({ id: 2 }), // one answer left: sent alone, as the SDK sends one
    });
    expect(await ourAnswer(json, [callTool(1, 'slow'), cancel])).toEqual({ status: 202 });
  });

  it('a server closed during the call (the client left) ends the exchange', async () => {
    const exchange = new JsonExchange();
    const s = server();
    await s.connect(exchange);
    const answer = exchange.exchange(json, callTool(1, 'slow'), authInfo);
    await s.close();
    expect(await answer).toEqual({ status: 503 });
  });

  it("a handler's request to the client fails at once (it could never be answered), not after its 60-s timeout", async () => {
    const started = Date.now();
    const answer = await ourAnswer(json, callTool(1, 'pings'));
    expect(answer.body).toMatchObject({
      id: 1,
      result: { content: [{ text: 'A stateless MCP exchange cannot send requests to the client' }] },
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
