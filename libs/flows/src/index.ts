export * from './definition';
export * from './flow.entity';
export * from './flow-responses';
export * from './flows.dto';
export * from './flows.module';
export * from './flows.service';
export { flowDetail, flowResponseView, flowSummary } from './flows.controller';
