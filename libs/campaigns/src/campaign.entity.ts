import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type CampaignStatus = 'draft' | 'scheduled' | 'running' | 'paused' | 'completed' | 'cancelled';

/** A prepared campaign (see the campaigns migration for the audience, trigger and recipient tables; those are used through SQL). */
@Entity('campaigns')
export class Campaign {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column({ name: 'phone_number_id', type: 'bigint' })
  phoneNumberId: string;

  @Column()
  name: string;

  @Column({ name: 'template_name' })
  templateName: string;

  @Column({ name: 'template_language' })
  templateLanguage: string;

  /** `json` (not jsonb): key order is kept, body variables are filled in key order */
  @Column({ type: 'json' })
  variables: Record<string, unknown>;

  @Column({ name: 'media_url', type: 'text', nullable: true })
  mediaUrl: string | null;

  @Column({ name: 'document_name', type: 'text', nullable: true })
  documentName: string | null;

  @Column({ name: 'callback_url', type: 'text', nullable: true })
  callbackUrl: string | null;

  @Column({ name: 'callback_events', type: 'text', array: true })
  callbackEvents: string[];

  @Column({ name: 'group_ids', type: 'bigint', array: true })
  groupIds: string[];

  @Column({ type: 'text' })
  status: CampaignStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  /** when a `scheduled` campaign starts by itself (kept afterwards) */
  @Column({ name: 'scheduled_at', type: 'timestamptz', nullable: true })
  scheduledAt: Date | null;

  /** why the scheduled start could not happen (the campaign went back to draft) */
  @Column({ name: 'schedule_error', type: 'text', nullable: true })
  scheduleError: string | null;

  /** why the campaign paused itself while running (its template stopped being APPROVED); cleared by a resume */
  @Column({ name: 'paused_reason', type: 'text', nullable: true })
  pausedReason: string | null;
}
