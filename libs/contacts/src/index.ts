export * from './contact.entity';
export * from './contact-group.entity';
export * from './contacts.module';
export * from './contacts.service';
