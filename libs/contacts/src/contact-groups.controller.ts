import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
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
import { pageMeta } from '@switchboard/core';
import { ContactsService, ContactGroupWithCount } from './contacts.service';
import {
  ContactGroupListResponse,
  ContactGroupResponse,
  CreateContactGroupBody,
  GroupMembersBody,
  GroupMembersChangeResponse,
  ListContactGroupsQuery,
  MissingContactsResponse,
} from './dto/contact-group.dto';
import { MessageResponse } from './dto/contact.dto';
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
  @ApiOperation({ summary: 'List contact groups, newest first, with member counts' })
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
