export * from './contact.entity';
export * from './contact-group.entity';
export * from './contacts.module';
export * from './contacts.service';
export * from './dto/contact.dto';
export { contactListItem } from './contacts.controller';
export * from './imports/contact-imports.service';
export * from './imports/import-file';
export * from './imports/import-request';
