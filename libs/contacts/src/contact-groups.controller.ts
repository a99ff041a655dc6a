import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { KnownQueryParameters, pageMeta } from '@switchboard/core';
import { ContactsService, ContactGroupWithCount } from './contacts.service';
import {
  ContactGroupListResponse,
  ContactGroupResponse,
  CreateContactGroupBody,
  GroupMembersBody,
  GroupMembersChangeResponse,
  GroupMembersResponse,
  ListContactGroupsQuery,
  ListGroupMembersQuery,
  MissingContactsResponse,
  RenameContactGroupBody,
} from './dto/contact-group.dto';
import { MessageResponse, ValidationErrorResponse } from './dto/contact.dto';
import { contactListItem } from './contacts.controller';
import { ParseIdPipe } from './dto/validators';

function groupItem(g: ContactGroupWithCount) {
  return { group_id: Number(g.id), name: g.name, member_count: g.memberCount, created_at: g.createdAt.toISOString() };
}

const groupIdPipe = new ParseIdPipe('group_id');

/** Contact groups: not in SPEC beyond the ids used in create-contact's group_ids; our design (docs/contacts.md). */
@ApiTags('Contact groups')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/contacts')
@Controller('v2/contact-groups')
export class ContactGroupsController {
  constructor(private readonly contacts: ContactsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a contact group (name unique in the account, case-insensitive)' })
  @ApiCreatedResponse({ type: ContactGroupResponse })
  @ApiConflictResponse({ description: 'a group with that name exists: message and its group_id' })
  async create(@AccountId() accountId: string, @Body() body: CreateContactGroupBody) {
    return { success: true, data: { group: groupItem(await this.contacts.createGroup(accountId, body.name)) } };
  }

  @Get()
  @KnownQueryParameters(ListContactGroupsQuery)
  @ApiOperation({ summary: 'List contact groups, newest first, with member counts (unknown query parameters: 400)' })
  @ApiBadRequestResponse({ type: ValidationErrorResponse, description: 'a query parameter at fault, named' })
  @ApiOkResponse({ type: ContactGroupListResponse })
  async list(@AccountId() accountId: string, @Query() query: ListContactGroupsQuery) {
    const { groups, total } = await this.contacts.listGroups(accountId, query);
    return { success: true, data: { groups: groups.map(groupItem), ...pageMeta(query, total) } };
  }

  @Get(':group_id')
  @ApiOperation({ summary: 'One contact group with its member count' })
  @ApiParam({ name: 'group_id', type: 'integer' })
  @ApiOkResponse({ type: ContactGroupResponse })
  @ApiNotFoundResponse({ type: MessageResponse, description: '`Contact group not found`' })
  async get(@AccountId() accountId: string, @Param('group_id', groupIdPipe) groupId: string) {
    return { success: true, data: { group: groupItem(await this.contacts.getGroup(accountId, groupId)) } };
  }

  @Patch(':group_id')
  @ApiOperation({ summary: 'Rename a contact group (name unique in the account, case-insensitive)' })
  @ApiParam({ name: 'group_id', type: 'integer', example: 3 })
  @ApiBody({ type: RenameContactGroupBody, examples: { rename: { value: { name: 'Gold customers' } } } })
  @ApiOkResponse({ type: ContactGroupResponse })
  @ApiBadRequestResponse({ type: ValidationErrorResponse, description: 'name missing, empty or too long' })
  @ApiNotFoundResponse({ type: MessageResponse, description: "`Contact group not found` (also another account's)" })
  @ApiConflictResponse({ description: 'another group has that name: message and its group_id' })
  async rename(
    @AccountId() accountId: string,
    @Param('group_id', groupIdPipe) groupId: string,
    @Body() body: RenameContactGroupBody,
  ) {
    return {
      success: true,
      data: { group: groupItem(await this.contacts.renameGroup(accountId, groupId, body.name)) },
    };
  }

  @Get(':group_id/members')
  @KnownQueryParameters(ListGroupMembersQuery)
  @ApiOperation({
    summary: "The group's members, newest contact first, paged; search by name, number or email",
    description: 'Each member as in GET /v2/contacts (isBlocked: the opt-out). Unknown query parameters: 400.',
  })
  @ApiParam({ name: 'group_id', type: 'integer', example: 3 })
  @ApiOkResponse({ type: GroupMembersResponse })
  @ApiBadRequestResponse({ type: ValidationErrorResponse, description: 'a query parameter at fault, named' })
  @ApiNotFoundResponse({ type: MessageResponse, description: "`Contact group not found` (also another account's)" })
  async members(
    @AccountId() accountId: string,
    @Param('group_id', groupIdPipe) groupId: string,
    @Query() query: ListGroupMembersQuery,
  ) {
    const group = await this.contacts.getGroup(accountId, groupId);
    const { contacts, total } = await this.contacts.listContacts(accountId, { ...query, groupId });
    return {
      success: true,
      data: { group: groupItem(group), contacts: contacts.map(contactListItem), ...pageMeta(query, total) },
    };
  }

  @Post(':group_id/members')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add contacts to the group (idempotent); all ids must be contacts of this account, or nothing is added',
  })
  @ApiParam({ name: 'group_id', type: 'integer' })
  @ApiOkResponse({ type: GroupMembersChangeResponse })
  @ApiBadRequestResponse({ type: MissingContactsResponse })
  @ApiNotFoundResponse({ type: MessageResponse, description: '`Contact group not found`' })
  async addMembers(
    @AccountId() accountId: string,
    @Param('group_id', groupIdPipe) groupId: string,
    @Body() body: GroupMembersBody,
  ) {
    const { added, group } = await this.contacts.addMembers(accountId, groupId, body.contact_ids);
    return { success: true, data: { group_id: Number(group.id), added, member_count: group.memberCount } };
  }

  @Delete(':group_id/members')
  @HttpCode(200)
  @ApiOperation({ summary: 'Remove contacts from the group (ids that are not members are ignored)' })
  @ApiParam({ name: 'group_id', type: 'integer' })
  @ApiOkResponse({ type: GroupMembersChangeResponse })
  @ApiNotFoundResponse({ type: MessageResponse, description: '`Contact group not found`' })
  async removeMembers(
    @AccountId() accountId: string,
    @Param('group_id', groupIdPipe) groupId: string,
    @Body() body: GroupMembersBody,
  ) {
    const { removed, group } = await this.contacts.removeMembers(accountId, groupId, body.contact_ids);
    return { success: true, data: { group_id: Number(group.id), removed, member_count: group.memberCount } };
  }

  @Delete(':group_id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Delete the group and its memberships (the contacts stay)' })
  @ApiParam({ name: 'group_id', type: 'integer' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundResponse({ type: MessageResponse, description: '`Contact group not found`' })
  async remove(@AccountId() accountId: string, @Param('group_id', groupIdPipe) groupId: string) {
    await this.contacts.deleteGroup(accountId, groupId);
    return { success: true, message: 'Contact group deleted' };
  }
}
