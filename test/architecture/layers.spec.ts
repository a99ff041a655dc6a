import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOMAIN_LIBS, sourceFiles } from './ownership';

/**
 * The layer order (docs/architecture.md): libs/core knows no domain, libs/engine is pure TypeScript (no Nest, no
 * database, no other library of ours). ESLint checks the same rules while editing; this keeps them in `jest` too.
 */
const ROOT = join(__dirname, '..', '..');

/** Module specifiers of import/export-from/require/import() statements. */
export function importsOf(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(
    /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/gm,
  )) {
    specs.push(m[1] ?? m[2] ?? m[3]);
  }
  return specs;
}

function offending(folder: string, forbidden: (spec: string, file: string) => boolean): string[] {
  const out: string[] = [];
  for (const file of sourceFiles([folder])) {
    for (const spec of importsOf(readFileSync(join(ROOT, file), 'utf8')))
      if (forbidden(spec, file)) out.push(`${file} imports ${spec}`);
  }
  return out;
}

const domainLib = new RegExp(`^@switchboard/(${DOMAIN_LIBS.join('|')})(/|$)`);
const relativeIntoDomain = new RegExp(`(^|/)libs/(${DOMAIN_LIBS.join('|')})/|^(\\.\\./)+(${DOMAIN_LIBS.join('|')})/`);

describe('layers', () => {
  it('reads import statements (the detector itself)', () => {
    const src =
      "import { A } from '@switchboard/accounts';\nimport type { B } from \"../x\";\nexport * from './y';\nimport 'reflect-metadata';\nconst z = require('pg');";
    expect(importsOf(src)).toEqual(['@switchboard/accounts', '../x', './y', 'reflect-metadata', 'pg']);
  });

  it('libs/core imports no domain library', () => {
    expect(offending('libs/core', (spec) => domainLib.test(spec) || relativeIntoDomain.test(spec))).toEqual([]);
  });

  it('libs/engine imports nothing of Nest, TypeORM, pg, Redis, BullMQ or another library of ours', () => {
    const forbidden =
      /^(@nestjs\/|typeorm$|typeorm\/|pg$|pg\/|ioredis|bullmq|@temporalio\/|@switchboard\/)|^(\.\.\/)+\.\.\//;
    expect(offending('libs/engine', (spec) => forbidden.test(spec))).toEqual([]);
  });

  it('libs/templates/src/template-rules.ts imports nothing (the console bundles it)', () => {
    const file = 'libs/templates/src/template-rules.ts';
    expect(importsOf(readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });
});
