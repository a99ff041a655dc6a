/**
 * The engine must run inside Temporal's workflow sandbox: no clock, no randomness, no I/O,
 * no eval, and no imports from outside libs/engine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = __dirname;
const sources = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
  .map((f) => ({ file: f, code: readFileSync(join(dir, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '') }));

describe('engine purity', () => {
  it('finds the engine sources', () => {
    expect(sources.map((s) => s.file)).toEqual(expect.arrayContaining(['index.ts', 'interpreter.ts', 'validate.ts']));
  });

  it.each([
    ['Date', /\bDate\b/],
    ['Math.random', /Math\.random/],
    ['performance', /\bperformance\./],
    ['eval', /\beval\s*\(/],
    ['Function constructor', /\bnew\s+Function\b|\bFunction\s*\(/],
    ['timers', /\bset(Timeout|Interval|Immediate)\b/],
    ['process', /\bprocess\./],
    ['require', /\brequire\s*\(/],
    ['fetch', /\bfetch\s*\(/],
  ])('no source uses %s', (_name, pattern) => {
    const offenders = sources.filter((s) => pattern.test(s.code)).map((s) => s.file);
    expect(offenders).toEqual([]);
  });

  it('imports only relative modules inside libs/engine/src', () => {
    for (const { file, code } of sources) {
      const imports = [...code.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
      for (const spec of imports) {
        expect(`${file}: ${spec}`).toMatch(/: \.\/[a-z-]+$/);
      }
    }
  });
});
