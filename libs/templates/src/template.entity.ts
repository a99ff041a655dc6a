import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { TemplateComponent } from '@switchboard/whatsapp';
import {
  TEMPLATE_CATEGORIES,
  TEMPLATE_STATUSES,
  type ButtonInfo,
  type CarouselCardInfo,
  type HeaderType,
} from './template-rules';

/** SPEC's three states, plus the platform's PAUSED and DISABLED (kept as such: neither can be sent). */
export type TemplateStatusValue = (typeof TEMPLATE_STATUSES)[number];
export type TemplateCategoryValue = (typeof TEMPLATE_CATEGORIES)[number];

/** A message template of an account (SPEC §2 Template), submitted for review through one connected number's WABA. */
@Entity('templates')
export class Template {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  /** phone_numbers.id (not the messagingPhoneId) */
  @Column({ name: 'phone_number_id', type: 'bigint' })
  phoneNumberId: string;

  /** Meta's template id (hsm id); null only between reservation and the platform's answer */
  @Column({ name: 'platform_template_id', type: 'text', nullable: true })
  platformTemplateId: string | null;

  @Column()
  name: string;

  @Column()
  language: string;

  @Column({ type: 'text' })
  category: TemplateCategoryValue;

  /** SPEC status (PENDING, APPROVED, REJECTED) or the platform's PAUSED / DISABLED */
  @Column({ type: 'text' })
  status: TemplateStatusValue;

  /** Meta's own status/event when it is not one of the three (PAUSED, DISABLED, ...) */
  @Column({ name: 'platform_status', type: 'text', nullable: true })
  platformStatus: string | null;

  @Column({ name: 'rejected_reason', type: 'text', nullable: true })
  rejectedReason: string | null;

  /** the category before Meta's last `template_category_update` (null when Meta never changed it) */
  @Column({ name: 'previous_category', type: 'text', nullable: true })
  previousCategory: string | null;

  @Column({ name: 'category_updated_at', type: 'timestamptz', nullable: true })
  categoryUpdatedAt: Date | null;

  /** as the client sent them (SPEC §4 shape) */
  @Column({ type: 'jsonb' })
  components: unknown[];

  /** as submitted to the platform (Meta's shape) */
  @Column({ name: 'platform_components', type: 'jsonb' })
  platformComponents: TemplateComponent[];

  /** body variable names, in the order of the body text */
  @Column({ type: 'text', array: true })
  variables: string[];

  @Column({ name: 'header_type', type: 'text' })
  headerType: HeaderType;

  @Column({ type: 'jsonb' })
  buttons: ButtonInfo[];

  @Column({ type: 'jsonb', nullable: true })
  carousel: CarouselCardInfo[] | null;

  @Column({ name: 'category_change_allowed' })
  categoryChangeAllowed: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
