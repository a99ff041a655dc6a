export * from './campaign.entity';
export * from './campaign-requests';
export * from './campaigns.service';
export * from './campaigns.controller';
export * from './campaign-fanout';
export * from './fanout-jobs';
export * from './campaigns.module';
export * from './campaign-live';
