import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIntInRange } from '@switchboard/core';
import { IsArray, IsBoolean, IsIn, IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { TEMPLATE_CATEGORIES, TEMPLATE_STATUSES } from './template.entity';

export const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
/** `en`, `en_US`, `zh_HK`, `fil`, `es_419`-style codes as Meta lists them */
export const LANGUAGE_CODE = /^[a-z]{2,3}(_[A-Z]{2}|_[0-9]{3})?$/;
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
  @Matches(TEMPLATE_NAME, { message: 'template_name must be 1 to 512 lowercase letters, digits or underscores' })
  template_name: string;

  @ApiProperty({ enum: TEMPLATE_CATEGORIES })
  @IsIn(TEMPLATE_CATEGORIES, { message: `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}` })
  category: (typeof TEMPLATE_CATEGORIES)[number];

  @ApiProperty({ example: 'en_US' })
  @IsString({ message: 'language is required (string)' })
  @Matches(LANGUAGE_CODE, { message: 'language must be a language code such as en or en_US' })
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
  @IsIn(TEMPLATE_CATEGORIES, { message: `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}` })
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
