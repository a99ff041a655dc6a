import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { isCalendarTime } from '@switchboard/core';
import { PERMISSIONS, type Permission } from './embed-tokens';

/** A list page's `nextBefore`: a real time to the microsecond, then the contact id (checked before it reaches SQL). */
const LIST_CURSOR = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z(_\d{1,18})?$/;
const IsListCursor = () =>
  ValidateBy({
    name: 'isListCursor',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && LIST_CURSOR.test(value) && isCalendarTime(value),
      defaultMessage: () => 'before must be the nextBefore of the previous page',
    },
  });

/** An origin as browsers send it: scheme, host and optional port, nothing else (never `*`). */
const ORIGIN = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i;

/** Each list, when given, names at least one (an empty list used to mint a token for the whole account). */
export class EmbedScopeDto {
  @ApiPropertyOptional({ type: [String], example: ['106540352242922'], description: 'only these numbers' })
  @IsOptional()
  @IsArray({ message: 'scope.messagingPhoneIds must be an array' })
  @ArrayMinSize(1, { message: 'scope.messagingPhoneIds must name at least one (leave it out for no restriction)' })
  @ArrayMaxSize(50)
  @IsString({ each: true, message: 'scope.messagingPhoneIds must hold strings' })
  messagingPhoneIds?: string[];

  @ApiPropertyOptional({ type: [String], example: ['12'], description: 'only contacts of these groups' })
  @IsOptional()
  @IsArray({ message: 'scope.groupIds must be an array' })
  @ArrayMinSize(1, { message: 'scope.groupIds must name at least one (leave it out for no restriction)' })
  @ArrayMaxSize(50)
  @Matches(/^\d{1,18}$/, { each: true, message: 'scope.groupIds must hold group ids' })
  groupIds?: string[];

  @ApiPropertyOptional({ type: [String], example: ['+15550001111'], description: 'only these customers' })
  @IsOptional()
  @IsArray({ message: 'scope.contactNumbers must be an array' })
  @ArrayMinSize(1, { message: 'scope.contactNumbers must name at least one (leave it out for no restriction)' })
  @ArrayMaxSize(500)
  @IsString({ each: true, message: 'scope.contactNumbers must hold phone numbers' })
  contactNumbers?: string[];
}

export class MintEmbedTokenDto {
  @ApiProperty({ type: EmbedScopeDto, example: { messagingPhoneIds: ['106540352242922'] } })
  @IsObject({ message: 'scope must be an object' })
  @ValidateNested()
  @Type(() => EmbedScopeDto)
  scope: EmbedScopeDto;

  @ApiProperty({ enum: PERMISSIONS, isArray: true, example: ['read', 'send', 'send_template'] })
  @IsArray({ message: 'permissions must be an array' })
  @ArrayNotEmpty({ message: 'permissions must name at least one of read, send, send_template' })
  @IsIn(PERMISSIONS as unknown as string[], {
    each: true,
    message: `permissions must hold only ${PERMISSIONS.join(', ')}`,
  })
  permissions: Permission[];

  @ApiProperty({
    type: [String],
    example: ['https://crm.example.com'],
    description: 'origins that may frame the inbox',
  })
  @IsArray({ message: 'allowedOrigins must be an array' })
  @ArrayMinSize(1, { message: 'allowedOrigins must name at least one origin (https://crm.example.com)' })
  @ArrayMaxSize(10)
  @Matches(ORIGIN, { each: true, message: 'allowedOrigins must hold origins such as https://crm.example.com' })
  allowedOrigins: string[];

  @ApiPropertyOptional({ example: 300, minimum: 30, maximum: 600, default: 300 })
  @IsOptional()
  @IsInt({ message: 'ttlSeconds must be an integer' })
  @Min(30, { message: 'ttlSeconds must be at least 30' })
  @Max(600, { message: 'ttlSeconds must be at most 600' })
  ttlSeconds?: number;

  @ApiPropertyOptional({ example: 'Dana (support)' })
  @IsOptional()
  @IsString({ message: 'agentName must be a string' })
  @MaxLength(100, { message: 'agentName must be at most 100 characters' })
  agentName?: string;
}

export class ExchangeEmbedTokenDto {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIs…' })
  @IsString({ message: 'embedToken must be a string' })
  @MinLength(1, { message: 'embedToken is required' })
  @MaxLength(8192)
  embedToken: string;
}

export class InboxListQuery {
  @ApiPropertyOptional({ description: 'part of the name or number' })
  @IsOptional()
  @IsString()
  @MaxLength(100, { message: 'search must be at most 100 characters' })
  search?: string;

  @ApiPropertyOptional({ description: 'only conversations with unread messages' })
  @IsOptional()
  @Transform(({ value }) => value === 'true' || value === true)
  @IsBoolean()
  unread?: boolean;

  @ApiPropertyOptional({
    description: 'the nextBefore of the previous page (its last conversation: time to the microsecond and contact id)',
  })
  @IsOptional()
  @IsListCursor()
  before?: string;

  @ApiPropertyOptional({ default: 30, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(100, { message: 'limit must be at most 100' })
  limit?: number;
}

export class ThreadQuery {
  @ApiPropertyOptional({ description: 'a message id: return the messages before it (paging backwards)' })
  @IsOptional()
  @Matches(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
    message: 'before must be a message id',
  })
  before?: string;

  @ApiPropertyOptional({ default: 50, maximum: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1)
  @Max(100, { message: 'limit must be at most 100' })
  limit?: number;
}

export class SendTextDto {
  @ApiProperty({ example: 'Your order ships today.' })
  @IsString({ message: 'text must be a string' })
  @MinLength(1, { message: 'text is required' })
  @MaxLength(4096, { message: 'text must be at most 4096 characters' })
  text: string;

  @ApiPropertyOptional({ type: [String], example: ['Yes', 'No'], description: 'up to 3 quick reply buttons' })
  @IsOptional()
  @IsArray({ message: 'quickReplies must be an array' })
  @ArrayMaxSize(3, { message: 'quickReplies must hold at most 3 buttons' })
  @IsString({ each: true })
  @MaxLength(20, { each: true, message: 'quickReplies titles must be at most 20 characters' })
  quickReplies?: string[];
}

export class SendTemplateDto {
  @ApiProperty({ example: 'order_update' })
  @IsString({ message: 'templateName must be a string' })
  @MinLength(1, { message: 'templateName is required' })
  templateName: string;

  @ApiPropertyOptional({ example: { name: 'Ana' }, description: "the template's variables by name" })
  @IsOptional()
  @IsObject({ message: 'variables must be an object' })
  variables?: Record<string, string>;
}
