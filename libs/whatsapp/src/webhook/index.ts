export * from './signature';
export * from './parse-webhook';
export * from './webhook.types';
