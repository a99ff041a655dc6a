export * from './event-types';
export * from './outbox';
export * from './signing';
export * from './retry-schedule';
export * from './webhooks.module';
export * from './webhook-endpoints.service';
export * from './webhook-delivery.worker';
export * from './payloads';
