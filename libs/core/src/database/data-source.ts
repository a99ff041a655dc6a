import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';

/**
 * The one description of the database: used by the Nest apps (TypeOrmModule), the migration runner,
 * the operator CLI and the test harness. Schema changes happen only through migrations. No entities here: libs/core
 * knows no domain; each domain module registers its own (TypeOrmModule.forFeature, picked up by autoLoadEntities).
 */
export function dataSourceOptions(databaseUrl: string, overrides: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [],
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    extra: { max: 10 },
    ...overrides,
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
