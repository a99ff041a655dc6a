import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sourceFiles, TABLE_OWNERS } from './ownership';

/**
 * Fitness test of the ownership map (docs/architecture.md): SQL that names a table (FROM, JOIN, INTO, UPDATE, DELETE
 * FROM, TABLE, TRUNCATE) or an @Entity mapping of it appears only in the folder of the table's owner. Migrations describe
 * the schema and are exempt; so are tests, which check what was stored.
 */
const ROOT = join(__dirname, '..', '..');

/** Every table a piece of source names in SQL or in an @Entity decorator, with its line. */
export function tablesNamedIn(source: string, tables: string[]): Array<{ table: string; line: number }> {
  const found: Array<{ table: string; line: number }> = [];
  const alternatives = tables.join('|');
  const sql = new RegExp(
    `\\b(?:FROM|JOIN|INTO|UPDATE|DELETE\\s+FROM|TABLE|TRUNCATE)\\s+"?(${alternatives})"?(?![\\w.])`,
    'g',
  );
  const entity = new RegExp(`@Entity\\(\\s*['"\`](${alternatives})['"\`]`, 'g');
  for (const re of [sql, entity]) {
    for (const m of source.matchAll(re)) found.push({ table: m[1], line: source.slice(0, m.index).split('\n').length });
  }
  return found;
}

describe('table ownership (docs/architecture.md)', () => {
  const tables = Object.keys(TABLE_OWNERS);

  it('finds SQL in source text (the detector itself)', () => {
    const src =
      "db.query(`SELECT id FROM phone_numbers p JOIN contacts c ON c.id = p.id`);\n// a comment about contacts\nINSERT INTO messages (id)\n@Entity('flows')";
    expect(tablesNamedIn(src, tables)).toEqual([
      { table: 'phone_numbers', line: 1 },
      { table: 'contacts', line: 1 },
      { table: 'messages', line: 3 },
      { table: 'flows', line: 4 },
    ]);
    expect(tablesNamedIn('SELECT 1 FROM contacts_archive; UPDATE messages_v2 SET x = 1', tables)).toEqual([]);
  });

  it('no SQL names a table outside the folder of its owner', () => {
    const crossings: string[] = [];
    for (const file of sourceFiles()) {
      for (const { table, line } of tablesNamedIn(readFileSync(join(ROOT, file), 'utf8'), tables)) {
        const owner = TABLE_OWNERS[table];
        if (!file.startsWith(`${owner}/`)) crossings.push(`${file}:${line} names ${table} (owned by ${owner})`);
      }
    }
    expect(crossings).toEqual([]);
  });

  it('no repository, join or forFeature of an entity outside the folder of its owner', () => {
    // entity classes and their tables, from the @Entity decorators
    const owners = new Map<string, string>();
    for (const file of sourceFiles(['libs'])) {
      const src = readFileSync(join(ROOT, file), 'utf8');
      for (const m of src.matchAll(/@Entity\(\s*['"`]([a-z_]+)['"`][^)]*\)\s*export class (\w+)/g))
        owners.set(m[2], TABLE_OWNERS[m[1]]);
    }
    expect(owners.get('PhoneNumber')).toBe('libs/accounts');
    const names = [...owners.keys()].join('|');
    const use = new RegExp(
      `\\b(?:InjectRepository|getRepository|innerJoin|leftJoin|innerJoinAndSelect|leftJoinAndSelect|forFeature)\\(\\s*\\[?[^)]*?\\b(${names})\\b`,
      'g',
    );
    const crossings: string[] = [];
    for (const file of sourceFiles()) {
      const src = readFileSync(join(ROOT, file), 'utf8');
      for (const m of src.matchAll(use)) {
        const owner = owners.get(m[1])!;
        if (!file.startsWith(`${owner}/`))
          crossings.push(
            `${file}:${src.slice(0, m.index).split('\n').length} uses the entity ${m[1]} (owned by ${owner})`,
          );
      }
    }
    expect(crossings).toEqual([]);
  });

  it('every table of the migrations has an owner', () => {
    const migrations = join(ROOT, 'libs/core/src/database/migrations');
    const created = new Set<string>();
    for (const file of readdirSync(migrations)) {
      for (const m of readFileSync(join(migrations, file), 'utf8').matchAll(
        /CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_]+)"?/g,
      ))
        created.add(m[1]);
    }
    expect([...created].filter((t) => !TABLE_OWNERS[t]).sort()).toEqual([]);
  });
});
