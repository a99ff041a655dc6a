import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIntInRange } from '@switchboard/core';
import { IsArray, IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import {
  CATEGORY_MESSAGE,
  LANGUAGE_CODE,
  LANGUAGE_CODE_MESSAGE,
  TEMPLATE_CATEGORIES,
  TEMPLATE_NAME,
  TEMPLATE_NAME_MESSAGE,
  TEMPLATE_STATUSES,
} from './template-rules';

// The patterns and messages are the shared template rules (template-rules.ts), which the console applies too.
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
/** keeps OFFSET a plain integer */
export const MAX_PAGE = 1_000_000_000;

export class CreateTemplateBody {
  @ApiProperty({
    example: 'order_update',
    description: 'lowercase letters, digits and underscores; unique within the account',
  })
  @IsString({ message: 'template_name is required (string)' })
  @Matches(TEMPLATE_NAME, { message: TEMPLATE_NAME_MESSAGE })
  template_name: string;

  @ApiProperty({ enum: TEMPLATE_CATEGORIES })
  @IsIn(TEMPLATE_CATEGORIES, { message: CATEGORY_MESSAGE })
  category: (typeof TEMPLATE_CATEGORIES)[number];

  @ApiProperty({ example: 'en_US' })
  @IsString({ message: 'language is required (string)' })
  @Matches(LANGUAGE_CODE, { message: LANGUAGE_CODE_MESSAGE })
  language: string;

  @ApiProperty({ description: 'the number the template belongs to (GET /account/get)' })
  @IsString({ message: 'messagingPhoneId is required (string)' })
  @IsNotEmpty({ message: 'messagingPhoneId is required (string)' })
  messagingPhoneId: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    description: 'header, body, footer, button, carousel (docs/templates.md)',
  })
  @IsArray({ message: 'components must be a non-empty array' })
  components: unknown[];

  @ApiPropertyOptional({ description: 'lets the platform change the category during review' })
  @IsOptional()
  @IsBoolean({ message: 'categoryChangeAllowed must be a boolean' })
  categoryChangeAllowed?: boolean;
}

export class UpdateTemplateBody {
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  @IsOptional()
  @IsArray({ message: 'components must be a non-empty array' })
  components?: unknown[];

  @ApiPropertyOptional({ enum: TEMPLATE_CATEGORIES })
  @IsOptional()
  @IsIn(TEMPLATE_CATEGORIES, { message: CATEGORY_MESSAGE })
  category?: (typeof TEMPLATE_CATEGORIES)[number];
}

export class TemplateNameQuery {
  @ApiProperty()
  @IsString({ message: 'template_name is required' })
  @IsNotEmpty({ message: 'template_name is required' })
  template_name: string;
}

/** page/pageSize of the v2 list (to be unified with libs/core's pagination helper): out of range is a 400, never clamped. */
export class ListTemplatesQuery {
  @ApiPropertyOptional({ enum: TEMPLATE_STATUSES })
  @IsOptional()
  @IsIn(TEMPLATE_STATUSES, { message: `status must be one of ${TEMPLATE_STATUSES.join(', ')}` })
  status?: (typeof TEMPLATE_STATUSES)[number];

  @ApiPropertyOptional({ description: 'part of the template name' })
  @IsOptional()
  @IsString({ message: 'search must be a string' })
  @MaxLength(512, { message: 'search must be at most 512 characters' })
  search?: string;

  @ApiPropertyOptional({
    description:
      "only the templates this number can send: those of its WhatsApp Business Account (one of the account's messagingPhoneIds)",
  })
  @IsOptional()
  @IsString({ message: 'messagingPhoneId must be a string' })
  @MaxLength(64, { message: 'messagingPhoneId must be at most 64 characters' })
  messagingPhoneId?: string;

  @ApiPropertyOptional({ default: 1, minimum: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsIntInRange(1, MAX_PAGE)
  page?: number;

  @ApiPropertyOptional({ default: DEFAULT_PAGE_SIZE, minimum: 1, maximum: MAX_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsIntInRange(1, MAX_PAGE_SIZE)
  pageSize?: number;
}

/**
 * GET /v2/template-events: no parameters but `lastEventId` (for clients that cannot send the Last-Event-ID header; the
 * header is the documented way, so it is not in OpenAPI). Anything else is a 400 (KnownQueryParameters).
 */
export class TemplateEventsQuery {
  @IsOptional()
  @Matches(/^\d{1,20}-\d{1,20}$/, { message: 'lastEventId must be an event id such as 1764061200000-0' })
  lastEventId?: string;
}
