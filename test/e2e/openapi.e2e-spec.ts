import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { startTestApp, TestApp } from '../helpers/test-app';

type Operation = OpenAPIV3.OperationObject & Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const TAKES_A_BODY = new Set(['put', 'post', 'patch']);

/**
 * An example beside the schema (`example`, `examples`), in it (`schema.example`), or on each of its properties (a form
 * whose file part is binary).
 */
function hasExample(media: OpenAPIV3.MediaTypeObject): boolean {
  if (media.example !== undefined || media.examples) return true;
  const schema = media.schema as OpenAPIV3.SchemaObject | undefined;
  if (!schema || '$ref' in schema) return false;
  if (schema.example !== undefined) return true;
  const properties = Object.values(schema.properties ?? {}) as OpenAPIV3.SchemaObject[];
  return properties.length > 0 && properties.every((p) => p.example !== undefined || p.format === 'binary');
}

/**
 * Issue 21 §5: the OpenAPI document at /docs-json is complete. Each gap fails the first test naming the operation: a
 * request body without a schema or an example (POST/PUT/PATCH need one unless operations.ts says `body: false`), a
 * response (success and errors) without a schema or an example (unless marked as having no body). Examples and
 * schemas live in apps/api/src/openapi/operations.ts, keyed by operationId.
 */
describe('OpenAPI document', () => {
  let t: TestApp;
  let document: OpenAPIV3.Document;
  beforeAll(async () => {
    t = await startTestApp();
    document = (await t.http.get('/docs-json')).body;
  });
  afterAll(() => t.close());

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item?.[method]).map((method) => ({
        name: `${method.toUpperCase()} ${path} (${item![method]!.operationId})`,
        method,
        operation: item![method] as Operation,
      })),
    );

  it('every request body and every response has a schema and an example', () => {
    const gaps: string[] = [];
    for (const { name, method, operation } of operations()) {
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      if (!body && TAKES_A_BODY.has(method) && !operation['x-no-body']) gaps.push(`${name}: no request body`);
      for (const [type, media] of Object.entries(body?.content ?? {})) {
        if (!media.schema) gaps.push(`${name}: request body ${type} has no schema`);
        if (!hasExample(media)) gaps.push(`${name}: request body ${type} has no example`);
      }
      const responses = Object.entries(operation.responses) as [string, OpenAPIV3.ResponseObject][];
      if (!responses.some(([status]) => /^2/.test(status))) gaps.push(`${name}: no success response`);
      for (const [status, response] of responses) {
        if (response['x-empty-body' as keyof typeof response]) continue;
        const media = Object.values(response.content ?? {})[0];
        if (!media?.schema) gaps.push(`${name}: response ${status} has no schema`);
        if (!media || !hasExample(media)) gaps.push(`${name}: response ${status} has no example`);
      }
    }
    expect(gaps).toEqual([]);
  });

  it('headers: one parameter per name (case-insensitive); Idempotency-Key optional; X-Request-Id everywhere; public operations need no token', () => {
    const problems: string[] = [];
    for (const { name, operation } of operations()) {
      const headers = ((operation.parameters ?? []) as OpenAPIV3.ParameterObject[]).filter((p) => p.in === 'header');
      const names = headers.map((h) => h.name.toLowerCase());
      if (new Set(names).size !== names.length) problems.push(`${name}: duplicate headers ${names.join(', ')}`);
      for (const header of headers) {
        if (header.name.toLowerCase() === 'idempotency-key' && header.required)
          problems.push(`${name}: required ${header.name}`);
      }
      if (operation['x-public'] && operation.security?.length !== 0)
        problems.push(`${name}: public but asks for a token`);
      // every request may send X-Request-Id and every response answers it (docs/observability.md, Logs)
      if (!headers.some((h) => h.name === 'X-Request-Id' && !h.required)) problems.push(`${name}: no X-Request-Id`);
      for (const [status, response] of Object.entries(operation.responses) as [string, OpenAPIV3.ResponseObject][])
        if (!response.headers?.['X-Request-Id']) problems.push(`${name}: response ${status} without X-Request-Id`);
    }
    expect(problems).toEqual([]);
    const webhook = document.paths['/webhook/workflow/{identifier}']!.post!;
    expect(webhook.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', required: false }));
    expect(document.paths['/v1/authenticate']!.post!.security).toEqual([]);
    expect(document.paths['/health/ready']!.get!.security).toEqual([]);
    expect(document.paths['/v2/contacts']!.get!).toMatchObject({ 'x-required-grant': '/contacts' });
    expect(document.paths['/v2/contacts']!.get!.security).toBeUndefined(); // the document's default: the access token
  });

  it('bodies are typed: startNodeId a string, /send-message and /v2/campaigns bodies with their fields', async () => {
    const dereferenced = (await SwaggerParser.dereference(structuredClone(document) as never)) as OpenAPIV3.Document;
    const bodySchema = (path: string, method: 'post' | 'put') =>
      (dereferenced.paths[path]![method]!.requestBody as OpenAPIV3.RequestBodyObject).content['application/json']
        .schema as OpenAPIV3.SchemaObject;
    expect(bodySchema('/v1/workflows', 'post').properties!.startNodeId).toMatchObject({ type: 'string' });
    const template = bodySchema('/send-message/{messagingPhoneId}', 'post');
    const one = template.oneOf![0] as OpenAPIV3.SchemaObject;
    expect(one.required).toEqual(expect.arrayContaining(['templateName', 'to']));
    expect(Object.keys(one.properties!)).toEqual(expect.arrayContaining(['variables', 'callback_url', 'event']));
    expect(bodySchema('/v1/send-message/{messagingPhoneId}', 'post').required).toEqual(
      expect.arrayContaining(['typOfmsg', 'receipentPhone', 'message']),
    );
    expect(bodySchema('/v2/campaigns', 'post').required).toEqual(
      expect.arrayContaining(['name', 'messagingPhoneId', 'templateName']),
    );
  });

  it('the document is valid OpenAPI (@apidevtools/swagger-parser)', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('errors share the ErrorBody schema; a 403 names the grant the operation needs', () => {
    const forbidden = document.paths['/v2/templates']!.get!.responses['403'] as OpenAPIV3.ResponseObject;
    expect(forbidden.content!['application/json']).toEqual({
      schema: { $ref: '#/components/schemas/ErrorBody' },
      example: { statusCode: 403, message: 'Unauthorized to make this request', required_grant: '/templates' },
    });
  });
});
