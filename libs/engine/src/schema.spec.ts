import { CONDITION_OPERATORS, HTTP_METHODS, NODE_TYPES } from './definition';
import { workflowDefinitionSchema } from './schema';

describe('workflowDefinitionSchema', () => {
  const schema = workflowDefinitionSchema as any;

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  it('describes the top-level shape', () => {
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['trigger', 'startNodeId', 'nodes']);
    expect(schema.properties.trigger.oneOf.map((t: any) => t.properties.type.const)).toEqual(['webhook', 'keyword']);
  });

  it('has a definition for every node type, referenced from the node union', () => {
    const refs = schema.$defs.node.oneOf.map((r: any) => r.$ref.replace('#/$defs/', ''));
    expect(refs).toEqual([...NODE_TYPES]);
    for (const type of NODE_TYPES) {
      expect(schema.$defs[type].properties.type).toEqual({ const: type });
      expect(schema.$defs[type].required).toEqual(expect.arrayContaining(['id', 'type']));
    }
  });

  it('lists the operators and methods the validator accepts', () => {
    expect(schema.$defs.condition.properties.rules.items.properties.operator.enum).toEqual([...CONDITION_OPERATORS]);
    expect(schema.$defs.http_request.properties.method.enum).toEqual([...HTTP_METHODS]);
  });

  it('marks the required fields of each node', () => {
    expect(schema.$defs.wait_for_reply.required).toEqual(['id', 'type', 'timeout', 'branches', 'onTimeout']);
    expect(schema.$defs.send_template.required).toEqual(['id', 'type', 'templateName', 'next']);
    expect(schema.$defs.condition.required).toEqual(['id', 'type', 'rules', 'else']);
  });
});
