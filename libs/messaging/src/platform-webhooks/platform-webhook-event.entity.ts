import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A verified platform webhook as received; the worker processes it and stamps processed_at (or error). */
@Entity('platform_webhook_events')
export class PlatformWebhookEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt: Date;

  @Column({ type: 'jsonb' })
  payload: unknown;

  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true })
  processedAt: Date | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;
}
