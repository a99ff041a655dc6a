import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ERROR_BODY_REF, ERROR_BODY_SCHEMA, extensions, sharedErrorResponses } from './error-responses';
import { inferSchema } from './infer-schema';
import { OPERATIONS, type OperationDoc, type ResponseDoc } from './operations';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** X-Request-Id (apps/api/src/request-logging.ts): optional on every request, answered on every response. */
const REQUEST_ID_PARAMETER: ParameterObject = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description:
    'Your id for this request (1–128 characters of A-Z, a-z, 0-9, ".", "_", "-"; otherwise one is made): answered in X-Request-Id, written in our logs and sent with the platform calls the request causes.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$', example: 'order-1234-send' },
};
const REQUEST_ID_HEADER = {
  description: 'The id of this request: yours when acceptable, else a new UUID.',
  schema: { type: 'string' as const, example: 'order-1234-send' },
};

/**
 * What the decorators cannot say, added to the document SwaggerModule builds: for each operation the examples (and
 * schemas where the controller declares none) of apps/api/src/openapi/operations.ts, the shared error responses
 * (400/401/403/429 with the bodies the shared layers write), no access token on public operations, and header
 * parameters merged case-insensitively (the one documented with @ApiHeader wins over the one @Headers() implies), and
 * X-Request-Id on every request and response.
 */
export function completeDocument(document: OpenAPIObject): OpenAPIObject {
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, ErrorBody: ERROR_BODY_SCHEMA };
  document.components.headers = { ...document.components.headers, RequestId: REQUEST_ID_HEADER };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (extensions(operation)['x-public']) operation.security = [];
      const doc = operation.operationId ? OPERATIONS[operation.operationId] : undefined;
      operation.parameters = mergeHeaders([
        ...(doc?.headers ?? []),
        ...((operation.parameters ?? []) as ParameterObject[]),
        REQUEST_ID_PARAMETER,
      ]);
      if (doc) applyOperationDoc(operation, doc);
      for (const [status, response] of Object.entries(sharedErrorResponses(operation))) {
        if (!doc?.notAnswered?.includes(Number(status))) operation.responses[status] ??= response;
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400) defaultToErrorSchema(response as ResponseObject);
        if (response && !('$ref' in response))
          response.headers = { ...response.headers, 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
      }
    }
  }
  return document;
}

function applyOperationDoc(operation: OperationObject, doc: OperationDoc): void {
  if (doc.body === false) {
    extensions(operation)['x-no-body'] = true;
  } else if (doc.body) {
    const body = (operation.requestBody ?? { required: true, content: {} }) as RequestBodyObject;
    const media = (body.content['application/json'] ??= {});
    if (doc.body.schema) media.schema = doc.body.schema;
    media.example = doc.body.example;
    operation.requestBody = body;
  }
  for (const [status, responseDoc] of Object.entries(doc.responses ?? {})) {
    const existing = operation.responses[status] as ResponseObject | undefined;
    operation.responses[status] = documentedResponse(Number(status), existing, responseDoc);
  }
}

function documentedResponse(status: number, existing: ResponseObject | undefined, doc: ResponseDoc): ResponseObject {
  const response: ResponseObject = { ...existing, description: doc.description ?? existing?.description ?? '' };
  if ('empty' in doc) {
    delete response.content;
    extensions(response)['x-empty-body'] = true;
    return response;
  }
  const current = existing?.content?.[doc.mediaType ?? 'application/json']?.schema as
    SchemaObject | ReferenceObject | undefined;
  const schema =
    doc.schema ??
    (hasSchema(current) ? current : status >= 400 ? ERROR_BODY_REF : inferSchema(doc.example, doc.nullable));
  response.content = { [doc.mediaType ?? 'application/json']: { schema, example: doc.example } };
  return response;
}

/** Nest writes `{type: 'object'}` or nothing for a response without a DTO: that says nothing. */
function hasSchema(schema: SchemaObject | ReferenceObject | undefined): schema is SchemaObject | ReferenceObject {
  if (!schema) return false;
  if ('$ref' in schema) return true;
  return !(schema.type === 'object' && !schema.properties && !schema.additionalProperties && !schema.oneOf);
}

function defaultToErrorSchema(response: ResponseObject): void {
  const media = response.content?.['application/json'];
  if (media && !hasSchema(media.schema as SchemaObject | undefined)) media.schema = ERROR_BODY_REF;
}

/** One header parameter per name, compared case-insensitively: the first described one (operations.ts, @ApiHeader) wins. */
function mergeHeaders(parameters: ParameterObject[]): ParameterObject[] {
  const headers = new Map<string, ParameterObject>();
  const others: ParameterObject[] = [];
  for (const parameter of parameters) {
    if (parameter.in !== 'header') {
      others.push(parameter);
      continue;
    }
    const key = parameter.name.toLowerCase();
    const kept = headers.get(key);
    if (!kept || (!kept.description && parameter.description)) headers.set(key, parameter);
  }
  return [...headers.values(), ...others];
}
