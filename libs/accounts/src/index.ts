export * from './account.entity';
export * from './accounts.module';
export * from './accounts.service';
export * from './phone-number.entity';
export * from './provision-account';
export * from './account-events';
export * from './secrets-key-check';
export * from './connect-number';
