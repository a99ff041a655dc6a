/**
 * The builder's model: the workflow definition itself (libs/engine's format) plus a layout of positions. Every edit
 * is a pure function from one {definition, layout} to the next, so undo/redo is a stack of snapshots and the
 * canvas (React Flow nodes and edges) is derived, never a second copy of the graph.
 */
import { outgoingEdges, type NodeType } from '@switchboard/engine';

export interface Point {
  x: number;
  y: number;
}
export interface Layout {
  nodes: Record<string, Point>;
  trigger?: Point;
}
export interface Definition {
  trigger: { type: 'webhook' } | { type: 'keyword'; keywords: string[] };
  startNodeId: string;
  nodes: Array<Record<string, any> & { id: string; type: NodeType }>;
}
export interface Model {
  definition: Definition;
  layout: Layout;
}

/** The trigger is drawn as a node with this id; its one edge is the definition's startNodeId. */
export const TRIGGER_ID = '__trigger';
export const START_HANDLE = 'start';

export interface KindInfo {
  label: string;
  color: string;
  /** Fields of a node dropped from the palette (edges left open: the engine reports them until connected). */
  create: () => Record<string, unknown>;
}

export const KINDS: Record<NodeType, KindInfo> = {
  send_template: { label: 'Send template', color: '#2563eb', create: () => ({ templateName: '', variables: {} }) },
  send_session_message: { label: 'Send message', color: '#0891b2', create: () => ({ text: '' }) },
  delay: { label: 'Delay', color: '#7c3aed', create: () => ({ duration: '1h' }) },
  wait_for_reply: {
    label: 'Wait for reply',
    color: '#d97706',
    create: () => ({ timeout: '1d', branches: [{ match: { type: 'any' } }] }),
  },
  condition: {
    label: 'Condition',
    color: '#db2777',
    create: () => ({ rules: [{ left: '{{payload.value}}', operator: 'equals', right: '' }] }),
  },
  trigger_campaign: { label: 'Trigger campaign', color: '#059669', create: () => ({ campaignId: '' }) },
  http_request: { label: 'HTTP request', color: '#475569', create: () => ({ method: 'POST', url: 'https://' }) },
  update_contact: {
    label: 'Update contact',
    color: '#65a30d',
    create: () => ({ fields: { name: '{{payload.name}}' } }),
  },
  end: { label: 'End', color: '#111827', create: () => ({}) },
};
export const PALETTE = Object.keys(KINDS) as NodeType[];

export interface HandleInfo {
  /** The definition field the edge is stored in, e.g. `next`, `onError`, `branches[1].next`, `else`. */
  id: string;
  label: string;
  kind: 'next' | 'error' | 'branch' | 'timeout' | 'else';
}

/** Every outgoing edge a node can have, connected or not (one handle each). */
export function sourceHandles(node: Definition['nodes'][number]): HandleInfo[] {
  switch (node.type) {
    case 'end':
      return [];
    case 'delay':
      return [{ id: 'next', label: 'next', kind: 'next' }];
    case 'wait_for_reply':
      return [
        ...(Array.isArray(node.branches) ? node.branches : []).map((b: any, i: number) => ({
          id: `branches[${i}].next`,
          label: branchLabel(b),
          kind: 'branch' as const,
        })),
        { id: 'onTimeout', label: 'timeout', kind: 'timeout' },
      ];
    case 'condition':
      return [
        ...(Array.isArray(node.rules) ? node.rules : []).map((r: any, i: number) => ({
          id: `rules[${i}].next`,
          label: `rule ${i + 1}`,
          kind: 'branch' as const,
        })),
        { id: 'else', label: 'else', kind: 'else' },
      ];
    default:
      return [
        { id: 'next', label: 'next', kind: 'next' },
        { id: 'onError', label: 'on error', kind: 'error' },
      ];
  }
}

export function branchLabel(branch: any): string {
  const m = branch?.match;
  if (!m || m.type === 'any') return 'any reply';
  if (m.type === 'button') return `button "${m.payload ?? ''}"`;
  if (m.type === 'keyword') return `"${(m.keywords ?? []).join('", "')}"`;
  return 'branch';
}

export interface GraphEdge {
  id: string;
  source: string;
  sourceHandle: string;
  target: string;
  kind: HandleInfo['kind'] | 'start';
  label?: string;
}

/** The edges drawn: one per connected handle whose target exists (plus trigger → start node). */
export function edgesOf(definition: Definition): GraphEdge[] {
  const ids = new Set(definition.nodes.map((n) => n.id));
  const edges: GraphEdge[] = [];
  if (definition.startNodeId && ids.has(definition.startNodeId))
    edges.push({
      id: `${TRIGGER_ID}:${START_HANDLE}`,
      source: TRIGGER_ID,
      sourceHandle: START_HANDLE,
      target: definition.startNodeId,
      kind: 'start',
    });
  for (const node of definition.nodes) {
    const handles = new Map(sourceHandles(node).map((h) => [h.id, h]));
    for (const edge of outgoingEdges(node as any)) {
      if (typeof edge.target !== 'string' || !ids.has(edge.target)) continue;
      const handle = handles.get(edge.field);
      edges.push({
        id: `${node.id}:${edge.field}`,
        source: node.id,
        sourceHandle: edge.field,
        target: edge.target,
        kind: handle?.kind ?? 'next',
        label: handle && handle.kind !== 'next' ? handle.label : undefined,
      });
    }
  }
  return edges;
}

