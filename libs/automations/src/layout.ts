import { BadRequestException } from '@nestjs/common';
import { MAX_NODES } from '@switchboard/engine';

/**
 * Where the builder draws each node: `{ nodes: { <nodeId>: { x, y } }, trigger?: { x, y } }`. Stored beside the
 * definition (per version and in the draft); the engine never reads it.
 */
export interface WorkflowLayout {
  nodes: Record<string, { x: number; y: number }>;
  trigger?: { x: number; y: number };
}

const isPoint = (p: unknown): p is { x: number; y: number } =>
  typeof p === 'object' &&
  p !== null &&
  Number.isFinite((p as { x: unknown }).x) &&
  Number.isFinite((p as { y: unknown }).y);

/** A layout from a request body (undefined/null → null), or a 400 naming the field. */
export function parseLayout(value: unknown): WorkflowLayout | null {
  if (value === undefined || value === null) return null;
  const fail = (field: string, message: string) =>
    new BadRequestException({
      statusCode: 400,
      message: `${field} ${message}`,
      errors: [{ field, message: `${field} ${message}` }],
    });
  if (typeof value !== 'object' || Array.isArray(value))
    throw fail('layout', 'must be an object { nodes: { <nodeId>: { x, y } }, trigger?: { x, y } }');
  const { nodes, trigger } = value as { nodes?: unknown; trigger?: unknown };
  if (typeof nodes !== 'object' || nodes === null || Array.isArray(nodes))
    throw fail('layout.nodes', 'must be an object of { x, y } by node id');
  const entries = Object.entries(nodes as Record<string, unknown>);
  if (entries.length > MAX_NODES) throw fail('layout.nodes', `has more than ${MAX_NODES} entries`);
  const out: WorkflowLayout = { nodes: {} };
  for (const [id, point] of entries) {
    if (!isPoint(point)) throw fail(`layout.nodes.${id}`, 'must be { x, y } with finite numbers');
    out.nodes[id] = { x: point.x, y: point.y };
  }
  if (trigger !== undefined) {
    if (!isPoint(trigger)) throw fail('layout.trigger', 'must be { x, y } with finite numbers');
    out.trigger = { x: trigger.x, y: trigger.y };
  }
  return out;
}
