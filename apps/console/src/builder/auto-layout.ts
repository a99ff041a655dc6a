import { edgesOf, TRIGGER_ID, type Model, type Point } from './graph';

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 96;

/**
 * Positions for a definition created without them (e.g. through the API): elk's layered algorithm, left to right.
 * elkjs is loaded only here, on demand (it is ~450 kB gzip). Nodes that already have a position keep it.
 */
export async function autoLayout(model: Model): Promise<Model> {
  const { default: ELK } = await import('elkjs/lib/elk.bundled.js');
  const elk = new ELK();
  const children = [TRIGGER_ID, ...model.definition.nodes.map((n) => n.id)].map((id) => ({
    id,
    width: NODE_WIDTH,
    height: NODE_HEIGHT,
  }));
  const edges = edgesOf(model.definition).map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] }));
  const graph = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': '40',
      'elk.layered.spacing.nodeNodeBetweenLayers': '80',
    },
    children,
    edges,
  });
  const placed: Record<string, Point> = {};
  for (const child of graph.children ?? [])
    placed[child.id] = { x: Math.round(child.x ?? 0), y: Math.round(child.y ?? 0) };
  const nodes = { ...model.layout.nodes };
  for (const n of model.definition.nodes) nodes[n.id] ??= placed[n.id] ?? { x: 0, y: 0 };
  return { ...model, layout: { nodes, trigger: model.layout.trigger ?? placed[TRIGGER_ID] } };
}
