import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';
import { PG_TYPES } from './timestamps';

/**
 * The one description of the database: used by the Nest apps (TypeOrmModule), the migration runner,
 * the operator CLI and the test harness. Schema changes happen only through migrations. No entities here: libs/core
 * knows no domain; each domain module registers its own (TypeOrmModule.forFeature, picked up by autoLoadEntities).
 */
export function dataSourceOptions(databaseUrl: string, overrides: Partial<DataSourceOptions> = {}): DataSourceOptions {
  const { extra, ...rest } = overrides as Partial<DataSourceOptions> & { extra?: Record<string, unknown> };
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [],
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    ...rest,
    // pg's pool config: its size, and our type parsers (a faster timestamptz: timestamps.ts)
    extra: { max: 10, types: PG_TYPES, ...extra },
  } as DataSourceOptions;
}

/** Applies pending migrations; returns the names of the ones it ran. */
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const dataSource = new DataSource(
    dataSourceOptions(databaseUrl, { extra: { max: 2 } } as Partial<DataSourceOptions>),
  );
  await dataSource.initialize();
  try {
    const ran = await dataSource.runMigrations({ transaction: 'each' });
    return ran.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}
