import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ContactGroup, ContactGroupMember } from './contact-group.entity';
import { ContactGroupsController } from './contact-groups.controller';
import { Contact } from './contact.entity';
import { ContactsController } from './contacts.controller';
import { ContactsService } from './contacts.service';

@Module({
  imports: [TypeOrmModule.forFeature([Contact, ContactGroup, ContactGroupMember])],
  controllers: [ContactsController, ContactGroupsController],
  providers: [ContactsService],
  exports: [ContactsService],
})
export class ContactsModule {}
