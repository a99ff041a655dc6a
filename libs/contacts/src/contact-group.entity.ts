import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** A named set of an account's contacts (the `group_ids` of create-contact; campaign audiences). */
@Entity('contact_groups')
export class ContactGroup {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  /** Unique per account, case-insensitively. */
  @Column({ type: 'text' })
  name: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** Membership of a contact in a group (both of the same account, checked by ContactsService). */
@Entity('contact_group_members')
export class ContactGroupMember {
  @PrimaryColumn({ name: 'group_id', type: 'bigint' })
  groupId: string;

  @PrimaryColumn({ name: 'contact_id', type: 'bigint' })
  contactId: string;

  @CreateDateColumn({ name: 'added_at', type: 'timestamptz' })
  addedAt: Date;
}
