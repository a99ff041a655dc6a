export * from './cloud-api.types';
export * from './cloud-api.error';
export * from './cloud-api.client';
export * from './message-builders';
export * from './webhook';
