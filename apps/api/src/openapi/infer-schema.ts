import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * A schema read off an example: the types of its members, every member of an object required, an array's items from
 * the union of its elements' members. Used only for responses whose controller declares no schema; `null` members
 * become `nullable` with the type given in `nullable` (by member name), or a string.
 */
export function inferSchema(example: unknown, nullable: Record<string, SchemaObject['type']> = {}): SchemaObject {
  return infer(example, undefined, nullable);
}

function infer(value: unknown, name: string | undefined, nullable: Record<string, SchemaObject['type']>): SchemaObject {
  if (value === null) return { type: (name && nullable[name]) || 'string', nullable: true };
  if (Array.isArray(value)) {
    if (value.length === 0) return { type: 'array', items: {} };
    const objects = value.filter((item) => item !== null && typeof item === 'object' && !Array.isArray(item));
    if (objects.length === value.length) {
      const items = infer(mergeObjects(objects), name, nullable);
      const inEvery = (key: string) => objects.every((object) => key in object);
      if (items.required) items.required = items.required.filter(inEvery);
      return { type: 'array', items };
    }
    return { type: 'array', items: infer(value[0], name, nullable) };
  }
  switch (typeof value) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: Number.isInteger(value) ? 'integer' : 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'object': {
      const entries = Object.entries(value as Record<string, unknown>);
      return {
        type: 'object',
        properties: Object.fromEntries(entries.map(([key, member]) => [key, infer(member, key, nullable)])),
        ...(entries.length ? { required: entries.map(([key]) => key) } : {}),
      };
    }
    default:
      return {};
  }
}

/** One object with every member any of them has (the first non-null value of each). */
function mergeObjects(objects: object[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const object of objects) {
    for (const [key, member] of Object.entries(object)) {
      if (merged[key] === undefined || merged[key] === null) merged[key] = member;
    }
  }
  return merged;
}
