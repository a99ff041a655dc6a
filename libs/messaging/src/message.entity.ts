import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type MessageDirection = 'outbound' | 'inbound';
/** queued → accepted (by the platform) → sent → delivered → read; failed is final. Inbound messages are `received`. */
export type MessageStatus = 'queued' | 'accepted' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

/** Every message, both directions, stored before any platform call (outbound) or as it arrives (inbound). */
@Entity('messages')
export class Message {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column({ name: 'phone_number_id', type: 'bigint' })
  phoneNumberId: string;

  @Column({ name: 'contact_id', type: 'bigint', nullable: true })
  contactId: string | null;

  @Column({ type: 'text' })
  direction: MessageDirection;

  /** The customer's number, digits only (the recipient of outbound, the sender of inbound messages). */
  @Column()
  recipient: string;

  /** template, text, image, interactive, button, ... */
  @Column()
  kind: string;

  @Column({ name: 'template_name', type: 'text', nullable: true })
  templateName: string | null;

  @Column({ type: 'text', nullable: true })
  body: string | null;

  /** Outbound: the Cloud API request body. Inbound: the platform's message object. */
  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ type: 'text' })
  status: MessageStatus;

  @Column({ type: 'text', nullable: true })
  wamid: string | null;

  @Column({ name: 'context_wamid', type: 'text', nullable: true })
  contextWamid: string | null;

  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @Column({ name: 'callback_url', type: 'text', nullable: true })
  callbackUrl: string | null;

  @Column({ name: 'callback_events', type: 'text', array: true })
  callbackEvents: string[];

  /** Outbound: the send queue that carries it (`api` or `bulk`). */
  @Column({ type: 'text', nullable: true })
  queue: string | null;

  /** Outbound: the send job that carries it with others (a campaign chunk); null when the job id is the message id. */
  @Column({ name: 'send_job', type: 'text', nullable: true })
  sendJob: string | null;

  /** Outbound: the fencing token of its sends, bumped by each claim right before a platform call. */
  @Column({ name: 'send_claim', type: 'int', default: 0 })
  sendClaim: number;

  /** Outbound: when it was last claimed for a platform call (null: never, or released after a definite refusal). */
  @Column({ name: 'claimed_at', type: 'timestamptz', nullable: true })
  claimedAt: Date | null;

  /** Outbound: platform calls made for it (retries included). */
  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'error_code', type: 'int', nullable: true })
  errorCode: number | null;

  @Column({ name: 'error_title', type: 'text', nullable: true })
  errorTitle: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'accepted_at', type: 'timestamptz', nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt: Date | null;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;

  @Column({ name: 'read_at', type: 'timestamptz', nullable: true })
  readAt: Date | null;

  @Column({ name: 'failed_at', type: 'timestamptz', nullable: true })
  failedAt: Date | null;

  @Column({ name: 'replied_at', type: 'timestamptz', nullable: true })
  repliedAt: Date | null;
}
