import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { FlowCategoryValue, FlowScreen } from './definition';

export const FLOW_STATUSES = ['draft', 'published', 'deprecated'] as const;
export type FlowStatusValue = (typeof FLOW_STATUSES)[number];

/** An interactive form (SPEC §2 Flow) of an account, created on the platform through one connected number's WABA. */
@Entity('flows')
export class Flow {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  /** phone_numbers.id (not the messagingPhoneId): the number whose WABA owns the flow */
  @Column({ name: 'phone_number_id', type: 'bigint' })
  phoneNumberId: string;

  /** The platform's flow id: the `flow_id` of the API */
  @Column({ name: 'platform_flow_id', type: 'text' })
  platformFlowId: string;

  @Column()
  name: string;

  @Column({ type: 'text', array: true })
  categories: FlowCategoryValue[];

  /** SPEC §3: draft, published, deprecated */
  @Column({ type: 'text' })
  status: FlowStatusValue;

  /** The screens as the client defined them; null after update_json (the raw Flow JSON is then the definition) */
  @Column({ type: 'jsonb', nullable: true })
  screens: FlowScreen[] | null;

  /** The Flow JSON uploaded to the platform */
  @Column({ name: 'flow_json', type: 'jsonb' })
  flowJson: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt: Date | null;

  @Column({ name: 'deprecated_at', type: 'timestamptz', nullable: true })
  deprecatedAt: Date | null;
}

/** A completed form: an inbound nfm_reply whose flow_token is one this service generated (or was given) when sending the flow. */
@Entity('flow_responses')
export class FlowResponse {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'bigint' })
  accountId: string;

  /** flows.id */
  @Column({ name: 'flow_id', type: 'bigint' })
  flowId: string;

  @Column({ name: 'flow_token', type: 'text' })
  flowToken: string;

  @Column({ name: 'contact_number', type: 'text' })
  contactNumber: string;

  /** the parsed response_json (the form's fields and the flow_token) */
  @Column({ type: 'jsonb' })
  response: Record<string, unknown>;

  /** messages.id of the inbound nfm_reply */
  @Column({ name: 'message_id', type: 'uuid' })
  messageId: string;

  @Column({ name: 'received_at', type: 'timestamptz' })
  receivedAt: Date;
}
