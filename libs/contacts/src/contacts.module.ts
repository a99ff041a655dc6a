import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { QUEUES } from '@switchboard/core';
import { ContactGroup, ContactGroupMember } from './contact-group.entity';
import { ContactGroupsController } from './contact-groups.controller';
import { Contact } from './contact.entity';
import { ContactsController } from './contacts.controller';
import { ContactsService } from './contacts.service';
import { ContactImportsController } from './imports/contact-imports.controller';
import { ContactImportsProcessor } from './imports/contact-imports.processor';
import { ContactImportsService } from './imports/contact-imports.service';

const importQueue = BullModule.registerQueue({ name: QUEUES.contactImports });

@Module({
  imports: [TypeOrmModule.forFeature([Contact, ContactGroup, ContactGroupMember]), importQueue],
  controllers: [ContactsController, ContactGroupsController, ContactImportsController],
  providers: [ContactsService, ContactImportsService],
  exports: [ContactsService, ContactImportsService, importQueue],
})
export class ContactsModule {}

/** Worker side of contacts: the import processor (QUEUES.contactImports) and its sweep. */
@Module({
  imports: [ContactsModule],
  providers: [ContactImportsProcessor],
})
export class ContactsWorkerModule {}
