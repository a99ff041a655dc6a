export * from './data-source';
export * from './database.module';
export * from './named-query';
export * from './change-notices';
export * from './advisory-lock';
