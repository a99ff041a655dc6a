export * from './metrics';
export * from './metrics-endpoint';
export * from './queue-metrics';
export * from './worker-heartbeat';
export * from './worker-metrics-server';
export * from './http-metrics';
