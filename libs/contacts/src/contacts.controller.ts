import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AccountId, RequireGrant } from '@switchboard/auth';
import { KnownQueryParameters, pageMeta, validationException } from '@switchboard/core';
import type { FastifyRequest } from 'fastify';
import {
  CONTACT_CREATED,
  CONTACT_EXISTS,
  ContactListRow,
  ContactsService,
  ContactWithGroups,
} from './contacts.service';
import {
  ContactDetailResponse,
  ContactListResponse,
  CreateContactBody,
  CreateContactResponse,
  ListContactsQuery,
  MessageResponse,
  MissingGroupsResponse,
  newContactOf,
  notUpdatableFields,
  UPDATABLE_CONTACT_FIELDS,
  UpdateContactBody,
  ValidationErrorResponse,
} from './dto/contact.dto';
import { ParseIdPipe } from './dto/validators';

/** SPEC §2 list shape: contact_id, name, contact_number, email, isBlocked, platform, created_at (ISO 8601 UTC). */
export function contactListItem(c: ContactListRow) {
  return {
    contact_id: Number(c.id),
    name: c.name,
    contact_number: c.contactNumber,
    // a customer known only by a WhatsApp business-scoped user id has no number (contact_number null)
    ...(c.whatsappUserId ? { whatsapp_user_id: c.whatsappUserId } : {}),
    email: c.email,
    isBlocked: c.isBlocked,
    platform: c.platform,
    created_at: c.createdAt.toISOString(),
  };
}

function contactDetail(c: ContactWithGroups) {
  return {
    ...contactListItem(c),
    dateOfBirth: c.dateOfBirth,
    gender: c.gender,
    instagramUrl: c.instagramUrl,
    facebookUrl: c.facebookUrl,
    linkedinUrl: c.linkedinUrl,
    customFields: c.customFields,
    group_ids: c.groupIds.map(Number),
    updated_at: c.updatedAt.toISOString(),
  };
}

@ApiTags('Contacts')
@ApiHeader({ name: 'Authorization', description: 'access token as issued', required: true })
@RequireGrant('/contacts')
@Controller()
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Post('contacts/create-contact')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a contact, or return the existing one with that number (idempotent)',
    description:
      'contact_number is normalised to digits (country code required). When group_ids are given, all must be groups of this account; ' +
      'otherwise 400 with missingGroups and nothing is written. The contact (new or existing) is added to the groups.',
  })
  @ApiOkResponse({ type: CreateContactResponse })
  @ApiBadRequestResponse({
    type: MissingGroupsResponse,
    description: 'unknown group ids, or a field at fault (statusCode, message, errors[])',
  })
  async create(@AccountId() accountId: string, @Body() body: CreateContactBody) {
    const { contact, created } = await this.contacts.createContact(accountId, newContactOf(body), body.group_ids);
    return {
      success: true,
      data: {
        contact: { contact_id: Number(contact.id), name: contact.name, contact_number: contact.contactNumber },
        message: created ? CONTACT_CREATED : CONTACT_EXISTS,
      },
    };
  }

  @Get('v2/contacts')
  @KnownQueryParameters(ListContactsQuery)
  @ApiOperation({
    summary:
      'List contacts, newest first; search by name, number or email; exact phone lookup; members of a group (group_id)',
    description: 'An unknown query parameter is a 400 naming it (a mistyped filter never lists everything).',
  })
  @ApiOkResponse({ type: ContactListResponse })
  @ApiBadRequestResponse({
    type: ValidationErrorResponse,
    description: 'a query parameter at fault (e.g. pageSize above 100, or an unknown one), named in errors[].field',
  })
  @ApiNotFoundResponse({
    type: MessageResponse,
    description: '`Contact group not found` (group_id of no group of yours)',
  })
  async list(@AccountId() accountId: string, @Query() query: ListContactsQuery) {
    const { contacts, total } = await this.contacts.listContacts(accountId, {
      ...query,
      groupId: query.group_id ? String(query.group_id) : null,
    });
    return { success: true, data: { contacts: contacts.map(contactListItem), ...pageMeta(query, total) } };
  }

  @Get('v2/contacts/:contact_id')
  @ApiOperation({ summary: 'One contact with its profile fields and group ids' })
  @ApiParam({ name: 'contact_id', type: 'integer' })
  @ApiOkResponse({ type: ContactDetailResponse })
  @ApiNotFoundResponse({
    type: MessageResponse,
    description: "`Contact not found` (also for another account's contact)",
  })
  async get(@AccountId() accountId: string, @Param('contact_id', new ParseIdPipe('contact_id')) contactId: string) {
    return { success: true, data: { contact: contactDetail(await this.contacts.getContact(accountId, contactId)) } };
  }

  @Patch('v2/contacts/:contact_id')
  @ApiOperation({
    summary: 'Update a contact: name, email, isBlocked (opt-out) and profile fields',
    description:
      'Only the fields sent change; null clears a profile field. The number cannot be changed. Unknown fields are a 400.',
  })
  @ApiParam({ name: 'contact_id', type: 'integer' })
  @ApiBody({ type: UpdateContactBody })
  @ApiOkResponse({ type: ContactDetailResponse })
  @ApiNotFoundResponse({ type: MessageResponse, description: '`Contact not found`' })
  async update(
    @AccountId() accountId: string,
    @Param('contact_id', new ParseIdPipe('contact_id')) contactId: string,
    @Body() body: UpdateContactBody,
    @Req() request: FastifyRequest,
  ) {
    // The global pipe strips unknown fields silently: they are refused here, from the raw body.
    const raw = request.body;
    const sent = raw && typeof raw === 'object' && !Array.isArray(raw) ? Object.keys(raw) : [];
    const unknown = notUpdatableFields(sent);
    if (unknown.length) throw validationException(unknown);
    if (!sent.length) {
      throw validationException([
        { field: 'body', message: `send at least one of: ${UPDATABLE_CONTACT_FIELDS.join(', ')}` },
      ]);
    }
    const changes = Object.fromEntries(
      UPDATABLE_CONTACT_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]),
    );
    return {
      success: true,
      data: { contact: contactDetail(await this.contacts.updateContact(accountId, contactId, changes)) },
    };
  }
}
