/**
 * JSON Schema (draft 2020-12) of a workflow definition, for docs and OpenAPI. It describes the shape
 * only; validateDefinition is the authority (it also checks edges, cycles, template syntax and durations).
 */
import { CONDITION_OPERATORS, HTTP_METHODS } from './definition';

const template = {
  type: 'string',
  description: 'Template string: text with {{path}} bindings (payload, contact, reply, vars).',
};
const templateMap = { type: 'object', additionalProperties: template };
const nodeId = { type: 'string', minLength: 1, description: 'Id of another node.' };
const duration = {
  description: 'Positive integer of seconds, or a string like "30s", "15m", "2h", "1d" (max 365d).',
  oneOf: [
    { type: 'integer', minimum: 1 },
    { type: 'string', pattern: '^[1-9][0-9]*[smhd]$' },
  ],
};
const editorFields = {
  label: { type: 'string' },
  description: { type: 'string' },
  position: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } } },
};

function node(type: string, properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { id: { type: 'string', minLength: 1 }, type: { const: type }, ...editorFields, ...properties },
    required: ['id', 'type', ...required],
    additionalProperties: false,
  };
}

const effectEdges = {
  next: nodeId,
  onError: {
    ...nodeId,
    description: 'Node to continue at when the effect fails (vars.lastError is set); without it the run fails.',
  },
};

export const workflowDefinitionSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://switchboard.dev/schemas/workflow-definition.json',
  title: 'WorkflowDefinition',
  type: 'object',
  properties: {
    trigger: {
      oneOf: [
        { type: 'object', properties: { type: { const: 'webhook' } }, required: ['type'], additionalProperties: false },
        {
          type: 'object',
          properties: {
            type: { const: 'keyword' },
            keywords: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
          },
          required: ['type', 'keywords'],
          additionalProperties: false,
        },
      ],
    },
    startNodeId: nodeId,
    nodes: { type: 'array', minItems: 1, maxItems: 500, items: { $ref: '#/$defs/node' } },
  },
  required: ['trigger', 'startNodeId', 'nodes'],
  additionalProperties: false,
  $defs: {
    node: {
      oneOf: [
        { $ref: '#/$defs/send_template' },
        { $ref: '#/$defs/send_session_message' },
        { $ref: '#/$defs/delay' },
        { $ref: '#/$defs/wait_for_reply' },
        { $ref: '#/$defs/condition' },
        { $ref: '#/$defs/trigger_campaign' },
        { $ref: '#/$defs/http_request' },
        { $ref: '#/$defs/update_contact' },
        { $ref: '#/$defs/end' },
      ],
    },
    send_template: node(
      'send_template',
      {
        templateName: { type: 'string', minLength: 1 },
        to: { ...template, default: '{{contact.phone}}' },
        variables: {
          ...templateMap,
          description: 'Key order is kept (body variables are filled in key order); integer-like keys are rejected.',
        },
        mediaUrl: template,
        ...effectEdges,
      },
      ['templateName', 'next'],
    ),
    send_session_message: node(
      'send_session_message',
      {
        to: { ...template, default: '{{contact.phone}}' },
        text: template,
        buttons: {
          type: 'array',
          minItems: 1,
          maxItems: 3,
          items: {
            type: 'object',
            properties: { text: template, payload: template },
            required: ['text'],
            additionalProperties: false,
          },
        },
        ...effectEdges,
      },
      ['text', 'next'],
    ),
    delay: node('delay', { duration, next: nodeId }, ['duration', 'next']),
    wait_for_reply: node(
      'wait_for_reply',
      {
        timeout: duration,
        onTimeout: nodeId,
        branches: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            properties: {
              match: {
                oneOf: [
                  { type: 'object', properties: { type: { const: 'any' } }, required: ['type'] },
                  {
                    type: 'object',
                    properties: { type: { const: 'button' }, payload: { type: 'string', minLength: 1 } },
                    required: ['type', 'payload'],
                  },
                  {
                    type: 'object',
                    properties: {
                      type: { const: 'keyword' },
                      keywords: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
                    },
                    required: ['type', 'keywords'],
                  },
                ],
              },
              next: nodeId,
            },
            required: ['match', 'next'],
            additionalProperties: false,
          },
        },
      },
      ['timeout', 'branches', 'onTimeout'],
    ),
    condition: node(
      'condition',
      {
        rules: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            properties: {
              left: template,
              operator: { enum: [...CONDITION_OPERATORS] },
              right: { oneOf: [template, { type: 'array', minItems: 1, items: template }] },
              caseSensitive: { type: 'boolean', default: false },
              next: nodeId,
            },
            required: ['left', 'operator', 'next'],
            additionalProperties: false,
          },
        },
        else: nodeId,
      },
      ['rules', 'else'],
    ),
    trigger_campaign: node(
      'trigger_campaign',
      {
        campaignId: {
          oneOf: [
            { type: 'string', minLength: 1 },
            { type: 'integer', minimum: 1 },
          ],
        },
        contact: {
          type: 'object',
          properties: {
            phoneNumber: { ...template, default: '{{contact.phone}}' },
            name: template,
            email: template,
            variables: templateMap,
          },
          additionalProperties: false,
        },
        ...effectEdges,
      },
      ['campaignId', 'next'],
    ),
    http_request: node(
      'http_request',
      {
        method: { enum: [...HTTP_METHODS] },
        url: template,
        headers: templateMap,
        body: { description: 'Any JSON; string leaves are templates.' },
        saveAs: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'vars[saveAs] = { status, body }' },
        ...effectEdges,
      },
      ['method', 'url', 'next'],
    ),
    update_contact: node('update_contact', { fields: { ...templateMap, minProperties: 1 }, ...effectEdges }, [
      'fields',
      'next',
    ]),
    end: node('end', {}, []),
  },
} as const;
