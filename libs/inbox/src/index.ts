export * from './embed-tokens';
export * from './inbox.module';
export * from './inbox.service';
