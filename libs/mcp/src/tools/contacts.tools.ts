import {
  CONTACT_CREATED,
  CONTACT_EXISTS,
  contactListItem,
  CreateContactBody,
  ListContactsQuery,
  newContactOf,
  notUpdatableFields,
  UPDATABLE_CONTACT_FIELDS,
  UpdateContactBody,
} from '@switchboard/contacts';
import { pageMeta, validationException } from '@switchboard/core';
import { z } from 'zod';
import type { McpServices } from '../mcp-services';
import { defineTool, defined, type ToolDefinition, validateDto } from '../tool-kit';

const nullableText = (description: string) => z.string().nullable().optional().describe(description);
const profile = {
  name: nullableText('full name'),
  email: nullableText('email address'),
  dateOfBirth: nullableText('YYYY-MM-DD'),
  gender: nullableText('free text'),
  instagramUrl: nullableText('profile URL'),
  facebookUrl: nullableText('profile URL'),
  linkedinUrl: nullableText('profile URL'),
};
const contactId = z.number().int().describe('contact_id (search_contacts)');

export function contactTools(s: McpServices): ToolDefinition[] {
  return [
    defineTool({
      name: 'search_contacts',
      title: 'Search contacts',
      description:
        'Finds contacts of the account, newest first: `search` matches part of the name, number or email; `phone` is an exact number lookup.',
      grant: '/contacts',
      input: z.object({
        search: z.string().optional().describe('part of the name, number or email (case-insensitive)'),
        phone: z.string().optional().describe('exact phone number with country code'),
        page: z.number().int().optional().describe('page number, from 1 (default 1)'),
        pageSize: z.number().int().optional().describe('contacts per page, 1 to 100 (default 20)'),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args, client) {
        const query = await validateDto(ListContactsQuery, defined(args));
        const { contacts, total } = await s.contacts.listContacts(client.accountId, query);
        const items = contacts.map(contactListItem);
        const names = items.map(
          (c) =>
            `${c.name ?? '(no name)'} +${c.contact_number} (id ${c.contact_id}${c.isBlocked ? ', opted out' : ''})`,
        );
        return {
          data: { contacts: items, ...pageMeta(query, total) },
          text: `${items.length} of ${total} contact(s)${names.length ? `: ${names.join('; ')}` : ''}`,
        };
      },
    }),
    defineTool({
      name: 'create_contact',
      title: 'Create a contact',
      description:
        'Creates a contact, or returns the existing one with that number (numbers are unique per account, so repeating the call is safe). ' +
        "group_ids adds it to the account's contact groups (all must exist, else nothing is written).",
      grant: '/contacts',
      input: z.object({
        contact_number: z.string().describe('phone number with country code, e.g. +1 555 010 2030'),
        ...profile,
        group_ids: z.array(z.number().int()).optional().describe('ids of contact groups to add the contact to'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(args, client) {
        const body = await validateDto(CreateContactBody, defined(args));
        const { contact, created } = await s.contacts.createContact(
          client.accountId,
          newContactOf(body),
          body.group_ids,
        );
        const message = created ? CONTACT_CREATED : CONTACT_EXISTS;
        return {
          data: { contact: contactListItem(contact), created, message },
          text: `${message}: ${contact.name ?? '(no name)'} +${contact.contactNumber} (contact_id ${contact.id})`,
        };
      },
    }),
    defineTool({
      name: 'update_contact',
      title: 'Update a contact',
      description:
        'Changes the given fields of a contact (others stay); null clears a profile field. isBlocked: true records an opt-out: nothing is sent to ' +
        'a blocked contact. The number cannot be changed.',
      grant: '/contacts',
      input: z
        .object({
          contact_id: contactId,
          ...profile,
          isBlocked: z.boolean().optional().describe('true: the contact opted out of messages'),
        })
        // kept, to be refused below: a misspelt opt-out (`is_blocked`) dropped silently looked like success
        .passthrough(),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      async run({ contact_id, ...fields }, client) {
        const unknown = notUpdatableFields(Object.keys(fields));
        if (unknown.length) throw validationException(unknown);
        const sent = Object.keys(defined(fields));
        if (!sent.length)
          throw validationException([
            { field: 'body', message: `send at least one of: ${UPDATABLE_CONTACT_FIELDS.join(', ')}` },
          ]);
        const body = await validateDto(UpdateContactBody, defined(fields));
        const changes = Object.fromEntries(
          UPDATABLE_CONTACT_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]),
        );
        const contact = await s.contacts.updateContact(client.accountId, String(contact_id), changes);
        return {
          data: { contact: contactListItem(contact) },
          text: `Updated contact ${contact.id} (${sent.join(', ')})`,
        };
      },
    }),
  ];
}
