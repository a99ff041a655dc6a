import { clipText, forbiddenTextProblem, jsonStructureProblem, jsonTextMayHoldForbidden } from './input-rules';

describe('input rules', () => {
  it('clipText never cuts a surrogate pair in half', () => {
    expect(clipText(`${'a'.repeat(199)}😀`, 200)).toBe('a'.repeat(199));
    expect(clipText(`${'a'.repeat(198)}😀`, 200)).toBe(`${'a'.repeat(198)}😀`);
    expect(clipText('short', 200)).toBe('short');
    expect(forbiddenTextProblem({ name: clipText(`${'a'.repeat(199)}😀😀`, 200) })).toBeUndefined();
  });

  it('finds NUL and unpaired surrogates in strings and keys, naming the path; surrogate pairs are fine', () => {
    expect(forbiddenTextProblem({ a: [{ b: 'x\u0000' }] })).toEqual({
      field: 'a[0].b',
      message: 'a[0].b must not contain NUL characters (U+0000)',
    });
    expect(forbiddenTextProblem({ a: '\ud800' })?.message).toBe('a must not contain unpaired UTF-16 surrogates');
    expect(forbiddenTextProblem({ a: 'x\udc00' })?.field).toBe('a');
    expect(forbiddenTextProblem({ a: '\ud83d\ude00 ok', b: ['\u00e9'] })).toBeUndefined();
    expect(forbiddenTextProblem({ 'k\u0000': 1 })).toEqual({
      field: 'body',
      message: 'A key of the body must not contain NUL characters (U+0000)',
    });
    expect(forbiddenTextProblem('\u0000', 'search')?.field).toBe('search');
  });

  it('refuses nesting beyond 64 levels without recursion, and prototype-pollution keys', () => {
    const nest = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
    expect(jsonStructureProblem(nest(64))).toBeUndefined();
    expect(jsonStructureProblem(nest(65))?.message).toMatch(/nested too deeply/);
    expect(jsonStructureProblem(nest(100_000))?.field).toMatch(/^\[0\]/);
    expect(jsonStructureProblem(JSON.parse('{"a":{"__proto__":{"x":1}}}'))?.field).toBe('a.__proto__');
    expect(jsonStructureProblem(JSON.parse('{"constructor":{"prototype":{}}}'))?.field).toBe('constructor');
    expect(jsonStructureProblem({ constructor: 'a name' })).toBeUndefined();
  });

  it('JSON text without a \\u escape cannot hold a forbidden character once parsed (the body walk is skipped)', () => {
    // bytes that are not UTF-8 (a CESU-8 surrogate ED A0 80, a stray continuation byte) decode to U+FFFD, not surrogates
    const bytes = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xed, 0xa0, 0x80, 0x80]), Buffer.from('"}')]);
    const text = bytes.toString('utf8');
    expect(jsonTextMayHoldForbidden(text)).toBe(false);
    expect(JSON.parse(text).a).toBe('x\ufffd\ufffd\ufffd\ufffd');
    expect(forbiddenTextProblem(JSON.parse(text))).toBeUndefined();
    expect(() => JSON.parse('{"a":"x\u0000"}')).toThrow(); // a raw NUL is not JSON
    // every way to write one goes through an escape (and an escaped backslash only makes the check look, harmlessly)
    for (const escaped of ['{"a":"\\u0000"}', '{"a":"\\ud800"}', '{"\\u0000":1}', '"\\\\u0000"']) {
      expect(jsonTextMayHoldForbidden(escaped)).toBe(true);
    }
    expect(forbiddenTextProblem(JSON.parse('{"a":"\\ud800"}'))?.field).toBe('a');
  });
});
