import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A person the account talks to (SPEC §2 Contact). `contactNumber` is E.164 digits without `+`, unique per
 * account. `isBlocked` is the opt-out flag: messaging and campaigns must not send to a blocked contact.
 */
@Entity('contacts')
export class Contact {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  /** null for a customer known only by a business-scoped user id (WhatsApp usernames) */
  @Column({ name: 'contact_number', type: 'text', nullable: true })
  contactNumber: string | null;

  /** WhatsApp's business-scoped user id (BSUID, e.g. `US.13491208655302741918`), unique per account, when known */
  @Column({ name: 'whatsapp_user_id', type: 'text', nullable: true })
  whatsappUserId: string | null;

  @Column({ type: 'text', nullable: true })
  email: string | null;

  /** `YYYY-MM-DD` (a PostgreSQL date, read as a string). */
  @Column({ name: 'date_of_birth', type: 'date', nullable: true })
  dateOfBirth: string | null;

  @Column({ type: 'text', nullable: true })
  gender: string | null;

  @Column({ name: 'instagram_url', type: 'text', nullable: true })
  instagramUrl: string | null;

  @Column({ name: 'facebook_url', type: 'text', nullable: true })
  facebookUrl: string | null;

  @Column({ name: 'linkedin_url', type: 'text', nullable: true })
  linkedinUrl: string | null;

  /** Free-form fields set by automations (`update_contact`), e.g. `{"last_order": "A-1"}`. */
  @Column({ name: 'custom_fields', type: 'jsonb', default: {} })
  customFields: Record<string, unknown>;

  @Column({ name: 'is_blocked', type: 'boolean', default: false })
  isBlocked: boolean;

  @Column({ type: 'text', default: 'whatsapp' })
  platform: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
