import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config';
import { dataSourceOptions } from './data-source';

/** PostgreSQL through TypeORM for a Nest process (entities registered per domain module with forFeature). */
@Module({})
export class DatabaseModule {
  static forRoot(): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config.DATABASE_URL, { extra: { max: config.DATABASE_POOL_SIZE } }),
            migrationsRun: false,
            logging: ['error'],
          }),
        }),
      ],
    };
  }
}
