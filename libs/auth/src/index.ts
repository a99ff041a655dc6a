export * from './api-client.entity';
export * from './auth.module';
export * from './auth.service';
export * from './credentials';
export * from './current-client.decorator';
export * from './grants';
export * from './token-claims';
export * from './console-session';
