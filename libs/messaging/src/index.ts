export * from './message.entity';
export * from './message-events.service';
export * from './messaging.module';
export * from './platform-webhooks/platform-webhook-event.entity';
export * from './platform-webhooks/platform-webhook.processor';
export * from './platform-webhooks/platform-webhooks.service';
