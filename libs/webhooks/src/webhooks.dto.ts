import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  ValidateBy,
  ValidationOptions,
} from 'class-validator';
import { IsIntInRange, isIsoDateTime, PaginationQuery, toStrictInt } from '@switchboard/core';
import { WEBHOOK_EVENT_TYPES } from './event-types';

/** A time the database reads as written (isIsoDateTime); other ISO 8601 forms were a 400 naming no field. */
const IsDateTime = (field: string) =>
  ValidateBy({
    name: 'isDateTime',
    validator: {
      validate: isIsoDateTime,
      defaultMessage: () => `${field} must be an ISO 8601 date-time, e.g. 2026-11-23T10:00:00Z`,
    },
  });

const SUBSCRIBABLE = [...WEBHOOK_EVENT_TYPES, '*'];
const EVENTS_MESSAGE = `events must be "*" or a list of: ${WEBHOOK_EVENT_TYPES.join(', ')}`;

/** `events`: a list of known types, or `*` alone (also accepted as the string "*"). */
function IsEventSubscription(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEventSubscription',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.length >= 1 &&
          value.length <= 50 &&
          value.every((v) => typeof v === 'string' && SUBSCRIBABLE.includes(v)) &&
          (!value.includes('*') || value.length === 1),
        defaultMessage: () => EVENTS_MESSAGE,
      },
    },
    options,
  );
}
const toList = ({ value }: { value: unknown }) =>
  value === '*' ? ['*'] : Array.isArray(value) ? [...new Set(value)] : value;

export class CreateWebhookEndpointDto {
  @ApiProperty({
    description: 'http(s) URL receiving the events (public address; see ALLOW_PRIVATE_NETWORK_TARGETS)',
    maxLength: 2048,
  })
  @IsString({ message: 'url must be a string (an http or https URL)' })
  @MaxLength(2048, { message: 'url must be at most 2048 characters' })
  url: string;

  @ApiProperty({
    description: 'event types to receive, or ["*"] for all',
    example: ['message.received', 'message.status'],
    type: [String],
    enum: SUBSCRIBABLE,
  })
  @Transform(toList)
  @IsEventSubscription()
  events: string[];

  @ApiPropertyOptional({ maxLength: 1000 })
  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(1000, { message: 'description must be at most 1000 characters' })
  description?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ maxLength: 2048 })
  @IsOptional()
  @IsString({ message: 'url must be a string (an http or https URL)' })
  @MaxLength(2048, { message: 'url must be at most 2048 characters' })
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: SUBSCRIBABLE })
  @IsOptional()
  @Transform(toList)
  @IsEventSubscription()
  events?: string[];

  @ApiPropertyOptional({ maxLength: 1000 })
  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(1000, { message: 'description must be at most 1000 characters' })
  description?: string;

  @ApiPropertyOptional({ description: 'true re-enables a disabled endpoint (its pending deliveries resume)' })
  @IsOptional()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

export class ReplayDto {
  @ApiProperty({ description: 'ISO 8601 time; events created at or after it', example: '2026-11-23T10:00:00Z' })
  @IsDateTime('since')
  since: string;

  @ApiPropertyOptional({ description: 'ISO 8601 time; events created before it (default now)' })
  @IsOptional()
  @IsDateTime('until')
  until?: string;

  @ApiPropertyOptional({
    type: [String],
    enum: WEBHOOK_EVENT_TYPES,
    description: 'only these types (default: every type the endpoint subscribes to)',
  })
  @IsOptional()
  @IsArray({ message: `types must be a list of: ${WEBHOOK_EVENT_TYPES.join(', ')}` })
  @ArrayMinSize(1, { message: 'types must not be empty' })
  @ArrayMaxSize(50)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: `types must be a list of: ${WEBHOOK_EVENT_TYPES.join(', ')}` })
  types?: string[];
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export class ListDeliveriesQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of: ${DELIVERY_STATUSES.join(', ')}` })
  status?: string;
}

export class ListEventsQuery {
  @ApiProperty({ description: 'ISO 8601 time: events created at or after it, oldest first' })
  @IsDateTime('since')
  since: string;

  @ApiPropertyOptional({ description: 'ISO 8601 time: events created before it' })
  @IsOptional()
  @IsDateTime('until')
  until?: string;

  @ApiPropertyOptional({ description: 'comma-separated event types', example: 'message.received,message.status' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value))
  @IsIn(WEBHOOK_EVENT_TYPES, {
    each: true,
    message: `types must be a comma-separated list of: ${WEBHOOK_EVENT_TYPES.join(', ')}`,
  })
  types?: string[];

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100 })
  @Transform(toStrictInt)
  @IsIntInRange(1, 1000)
  limit: number = 100;
}
