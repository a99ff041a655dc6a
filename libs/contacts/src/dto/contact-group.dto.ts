import { ApiProperty } from '@nestjs/swagger';
import { PaginationQuery } from '@switchboard/core';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsInt, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { MAX_ID } from './validators';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateContactGroupBody {
  @ApiProperty({ example: 'VIP customers', minLength: 1, maxLength: 200, description: 'unique within the account (case-insensitive)' })
  @Transform(trim)
  @IsString()
  @MinLength(1, { message: 'name must not be empty' })
  @MaxLength(200)
  name: string;
}

export class GroupMembersBody {
  @ApiProperty({ type: [Number], example: [42, 43], description: "ids of this account's contacts (1 to 1000)" })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(1000)
  @IsInt({ each: true, message: 'contact_ids must hold integer contact ids' })
  @Min(1, { each: true, message: 'contact_ids must hold positive contact ids' })
  @Max(MAX_ID, { each: true, message: 'contact_ids must hold positive contact ids' })
  contact_ids: number[];
}

export class ListContactGroupsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {}

// ---- responses (for Swagger) ----

export class ContactGroupItem {
  @ApiProperty({ example: 3 }) group_id: number;
  @ApiProperty({ example: 'VIP customers' }) name: string;
  @ApiProperty({ example: 120 }) member_count: number;
  @ApiProperty({ example: '2026-11-22T04:00:00.000Z' }) created_at: string;
}

export class ContactGroupData {
  @ApiProperty({ type: ContactGroupItem }) group: ContactGroupItem;
}

export class ContactGroupResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: ContactGroupData }) data: ContactGroupData;
}

export class ContactGroupListData {
  @ApiProperty({ type: [ContactGroupItem] }) groups: ContactGroupItem[];
  @ApiProperty() page: number;
  @ApiProperty() pageSize: number;
  @ApiProperty() total: number;
}

export class ContactGroupListResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: ContactGroupListData }) data: ContactGroupListData;
}

export class GroupMembersChangeData {
  @ApiProperty() group_id: number;
  @ApiProperty({ description: 'memberships created (added) or removed (removed) by this request' }) added?: number;
  @ApiProperty() removed?: number;
  @ApiProperty() member_count: number;
}

export class GroupMembersChangeResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: GroupMembersChangeData }) data: GroupMembersChangeData;
}

export class MissingContactsResponse {
  @ApiProperty({ example: 'Not all contacts exist in the database for this account.' }) message: string;
  @ApiProperty({ type: [Number], example: [99] }) missingContacts: number[];
}
