export * from './template-list';
export * from './template-rules';
export * from './template.entity';
export * from './templates.dto';
export * from './templates.module';
export * from './templates.service';
export { templateDetail, templateListItem, templateSummary } from './templates.controller';
