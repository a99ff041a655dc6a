import { boundedDetail, HISTORY_DETAIL_MAX_CHARS } from './history-detail';

describe('boundedDetail (what a run history keeps of a step)', () => {
  it('keeps small values as they are', () => {
    const answer = { status: 200, body: { tier: 'gold' }, headers: { 'content-type': 'application/json' } };
    expect(boundedDetail(answer)).toBe(answer);
    expect(boundedDetail({ messageId: 'm-1' })).toEqual({ messageId: 'm-1' });
    expect(boundedDetail(null)).toBeNull();
    expect(boundedDetail(undefined)).toBeUndefined();
  });

  it('an HTTP answer of 1 MiB keeps its status and headers; its body becomes a preview with its size', () => {
    const body = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item ${i}` })) };
    const answer = { status: 200, body, headers: { 'content-type': 'application/json' } };
    const kept = boundedDetail(answer) as Record<string, any>;
    expect(kept.status).toBe(200);
    expect(kept.headers).toEqual({ 'content-type': 'application/json' });
    expect(kept.body).toEqual({
      truncated: true,
      chars: JSON.stringify(body).length,
      preview: JSON.stringify(body).slice(0, 1024),
    });
    expect(JSON.stringify(kept).length).toBeLessThan(HISTORY_DETAIL_MAX_CHARS);
  });

  it('many large fields stay within the bound; a value cut already is left as it is', () => {
    const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field${i}`, 'y'.repeat(500)]));
    const kept = boundedDetail(wide);
    expect(JSON.stringify(kept).length).toBeLessThan(2 * HISTORY_DETAIL_MAX_CHARS);
    expect(boundedDetail(kept)).toEqual(kept);
    const answer = boundedDetail({ status: 200, body: 'z'.repeat(50_000) });
    expect(boundedDetail(answer)).toEqual(answer);
    // an answer that only looks cut (its own `truncated` field) is cut like any other
    const lookalike = { truncated: true, tree: Array.from({ length: 2000 }, (_, i) => ({ path: `f${i}` })) };
    expect(JSON.stringify(boundedDetail(lookalike)).length).toBeLessThan(HISTORY_DETAIL_MAX_CHARS);
  });

  it('a long text is cut to a preview of its first 1,024 characters', () => {
    const text = 'x'.repeat(10_000);
    expect(boundedDetail(text)).toEqual({ truncated: true, chars: 10_000, preview: 'x'.repeat(1024) });
    expect(boundedDetail({ body: text })).toEqual({
      body: { truncated: true, chars: 10_000, preview: 'x'.repeat(1024) },
    });
  });
});
