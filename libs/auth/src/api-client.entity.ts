import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A Client ID / Client Secret pair of an account, with its grants. The secret is stored only as a hash. */
@Entity('api_clients')
export class ApiClient {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  @Column({ name: 'client_id' })
  clientId: string;

  @Column({ name: 'secret_hash' })
  secretHash: string;

  @Column({ type: 'text', array: true })
  grants: string[];

  /** jti of the only refresh token that is currently valid (null after logout). */
  @Column({ name: 'refresh_token_id', type: 'text', nullable: true })
  refreshTokenId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
