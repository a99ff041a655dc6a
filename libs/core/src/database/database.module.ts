import { DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { ChangeNotices } from './change-notices';
import { dataSourceOptions } from './data-source';

const logger = new Logger('TypeORM');

/**
 * Marks a statement whose unique violation (23505) the caller handles (an optimistic insert, a race it resolves): put
 * it at the start of the SQL, and such a failure is logged at debug, not as an error an operator must look into.
 */
export const HANDLES_UNIQUE_VIOLATION = '/* handles 23505 */';

/** TypeORM's messages in the process's log format: failed queries at error (without their parameters: user data). */
const typeOrmLogger: TypeOrmLogger = {
  logQuery: () => undefined,
  logQueryError: (error, query) => {
    const msg = `query failed: ${error instanceof Error ? error.message : error}`;
    if ((error as { code?: string }).code === '23505' && query.startsWith(HANDLES_UNIQUE_VIOLATION))
      logger.debug({ msg, query });
    else logger.error({ msg, query });
  },
  logQuerySlow: (ms, query) => logger.warn({ msg: 'slow query', ms, query }),
  logSchemaBuild: () => undefined,
  logMigration: (message) => logger.log(message),
  log: (level, message) => (level === 'warn' ? logger.warn(message) : logger.debug(message)),
};

/**
 * PostgreSQL through TypeORM for a Nest process. Entities are registered by the domain module that owns them
 * (TypeOrmModule.forFeature); autoLoadEntities gives the connection exactly those of the modules in the process.
 * Also ChangeNotices (global): the changes PostgreSQL announces, for caches that must drop a row when it changes.
 */
@Module({})
export class DatabaseModule {
  private static definition?: DynamicModule;

  /**
   * Built once per process: @nestjs/typeorm registers the data source name globally on each forRootAsync() call and
   * warns about a duplicate when the API and the worker run in one process (tests), although each Nest application
   * still gets its own DataSource from this definition.
   */
  static forRoot(): DynamicModule {
    return (this.definition ??= {
      module: DatabaseModule,
      global: true,
      providers: [ChangeNotices],
      exports: [ChangeNotices],
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config.DATABASE_URL, { extra: { max: config.DATABASE_POOL_SIZE } }),
            autoLoadEntities: true,
            migrationsRun: false,
            logger: typeOrmLogger,
          }),
        }),
      ],
    });
  }
}
