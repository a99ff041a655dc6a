export * from './passwords';
export * from './roles';
export * from './users.module';
export * from './users.service';
