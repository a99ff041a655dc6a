import { autoLayout } from './auto-layout';
import { TRIGGER_ID, type Model } from './graph';

describe('automatic layout (elkjs, for definitions saved without positions)', () => {
  it('places every node left to right along its edges and keeps positions that exist', async () => {
    const model: Model = {
      definition: {
        trigger: { type: 'webhook' },
        startNodeId: 'a',
        nodes: [
          { id: 'a', type: 'delay', duration: '1m', next: 'b' },
          { id: 'b', type: 'condition', rules: [{ left: '{{payload.x}}', operator: 'exists', next: 'c' }], else: 'd' },
          { id: 'c', type: 'end' },
          { id: 'd', type: 'end' },
        ],
      },
      layout: { nodes: { d: { x: 999, y: 999 } } },
    };
    const laid = await autoLayout(model);
    const x = (id: string) => (id === TRIGGER_ID ? laid.layout.trigger!.x : laid.layout.nodes[id].x);
    expect(Object.keys(laid.layout.nodes).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(x(TRIGGER_ID)).toBeLessThan(x('a'));
    expect(x('a')).toBeLessThan(x('b'));
    expect(x('b')).toBeLessThan(x('c'));
    expect(laid.layout.nodes.d).toEqual({ x: 999, y: 999 });
    expect(laid.definition).toBe(model.definition);
  });
});
