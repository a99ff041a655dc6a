import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A WhatsApp business number connected to an account, with what the Cloud API client needs to act for it.
 * `messagingPhoneId` is the platform's phone_number_id and the {messagingPhoneId} of SPEC paths.
 */
@Entity('phone_numbers')
export class PhoneNumber {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column({ name: 'messaging_phone_id' })
  messagingPhoneId: string;

  @Column({ name: 'display_phone_number' })
  displayPhoneNumber: string;

  @Column({ name: 'verified_name' })
  verifiedName: string;

  @Column()
  status: string;

  /** WhatsApp Business Account id: owns templates and flows on the platform. */
  @Column({ name: 'business_account_id' })
  businessAccountId: string;

  @Column({ name: 'api_base_url' })
  apiBaseUrl: string;

  @Column({ name: 'api_version' })
  apiVersion: string;

  /** AES-256-GCM sealed (SecretBox); never returned by the API. */
  @Column({ name: 'access_token_encrypted', select: false })
  accessTokenEncrypted: string;

  @Column({ name: 'messages_per_second', type: 'int' })
  messagesPerSecond: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
