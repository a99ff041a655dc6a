import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config';
import { dataSourceOptions } from './data-source';

/**
 * PostgreSQL through TypeORM for a Nest process. Entities are registered by the domain module that owns them
 * (TypeOrmModule.forFeature); autoLoadEntities gives the connection exactly those of the modules in the process.
 */
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
            autoLoadEntities: true,
            migrationsRun: false,
            logging: ['error'],
          }),
        }),
      ],
    };
  }
}
