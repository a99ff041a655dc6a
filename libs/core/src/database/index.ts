export * from './data-source';
export * from './entities';
export * from './database.module';
