import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { type FieldError, IsIntInRange, normalizePhone, PaginationQuery, toStrictInt } from '@switchboard/core';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, ValidateIf } from 'class-validator';
import type { NewContact } from '../contacts.service';
import { IsDateOfBirth, IsEmailAddress, IsIdList, IsPhone, IsText, IsWebUrl, MAX_ID, trimToNull } from './validators';

/** A JSON number of digits is accepted as a phone number (it has no `+` or formatting to lose). */
const numberToString = ({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value);

/** The optional profile fields shared by create and update (SPEC §4: input-only on creation). */
class ContactProfileFields {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Ada Lovelace', maxLength: 200 })
  @Transform(trimToNull)
  @IsOptional()
  @IsText(200)
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'ada@example.com', maxLength: 320 })
  @Transform(trimToNull)
  @IsOptional()
  @IsEmailAddress()
  email?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: '1990-12-10', description: 'YYYY-MM-DD' })
  @Transform(trimToNull)
  @IsOptional()
  @IsDateOfBirth()
  dateOfBirth?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'female', maxLength: 50, description: 'free text' })
  @Transform(trimToNull)
  @IsOptional()
  @IsText(50)
  gender?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'https://instagram.com/ada' })
  @Transform(trimToNull)
  @IsOptional()
  @IsWebUrl()
  instagramUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'https://facebook.com/ada' })
  @Transform(trimToNull)
  @IsOptional()
  @IsWebUrl()
  facebookUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'https://www.linkedin.com/in/ada' })
  @Transform(trimToNull)
  @IsOptional()
  @IsWebUrl()
  linkedinUrl?: string | null;
}

export class CreateContactBody extends ContactProfileFields {
  @ApiProperty({
    example: '+1 (555) 010-2030',
    description:
      'with country code; `+` or `00` optional; spaces, dashes, dots and parentheses are ignored. Stored as digits.',
  })
  @Transform(numberToString)
  @IsPhone()
  contact_number: string;

  @ApiPropertyOptional({
    type: 'integer',
    isArray: true,
    example: [3, 7],
    description: "ids of this account's contact groups to add the contact to (at most 100)",
  })
  @IsOptional()
  @IsIdList(0, 100, 'group')
  group_ids?: number[];
}

/** The contact a validated create body describes (the REST endpoint and the MCP tool alike). */
export function newContactOf(body: CreateContactBody): NewContact {
  return {
    contactNumber: normalizePhone(body.contact_number)!, // validated by IsPhone
    name: body.name,
    email: body.email,
    dateOfBirth: body.dateOfBirth,
    gender: body.gender,
    instagramUrl: body.instagramUrl,
    facebookUrl: body.facebookUrl,
    linkedinUrl: body.linkedinUrl,
  };
}

/** PATCH: every field optional; `null` (or an empty string) clears a profile field. */
export class UpdateContactBody extends ContactProfileFields {
  @ApiPropertyOptional({
    type: Boolean,
    description: 'true: the contact opted out; nothing is sent to a blocked contact',
  })
  @ValidateIf((o) => o.isBlocked !== undefined)
  @IsBoolean({ message: 'isBlocked must be true or false' })
  isBlocked?: boolean;
}

export const UPDATABLE_CONTACT_FIELDS = [
  'name',
  'email',
  'isBlocked',
  'dateOfBirth',
  'gender',
  'instagramUrl',
  'facebookUrl',
  'linkedinUrl',
] as const;

/**
 * The update's keys that are no contact field, each as a field error (REST PATCH and MCP update_contact alike): the
 * validation strips unknown keys silently, and for an opt-out a typo (`is_blocked`) must not look like success.
 */
export function notUpdatableFields(keys: string[]): FieldError[] {
  const allowed = UPDATABLE_CONTACT_FIELDS as readonly string[];
  return keys
    .filter((key) => !allowed.includes(key))
    .map((field) => ({ field, message: `${field} cannot be updated; allowed fields: ${allowed.join(', ')}` }));
}

export class ListContactsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({
    type: String,
    description: 'case-insensitive substring of the name, number or email',
    maxLength: 100,
  })
  @Transform(trimToNull)
  @IsOptional()
  @IsText(100)
  search?: string | null;

  @ApiPropertyOptional({
    description: 'exact number with country code; `+`, `00` and formatting optional',
    example: '15550102030',
  })
  @Transform(trimToNull)
  @IsOptional()
  @IsPhone()
  phone?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    example: 3,
    description: 'only members of this contact group (a group of another account is a 404 `Contact group not found`)',
  })
  @Transform(toStrictInt)
  @IsOptional()
  @IsIntInRange(1, MAX_ID, { message: 'group_id must be a positive integer' })
  group_id?: number;
}

// ---- responses (for Swagger) ----

export class ContactSummary {
  @ApiProperty({ type: 'integer', example: 42 }) contact_id: number;
  @ApiProperty({ example: 'Ada Lovelace', nullable: true, type: String }) name: string | null;
  @ApiProperty({ example: '15550102030', description: 'digits with country code, no +' }) contact_number: string;
}

export class CreateContactData {
  @ApiProperty({ type: ContactSummary }) contact: ContactSummary;
  @ApiProperty({ enum: ['Created a new contact', 'The contact is already existing'] }) message: string;
}

export class CreateContactResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: CreateContactData }) data: CreateContactData;
}

export class ContactListItem extends ContactSummary {
  @ApiProperty({ example: 'ada@example.com', nullable: true, type: String }) email: string | null;
  @ApiProperty({ example: false }) isBlocked: boolean;
  @ApiProperty({ example: 'whatsapp' }) platform: string;
  @ApiProperty({ example: '2026-11-22T04:00:00.000Z', description: 'ISO 8601, UTC' }) created_at: string;
}

export class ContactListData {
  @ApiProperty({ type: [ContactListItem] }) contacts: ContactListItem[];
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) pageSize: number;
  @ApiProperty({ example: 1 }) total: number;
}

export class ContactListResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: ContactListData }) data: ContactListData;
}

export class ContactDetail extends ContactListItem {
  @ApiProperty({ example: '1990-12-10', nullable: true, type: String }) dateOfBirth: string | null;
  @ApiProperty({ nullable: true, type: String }) gender: string | null;
  @ApiProperty({ nullable: true, type: String }) instagramUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) facebookUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) linkedinUrl: string | null;
  @ApiProperty({ type: 'integer', isArray: true, description: 'groups the contact belongs to' }) group_ids: number[];
  @ApiProperty({ example: '2026-11-22T04:00:00.000Z' }) updated_at: string;
}

export class ContactDetailData {
  @ApiProperty({ type: ContactDetail }) contact: ContactDetail;
}

export class ContactDetailResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: ContactDetailData }) data: ContactDetailData;
}

export class MissingGroupsResponse {
  @ApiProperty({ example: 'Not all groups exist in the database for this account.' }) message: string;
  @ApiProperty({ type: 'integer', isArray: true, example: [99] }) missingGroups: number[];
}

export class MessageResponse {
  @ApiProperty() message: string;
}

export class FieldErrorItem {
  @ApiProperty({ example: 'groupId' }) field: string;
  @ApiProperty({
    example: 'unknown query parameter groupId; allowed: group_id, page, pageSize, phone, search',
  })
  message: string;
}

export class ValidationErrorResponse {
  @ApiProperty({ example: 400 }) statusCode: number;
  @ApiProperty({ example: 'unknown query parameter groupId; allowed: group_id, page, pageSize, phone, search' })
  message: string;
  @ApiProperty({ type: [FieldErrorItem] }) errors: FieldErrorItem[];
}
