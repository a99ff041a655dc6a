import type {
  OperationObject,
  ParameterObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** The one error shape (libs/core/src/http/error-body.ts, docs/errors.md), as components.schemas.ErrorBody. */
export const ERROR_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  description:
    'Every 4xx and 5xx: `message` is a sentence for a person, `field` the input at fault (the first of `errors`); other members where an endpoint documents them (docs/errors.md)',
  required: ['statusCode', 'message'],
  properties: {
    statusCode: { type: 'integer', description: 'the HTTP status, repeated' },
    message: { type: 'string' },
    field: { type: 'string', description: 'the body path, query or path parameter at fault' },
    errors: {
      type: 'array',
      description: 'every validation problem found',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  additionalProperties: true,
};

/** The `x-…` members of a document object (the OpenAPI types do not list them). */
export function extensions(object: object): Record<string, unknown> {
  return object as Record<string, unknown>;
}

export const ERROR_BODY_REF: ReferenceObject = { $ref: '#/components/schemas/ErrorBody' };

export function errorResponse(description: string, example: unknown): ResponseObject {
  return { description, content: { 'application/json': { schema: ERROR_BODY_REF, example } } };
}

/**
 * The errors every operation of a kind can answer, with the bodies the shared layers really write (request rules,
 * the auth guard, the rate limit): added where an operation does not document its own.
 */
export function sharedErrorResponses(operation: OperationObject): Record<string, ResponseObject> {
  const responses: Record<string, ResponseObject> = {};
  const parameters = (operation.parameters ?? []) as ParameterObject[];
  const inputs = parameters.filter((p) => p.in === 'path' || p.in === 'query');
  if (operation.requestBody) {
    responses['400'] = errorResponse('The body is not JSON, or a field is missing or malformed (named in `field`)', {
      statusCode: 400,
      message: 'The request body is not valid JSON',
    });
  } else if (inputs.length) {
    const name = inputs[0].name;
    const message = `${name} must not contain NUL characters (U+0000)`;
    responses['400'] = errorResponse('A path or query parameter is malformed (named in `field`)', {
      statusCode: 400,
      message,
      field: name,
      errors: [{ field: name, message }],
    });
  }
  const grant = extensions(operation)['x-required-grant'];
  if (!extensions(operation)['x-public']) {
    responses['401'] = errorResponse('No access token, or an expired or invalid one', {
      statusCode: 401,
      message: 'jwt expired',
    });
  }
  if (typeof grant === 'string') {
    responses['403'] = errorResponse(`The client lacks the ${grant} grant`, {
      statusCode: 403,
      message: 'Unauthorized to make this request',
      required_grant: grant,
    });
  }
  responses['429'] = {
    ...errorResponse('Rate limit exceeded; Retry-After says when to try again', {
      statusCode: 429,
      message: 'Rate limit exceeded: 105 requests per 60 seconds. Retry after 42 seconds.',
    }),
    headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } },
  };
  return responses;
}
