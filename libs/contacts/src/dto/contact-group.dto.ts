import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PaginationQuery } from '@switchboard/core';
import { Transform } from 'class-transformer';
import { IsOptional } from 'class-validator';
import { ContactListItem } from './contact.dto';
import { IsIdList, IsText, trimToNull } from './validators';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateContactGroupBody {
  @ApiProperty({
    example: 'VIP customers',
    minLength: 1,
    maxLength: 200,
    description: 'unique within the account (case-insensitive)',
  })
  @Transform(trim)
  @IsText(200, 1)
  name: string;
}

export class GroupMembersBody {
  @ApiProperty({
    type: 'integer',
    isArray: true,
    example: [42, 43],
    description: "ids of this account's contacts (1 to 1000)",
  })
  @IsIdList(1, 1000, 'contact')
  contact_ids: number[];
}

/** PATCH /v2/contact-groups/{id}: the new name (same rules as on creation). */
export class RenameContactGroupBody extends CreateContactGroupBody {}

export class ListContactGroupsQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {}

/** GET /v2/contact-groups/{id}/members: the members, newest contact first, optionally searched like /v2/contacts. */
export class ListGroupMembersQuery extends PaginationQuery({ defaultPageSize: 20, maxPageSize: 100 }) {
  @ApiPropertyOptional({
    type: String,
    description: 'case-insensitive substring of the name, number or email',
    maxLength: 100,
  })
  @Transform(trimToNull)
  @IsOptional()
  @IsText(100)
  search?: string | null;
}

// ---- responses (for Swagger) ----

export class ContactGroupItem {
  @ApiProperty({ type: 'integer', example: 3 }) group_id: number;
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
  @ApiPropertyOptional({ type: 'integer', description: 'memberships created by this request (POST)' }) added?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'memberships removed by this request (DELETE)' })
  removed?: number;
  @ApiProperty() member_count: number;
}

export class GroupMembersChangeResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: GroupMembersChangeData }) data: GroupMembersChangeData;
}

export class MissingContactsResponse {
  @ApiProperty({ example: 'Not all contacts exist in the database for this account.' }) message: string;
  @ApiProperty({ type: 'integer', isArray: true, example: [99] }) missingContacts: number[];
}

export class GroupMembersData {
  @ApiProperty({ type: ContactGroupItem }) group: ContactGroupItem;
  @ApiProperty({ type: [ContactListItem] }) contacts: ContactListItem[];
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) pageSize: number;
  @ApiProperty({ example: 1, description: 'members matching the query' }) total: number;
}

export class GroupMembersResponse {
  @ApiProperty({ example: true }) success: boolean;
  @ApiProperty({ type: GroupMembersData }) data: GroupMembersData;
}