const INDEXED = /^(branches|rules)\[(\d+)\]\.next$/;

/** The node with `field` (a handle id) set to `target`, or unset when target is undefined. */
function withEdge(
  node: Definition['nodes'][number],
  field: string,
  target: string | undefined,
): Definition['nodes'][number] {
  const indexed = INDEXED.exec(field);
  if (indexed) {
    const list = [...(node[indexed[1]] ?? [])];
    const index = Number(indexed[2]);
    const item = { ...(list[index] ?? {}) };
    if (target === undefined) delete item.next;
    else item.next = target;
    list[index] = item;
    return { ...node, [indexed[1]]: list };
  }
  const copy = { ...node };
  if (target === undefined) delete copy[field];
  else copy[field] = target;
  return copy;
}

export function connect(model: Model, source: string, handle: string, target: string): Model {
  if (target === TRIGGER_ID || source === target) return model;
  if (source === TRIGGER_ID) return { ...model, definition: { ...model.definition, startNodeId: target } };
  return {
    ...model,
    definition: {
      ...model.definition,
      nodes: model.definition.nodes.map((n) => (n.id === source ? withEdge(n, handle, target) : n)),
    },
  };
}

export function disconnect(model: Model, source: string, handle: string): Model {
  if (source === TRIGGER_ID) return { ...model, definition: { ...model.definition, startNodeId: '' } };
  return {
    ...model,
    definition: {
      ...model.definition,
      nodes: model.definition.nodes.map((n) => (n.id === source ? withEdge(n, handle, undefined) : n)),
    },
  };
}

export function newNodeId(definition: Definition, type: NodeType): string {
  const ids = new Set(definition.nodes.map((n) => n.id));
  for (let i = 1; ; i++) if (!ids.has(`${type}_${i}`)) return `${type}_${i}`;
}

export function addNode(model: Model, type: NodeType, position: Point): { model: Model; id: string } {
  const id = newNodeId(model.definition, type);
  const node = { id, type, ...KINDS[type].create() } as Definition['nodes'][number];
  const definition = { ...model.definition, nodes: [...model.definition.nodes, node] };
  // The first node becomes the start node.
  if (!definition.startNodeId || !model.definition.nodes.some((n) => n.id === definition.startNodeId))
    definition.startNodeId = id;
  return {
    id,
    model: { definition, layout: { ...model.layout, nodes: { ...model.layout.nodes, [id]: rounded(position) } } },
  };
}

/** Removes the node and every edge into or out of it. */
export function removeNodes(model: Model, ids: string[]): Model {
  const gone = new Set(ids.filter((id) => id !== TRIGGER_ID));
  if (gone.size === 0) return model;
  let nodes = model.definition.nodes.filter((n) => !gone.has(n.id));
  nodes = nodes.map((n) => {
    let out = n;
    for (const edge of outgoingEdges(n as any))
      if (typeof edge.target === 'string' && gone.has(edge.target)) out = withEdge(out, edge.field, undefined);
    return out;
  });
  const layoutNodes = { ...model.layout.nodes };
  for (const id of gone) delete layoutNodes[id];
  return {
    definition: {
      ...model.definition,
      nodes,
      startNodeId: gone.has(model.definition.startNodeId) ? '' : model.definition.startNodeId,
    },
    layout: { ...model.layout, nodes: layoutNodes },
  };
}

export function updateNode(model: Model, id: string, patch: Record<string, unknown>): Model {
  return {
    ...model,
    definition: {
      ...model.definition,
      nodes: model.definition.nodes.map((n) => {
        if (n.id !== id) return n;
        const next: Record<string, unknown> = { ...n, ...patch };
        for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k];
        return next as Definition['nodes'][number];
      }),
    },
  };
}

/** Renames a node and every reference to it. */
export function renameNode(model: Model, from: string, to: string): Model {
  if (!to || from === to || model.definition.nodes.some((n) => n.id === to)) return model;
  const nodes = model.definition.nodes.map((n) => {
    let out = n.id === from ? { ...n, id: to } : n;
    for (const edge of outgoingEdges(out as any)) if (edge.target === from) out = withEdge(out, edge.field, to);
    return out;
  });
  const layoutNodes: Record<string, Point> = {};
  for (const [k, v] of Object.entries(model.layout.nodes)) layoutNodes[k === from ? to : k] = v;
  return {
    definition: {
      ...model.definition,
      nodes,
      startNodeId: model.definition.startNodeId === from ? to : model.definition.startNodeId,
    },
    layout: { ...model.layout, nodes: layoutNodes },
  };
}

const rounded = (p: Point): Point => ({ x: Math.round(p.x), y: Math.round(p.y) });

export function moveNode(model: Model, id: string, at: Point): Model {
  const position = rounded(at);
  const current = id === TRIGGER_ID ? model.layout.trigger : model.layout.nodes[id];
  if (current && current.x === position.x && current.y === position.y) return model;
  if (id === TRIGGER_ID) return { ...model, layout: { ...model.layout, trigger: position } };
  return { ...model, layout: { ...model.layout, nodes: { ...model.layout.nodes, [id]: position } } };
}

/** Nodes (and the trigger) without a saved position: these are laid out automatically. */
export function unplaced(model: Model): string[] {
  const missing = model.definition.nodes.filter((n) => !model.layout.nodes[n.id]).map((n) => n.id);
  if (!model.layout.trigger) missing.push(TRIGGER_ID);
  return missing;
}
