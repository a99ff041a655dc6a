import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  clipText,
  MicroBatcher,
  normalizePhone,
  pageOffset,
  PageRequest,
  PHONE_FORMAT_HINT,
  phoneDigits,
  validationException,
} from '@switchboard/core';
import { HANDLES_UNIQUE_VIOLATION, queryPlan, type QueryPlan } from '@switchboard/core/database';
import { EntityManager, Repository } from 'typeorm';
import { ContactGroup } from './contact-group.entity';
import { Contact } from './contact.entity';

export const CONTACT_CREATED = 'Created a new contact';
export const CONTACT_EXISTS = 'The contact is already existing';
export const GROUPS_MISSING = 'Not all groups exist in the database for this account.';
export const CONTACTS_MISSING = 'Not all contacts exist in the database for this account.';
export const CONTACT_NOT_FOUND = 'Contact not found';
export const GROUP_NOT_FOUND = 'Contact group not found';

/**
 * What a search that looks like (part of) a phone number matches in the stored digits: its digits anywhere
 * ("+1 555-01" → 155501), and, written internationally, the number as stored from its start ("+44 (0)20 7946" and
 * "0044 20 7946" → 44207946; a "00" elsewhere, "0012", stays part of the digits). Empty strings: not phone-like.
 */
function phoneSearch(search: string): { digits: string; international: string } {
  const text = search.trim();
  if (!/^[+\d\s().-]+$/.test(text)) return { digits: '', international: '' };
  const international = text.startsWith('+') || text.startsWith('00') ? phoneDigits(text) : '';
  return { digits: text.replace(/\D/g, ''), international };
}

/** The fields a contact can be created with (contact_number already normalised to digits). */
export interface NewContact {
  contactNumber: string;
  name?: string | null;
  email?: string | null;
  dateOfBirth?: string | null;
  gender?: string | null;
  instagramUrl?: string | null;
  facebookUrl?: string | null;
  linkedinUrl?: string | null;
}

/** A row of a contact import, normalised (number as digits), for ContactsService.importContacts. */
export interface ImportedContact {
  number: string;
  name: string | null;
  email: string | null;
  custom: Record<string, string> | null;
}

/** What ContactsService.importContacts did with a batch. */
export interface ImportCounts {
  created: number;
  updated: number;
  skipped: number;
  /** numbers of existing contacts that opted out: left unchanged */
  blocked: string[];
}

export type ContactChanges = Partial<Omit<NewContact, 'contactNumber'>> & { isBlocked?: boolean };

export interface ContactWithGroups extends Contact {
  groupIds: string[];
}

export interface ContactGroupWithCount extends ContactGroup {
  memberCount: number;
}

export interface ContactSearch extends PageRequest {
  /** Case-insensitive substring of name, number or email. */
  search?: string | null;
  /** Exact number, any accepted format (normalised here). */
  phone?: string | null;
  /** Only members of this group (the caller checks that it is the account's: see listContacts). */
  groupId?: string | null;
}

const CONTACT_FIELDS: Array<[keyof Contact, string]> = [
  ['id', 'id'],
  ['accountId', 'account_id'],
  ['name', 'name'],
  ['contactNumber', 'contact_number'],
  ['whatsappUserId', 'whatsapp_user_id'],
  ['email', 'email'],
  ['dateOfBirth', 'date_of_birth'],
  ['gender', 'gender'],
  ['instagramUrl', 'instagram_url'],
  ['facebookUrl', 'facebook_url'],
  ['linkedinUrl', 'linkedin_url'],
  ['customFields', 'custom_fields'],
  ['isBlocked', 'is_blocked'],
  ['platform', 'platform'],
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
];
const COLUMN_OF = new Map(CONTACT_FIELDS);

/** What GET /v2/contacts answers with (contactListItem): the list reads only these columns. */
const LIST_FIELDS = [
  'id',
  'name',
  'contactNumber',
  'whatsappUserId',
  'email',
  'isBlocked',
  'platform',
  'createdAt',
] as const;
export type ContactListRow = Pick<Contact, (typeof LIST_FIELDS)[number]>;
const LIST_COLUMNS = CONTACT_FIELDS.filter(([field]) => (LIST_FIELDS as readonly string[]).includes(field));

/** The select list of a contact row, camelCase aliases (dates as `YYYY-MM-DD` text, not a local-midnight Date). */
function contactColumns(alias?: string, fields = CONTACT_FIELDS): string {
  const p = alias ? `${alias}.` : '';
  return fields
    .map(([field, column]) =>
      column === 'date_of_birth' ? `${p}${column}::text AS "${field}"` : `${p}${column} AS "${field}"`,
    )
    .join(', ');
}

function toContact(row: Record<string, unknown>): Contact {
  return Object.assign(new Contact(), row);
}

/** `%`, `_` and `\` match literally in a LIKE pattern. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

const unique = (ids: Array<number | string>) => [...new Set(ids.map(String))];

/**
 * Contacts and contact groups. Every method takes the caller's account id and touches nothing outside it:
 * an id of another account behaves exactly like an id that does not exist.
 */
@Injectable()
export class ContactsService {
  /** numbers looked up or created at the same moment (a batch of automation sends): one statement for all */
  private readonly creating = new MicroBatcher(
    (items: Array<{ accountId: string; contactNumber: string; name: string | null }>) => this.insertOrGetMany(items),
    { maxItems: 100 },
  );

  constructor(
    @InjectRepository(Contact) private readonly contacts: Repository<Contact>,
    @InjectRepository(ContactGroup) private readonly groups: Repository<ContactGroup>,
  ) {}

  // ---------------------------------------------------------------- contacts

  /**
   * POST /contacts/create-contact. Idempotent by number: an existing contact is returned unchanged (its other
   * fields are not overwritten). The group ids must all be this account's groups, or nothing is written (400);
   * the contact, new or existing, is then a member of each of them. Race-safe: concurrent creates of one number
   * make one row.
   */
  async createContact(
    accountId: string,
    input: NewContact,
    groupIds: Array<number | string> | null = [],
  ): Promise<{ contact: Contact; created: boolean }> {
    const wanted = unique(groupIds ?? []); // null (JSON's "none") as absent
    return this.contacts.manager.transaction(async (tx) => {
      if (wanted.length) {
        // KEY SHARE: a concurrent group deletion waits for this transaction instead of breaking the membership insert.
        const found: Array<{ id: string }> = await tx.query(
          `SELECT id FROM contact_groups WHERE account_id = $1 AND id = ANY($2::bigint[]) FOR KEY SHARE`,
          [accountId, wanted],
        );
        const have = new Set(found.map((g) => String(g.id)));
        const missing = wanted.filter((id) => !have.has(id));
        if (missing.length)
          throw new BadRequestException({ message: GROUPS_MISSING, missingGroups: missing.map(Number) });
      }
      const result = await this.insertOrGet(tx, accountId, input);
      if (wanted.length) {
        await tx.query(
          // in id order, as every membership insert: two requests naming the same groups in another order deadlocked
          `INSERT INTO contact_group_members (group_id, contact_id) SELECT g, $2 FROM unnest($1::bigint[]) AS g ORDER BY g ON CONFLICT DO NOTHING`,
          [wanted, result.contact.id],
        );
      }
      return result;
    });
  }

  /**
   * For messaging: the account's contact with this number, created (with `name`) when there is none.
   * Race-safe (INSERT … ON CONFLICT DO NOTHING, then SELECT). `number` may be in any accepted format;
   * an implausible number is a 400 naming `contact_number`; the name is cut to 200 characters. Pass `manager` to take
   * part in a transaction (READ COMMITTED, the default: the SELECT after a lost insert must see the winner's row).
   */
  async findOrCreateByNumber(
    accountId: string,
    number: string,
    name?: string | null,
    manager?: EntityManager,
  ): Promise<{ contact: Contact; created: boolean }> {
    const contactNumber = normalizePhone(number);
    if (!contactNumber)
      throw validationException([{ field: 'contact_number', message: `contact_number must be ${PHONE_FORMAT_HINT}` }]);
    const trimmed = clipText(name?.trim() ?? '', 200) || null;
    if (manager) return this.insertOrGet(manager, accountId, { contactNumber, name: trimmed });
    return this.creating.add({ accountId, contactNumber, name: trimmed });
  }

  /**
   * For inbound messages: the account's contact of a WhatsApp user, bound by the business-scoped user id (BSUID) and,
   * when Meta sends it, the phone number. A known number gets the user id recorded (unless another contact already
   * holds it); a user known only by the id gets a contact without a number. Race-safe like findOrCreateByNumber.
   */
  async findOrCreateByWhatsAppUser(
    accountId: string,
    userId: string,
    phone: string | null,
    name?: string | null,
  ): Promise<{ contact: Contact; created: boolean }> {
    const trimmed = clipText(name?.trim() ?? '', 200) || null;
    const db = this.contacts.manager;
    const contactNumber = phone ? normalizePhone(phone) : null;
    if (contactNumber) {
      const found = await this.insertOrGet(db, accountId, { contactNumber, name: trimmed });
      if (found.contact.whatsappUserId) return found;
      const [rows] = (await db.query(
        `UPDATE contacts SET whatsapp_user_id = $3, updated_at = now()
          WHERE account_id = $1 AND id = $2 AND whatsapp_user_id IS NULL
            AND NOT EXISTS (SELECT 1 FROM contacts o WHERE o.account_id = $1 AND o.whatsapp_user_id = $3)
          RETURNING ${contactColumns()}`,
        [accountId, found.contact.id, userId],
      )) as [Array<Record<string, unknown>>, number];
      return rows[0] ? { contact: toContact(rows[0]), created: found.created } : found;
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await db.query(
        `INSERT INTO contacts (account_id, whatsapp_user_id, name) VALUES ($1, $2, $3)
         ON CONFLICT (account_id, whatsapp_user_id) WHERE whatsapp_user_id IS NOT NULL DO NOTHING
         RETURNING ${contactColumns()}`,
        [accountId, userId, trimmed],
      );
      if (inserted[0]) return { contact: toContact(inserted[0]), created: true };
      const existing = await db.query(
        `SELECT ${contactColumns()} FROM contacts WHERE account_id = $1 AND whatsapp_user_id = $2`,
        [accountId, userId],
      );
      if (existing[0]) return { contact: toContact(existing[0]), created: false };
    }
    throw new ConflictException({ message: 'The contact changed while it was being created; try again' });
  }

  /** The account's contact with this number (any accepted format), or null. */
  async findByNumber(accountId: string, number: string): Promise<Contact | null> {
    const contactNumber = normalizePhone(number);
    if (!contactNumber) return null;
    const rows = await this.contacts.query(
      `SELECT ${contactColumns()} FROM contacts WHERE account_id = $1 AND contact_number = $2`,
      [accountId, contactNumber],
    );
    return rows[0] ? toContact(rows[0]) : null;
  }

  /** Which of these numbers (digits, as stored) the account has a contact with, the first such of the list; or null. */
  async firstKnownNumber(accountId: string, numbers: string[]): Promise<string | null> {
    const rows: Array<{ contact_number: string }> = await this.contacts.query(
      `SELECT contact_number FROM contacts WHERE account_id = $1 AND contact_number = ANY($2::text[])`,
      [accountId, numbers],
    );
    const known = new Set(rows.map((r) => r.contact_number));
    return numbers.find((n) => known.has(n)) ?? null;
  }

  /** The account's contact, or null (also for another account's id). */
  async findById(accountId: string, contactId: string): Promise<Contact | null> {
    const rows = await this.contacts.query(
      `SELECT ${contactColumns()} FROM contacts WHERE account_id = $1 AND id = $2`,
      [accountId, contactId],
    );
    return rows[0] ? toContact(rows[0]) : null;
  }

  /** GET /v2/contacts/{id}: the contact with the ids of its groups; 404 `Contact not found`. */
  async getContact(accountId: string, contactId: string): Promise<ContactWithGroups> {
    const rows = await this.contacts.query(
      `SELECT ${contactColumns('c')},
              COALESCE((SELECT array_agg(m.group_id ORDER BY m.group_id) FROM contact_group_members m WHERE m.contact_id = c.id), '{}') AS "groupIds"
         FROM contacts c WHERE c.account_id = $1 AND c.id = $2`,
      [accountId, contactId],
    );
    if (!rows[0]) throw new NotFoundException({ message: CONTACT_NOT_FOUND });
    return Object.assign(toContact(rows[0]), { groupIds: (rows[0].groupIds as unknown[]).map(String) });
  }

  /** PATCH /v2/contacts/{id}: sets the given fields (`null` clears a profile field); 404 `Contact not found`. */
  async updateContact(accountId: string, contactId: string, changes: ContactChanges): Promise<ContactWithGroups> {
    const sets: string[] = [];
    const params: unknown[] = [accountId, contactId];
    for (const [field, value] of Object.entries(changes)) {
      const column = COLUMN_OF.get(field as keyof Contact);
      if (value === undefined || !column || field === 'contactNumber' || field === 'id' || field === 'accountId')
        continue;
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    }
    sets.push('updated_at = now()');
    const [, affected] = await this.contacts.query(
      `UPDATE contacts SET ${sets.join(', ')} WHERE account_id = $1 AND id = $2`,
      params,
    );
    if (!affected) throw new NotFoundException({ message: CONTACT_NOT_FOUND });
    return this.getContact(accountId, contactId);
  }

  /**
   * For automations (update_contact steps): updates the account's contact by id, else by number: `name` and `email`,
   * any other field merged into its custom fields. Null when the account has no such contact.
   */
  async updateFromAutomation(
    accountId: string,
    /** contactNumber: the run's customer key, a number or the business-scoped user id of a contact known only by it */
    target: { contactId: string | null; contactNumber: string },
    fields: Record<string, unknown>,
  ): Promise<{ contactId: string } | null> {
    const { name, email, ...custom } = fields;
    const [rows] = (await this.contacts.query(
      `UPDATE contacts SET name = COALESCE($4, name), email = COALESCE($5, email), custom_fields = custom_fields || $6::jsonb, updated_at = now()
        WHERE id = (SELECT id FROM contacts WHERE account_id = $1 AND (id = $2::bigint OR contact_number = $3 OR whatsapp_user_id = $3) ORDER BY (id = $2::bigint) DESC NULLS LAST LIMIT 1)
        RETURNING id`,
      [accountId, target.contactId, target.contactNumber, name ?? null, email ?? null, JSON.stringify(custom)],
    )) as [Array<{ id: string }>, number];
    return rows[0] ? { contactId: String(rows[0].id) } : null;
  }

  // ---------------------------------------------------------------- for campaigns (batched, inside the caller's transaction)

  /** Which of these group ids are not groups of the account. */
  async missingGroups(accountId: string, groupIds: string[]): Promise<string[]> {
    if (!groupIds.length) return [];
    const rows: Array<{ id: string }> = await this.groups.query(
      `SELECT id FROM contact_groups WHERE account_id = $1 AND id = ANY($2::bigint[])`,
      [accountId, groupIds],
    );
    const known = new Set(rows.map((r) => String(r.id)));
    return groupIds.filter((id) => !known.has(id));
  }

  /** The custom fields of the account's contacts with these numbers, by number (unknown numbers are left out). */
  async customFieldsByNumber(accountId: string, numbers: string[]): Promise<Map<string, Record<string, unknown>>> {
    const rows: Array<{ contact_number: string; custom_fields: Record<string, unknown> }> = await this.contacts.query(
      `SELECT contact_number, custom_fields FROM contacts WHERE account_id = $1 AND contact_number = ANY($2::text[])`,
      [accountId, numbers],
    );
    return new Map(rows.map((r) => [r.contact_number, r.custom_fields]));
  }

  /**
   * Finds or creates contacts by normalised number in one statement (existing contacts keep their name and email);
   * by number. Null when a concurrent transaction keeps creating some of them (the caller retries the request).
   */
  async findOrCreateMany(
    tx: EntityManager,
    accountId: string,
    contacts: Array<{ number: string; name: string | null; email: string | null }>,
  ): Promise<Map<string, { id: string; blocked: boolean }> | null> {
    const out = new Map<string, { id: string; blocked: boolean }>();
    let todo = contacts;
    for (let attempt = 0; attempt < 3 && todo.length; attempt++) {
      const rows: Array<{ id: string; contact_number: string; is_blocked: boolean }> = await tx.query(
        `WITH input AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS x(number, name, email)),
              ins AS (INSERT INTO contacts (account_id, contact_number, name, email)
                      SELECT $1, number, name, email FROM input ORDER BY number
                      ON CONFLICT (account_id, contact_number) DO NOTHING
                      RETURNING id, contact_number, is_blocked)
         SELECT id, contact_number, is_blocked FROM ins
         UNION ALL
         SELECT c.id, c.contact_number, c.is_blocked FROM contacts c JOIN input i ON i.number = c.contact_number WHERE c.account_id = $1`,
        [accountId, todo.map((c) => c.number), todo.map((c) => c.name), todo.map((c) => c.email)],
      );
      for (const r of rows) out.set(r.contact_number, { id: String(r.id), blocked: r.is_blocked });
      // A contact created by a concurrent transaction after our snapshot: look again.
      todo = todo.filter((c) => !out.has(c.number));
    }
    return todo.length ? null : out;
  }

  /** Members of any of the groups with an id above `afterContactId`, in id order (keyset pagination over an audience). */
  async groupAudienceAfter(
    db: EntityManager,
    accountId: string,
    groupIds: string[],
    afterContactId: string,
    limit: number,
  ): Promise<
    Array<{
      id: string;
      contactNumber: string;
      isBlocked: boolean;
      name: string | null;
      email: string | null;
      customFields: Record<string, unknown>;
    }>
  > {
    const rows: Array<{
      id: string;
      contact_number: string;
      is_blocked: boolean;
      name: string | null;
      email: string | null;
      custom_fields: Record<string, unknown>;
    }> = await db.query(
      `SELECT c.id, COALESCE(c.contact_number, c.whatsapp_user_id) AS contact_number, c.is_blocked, c.name, c.email, c.custom_fields
         FROM contacts c
        WHERE c.account_id = $1 AND c.id > $2
          AND EXISTS (SELECT 1 FROM contact_group_members m WHERE m.contact_id = c.id AND m.group_id = ANY($3::bigint[]))
        ORDER BY c.id
        LIMIT $4`,
      [accountId, afterContactId, groupIds, limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      contactNumber: r.contact_number,
      isBlocked: r.is_blocked,
      name: r.name,
      email: r.email,
      customFields: r.custom_fields ?? {},
    }));
  }

  /** How many distinct contacts the groups hold, and how many of them are blocked (a campaign's audience). */
  async groupAudienceCount(accountId: string, groupIds: string[]): Promise<{ contacts: number; blocked: number }> {
    if (!groupIds.length) return { contacts: 0, blocked: 0 };
    const [row] = await this.contacts.query(
      `SELECT count(*) FILTER (WHERE NOT c.is_blocked)::int AS contacts, count(*) FILTER (WHERE c.is_blocked)::int AS blocked
         FROM contacts c
        WHERE c.account_id = $1
          AND EXISTS (SELECT 1 FROM contact_group_members m WHERE m.contact_id = c.id AND m.group_id = ANY($2::bigint[]))`,
      [accountId, groupIds],
    );
    return { contacts: row.contacts, blocked: row.blocked };
  }

  /** Ids of the account's contacts in any of the groups (the inbox's scope). */
  async contactIdsInGroups(accountId: string, groupIds: string[]): Promise<string[]> {
    if (!groupIds.length) return [];
    const rows: Array<{ contact_id: string }> = await this.groups.query(
      `SELECT DISTINCT m.contact_id FROM contact_group_members m JOIN contact_groups g ON g.id = m.group_id
        WHERE g.account_id = $1 AND m.group_id = ANY($2::bigint[])`,
      [accountId, groupIds],
    );
    return rows.map((r) => String(r.contact_id));
  }

  /** The account's contacts with these ids, by id (others' ids are left out). */
  async findByIds(accountId: string, contactIds: string[]): Promise<Map<string, Contact>> {
    if (!contactIds.length) return new Map();
    const rows = await this.contacts.query(
      `SELECT ${contactColumns()} FROM contacts WHERE account_id = $1 AND id = ANY($2::bigint[])`,
      [accountId, contactIds],
    );
    return new Map(rows.map((r: Record<string, unknown>) => [String(r.id), toContact(r)] as const));
  }

  /** Number and opt-out of the account's contacts, by id. */
  async numbersOf(
    db: EntityManager,
    accountId: string,
    contactIds: string[],
  ): Promise<Map<string, { contactNumber: string; isBlocked: boolean }>> {
    if (!contactIds.length) return new Map();
    const rows: Array<{ id: string; contact_number: string; is_blocked: boolean }> = await db.query(
      `SELECT id, COALESCE(contact_number, whatsapp_user_id) AS contact_number, is_blocked FROM contacts WHERE account_id = $1 AND id = ANY($2::bigint[])`,
      [accountId, contactIds],
    );
    return new Map(rows.map((r) => [String(r.id), { contactNumber: r.contact_number, isBlocked: r.is_blocked }]));
  }

  /**
   * GET /v2/contacts: newest first, filtered by `search` (substring of name, number or email), `phone` (exact) and
   * `groupId` (members of that group: 404 `Contact group not found` when it is not the account's).
   */
  async listContacts(accountId: string, query: ContactSearch): Promise<{ contacts: ContactListRow[]; total: number }> {
    if (query.groupId) await this.getGroup(accountId, query.groupId);
    const plan = contactListSql(accountId, query);
    if (plan.kind === 'combined') {
      const rows = await queryPlan(this.contacts.manager, plan);
      return contactListPage(rows);
    }
    const [rows, [{ total }]] = await Promise.all([
      this.contacts.query(plan.pageSql, plan.pageParams),
      this.contacts.query(plan.countSql, plan.countParams),
    ]);
    return { contacts: rows, total };
  }

  /**
   * For campaign fan-out: the next `limit` members of a group after `afterContactId` (keyset on contact id,
   * ascending; start with '0'). Blocked (opted-out) contacts are skipped unless `includeBlocked`. Only members
   * of the account's own group are returned (another account's group id yields nothing).
   */
  async groupMembersAfter(
    accountId: string,
    groupId: string,
    afterContactId: string = '0',
    limit = 1000,
    options: { includeBlocked?: boolean } = {},
  ): Promise<Contact[]> {
    const rows = await this.contacts.query(
      `SELECT ${contactColumns('c')}
         FROM contact_group_members m JOIN contacts c ON c.id = m.contact_id
        WHERE m.group_id = $2 AND m.contact_id > $3 AND c.account_id = $1 ${options.includeBlocked ? '' : 'AND NOT c.is_blocked'}
        ORDER BY m.contact_id
        LIMIT $4`,
      [accountId, groupId, afterContactId, limit],
    );
    return rows.map(toContact);
  }

  /** Every (unblocked, by default) member of a group, in batches of `batchSize`, by keyset pagination. */
  async *iterateGroupMembers(
    accountId: string,
    groupId: string,
    batchSize = 1000,
    options: { includeBlocked?: boolean } = {},
  ): AsyncGenerator<Contact[]> {
    let after = '0';
    for (;;) {
      const batch = await this.groupMembersAfter(accountId, groupId, after, batchSize, options);
      if (!batch.length) return;
      yield batch;
      if (batch.length < batchSize) return;
      after = batch[batch.length - 1].id;
    }
  }

  /** INSERT … ON CONFLICT DO NOTHING RETURNING, then SELECT the row that won: one row per number, whoever races. */
  private async insertOrGet(
    db: EntityManager,
    accountId: string,
    input: NewContact,
  ): Promise<{ contact: Contact; created: boolean }> {
    // The SELECT can only miss if the conflicting row was deleted meanwhile: then the insert is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await db.query(
        `INSERT INTO contacts (account_id, contact_number, name, email, date_of_birth, gender, instagram_url, facebook_url, linkedin_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (account_id, contact_number) DO NOTHING
         RETURNING ${contactColumns()}`,
        [
          accountId,
          input.contactNumber,
          input.name ?? null,
          input.email ?? null,
          input.dateOfBirth ?? null,
          input.gender ?? null,
          input.instagramUrl ?? null,
          input.facebookUrl ?? null,
          input.linkedinUrl ?? null,
        ],
      );
      if (inserted[0]) return { contact: toContact(inserted[0]), created: true };
      const existing = await db.query(
        `SELECT ${contactColumns()} FROM contacts WHERE account_id = $1 AND contact_number = $2`,
        [accountId, input.contactNumber],
      );
      if (existing[0]) return { contact: toContact(existing[0]), created: false };
    }
    throw new ConflictException({ message: 'The contact changed while it was being created; try again' });
  }

  /**
   * insertOrGet for many numbers in one statement: new ones inserted, existing ones read. A number another transaction
   * inserted meanwhile is neither (not yet visible to this statement): it goes through insertOrGet on its own.
   */
  private async insertOrGetMany(
    items: Array<{ accountId: string; contactNumber: string; name: string | null }>,
  ): Promise<Array<{ contact: Contact; created: boolean }>> {
    const rows: Array<Record<string, unknown> & { created: boolean }> = await this.contacts.query(
      `WITH input AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS i(account_id, contact_number, name, ord)),
            inserted AS (
              INSERT INTO contacts (account_id, contact_number, name)
              SELECT DISTINCT ON (account_id, contact_number) account_id, contact_number, name FROM input
               ORDER BY account_id, contact_number, ord
              ON CONFLICT (account_id, contact_number) DO NOTHING
              RETURNING ${contactColumns()}, true AS created)
       SELECT * FROM inserted
       UNION ALL
       SELECT ${contactColumns('c')}, false AS created FROM contacts c
        WHERE (c.account_id, c.contact_number) IN (SELECT account_id, contact_number FROM input)`,
      [items.map((i) => i.accountId), items.map((i) => i.contactNumber), items.map((i) => i.name)],
    );
    const found = new Map(
      rows.map(({ created, ...row }) => [`${row.accountId}:${row.contactNumber}`, { row, created }]),
    );
    return Promise.all(
      items.map(async (item) => {
        const hit = found.get(`${item.accountId}:${item.contactNumber}`);
        if (!hit) return this.insertOrGet(this.contacts.manager, item.accountId, item);
        const created = hit.created;
        hit.created = false; // the same number twice in the batch: created once
        return { contact: toContact(hit.row), created };
      }),
    );
  }

  // ---------------------------------------------------------------- bulk import (one statement per batch)

  /**
   * For contact imports: creates the new numbers, and with `existing: 'update'` sets name / email (when given) and merges
   * custom fields of the existing ones (blocked contacts are never changed); new and existing unblocked contacts join
   * `groupIds`. One multi-row statement for the whole batch (numbers already normalised and unique), inside the caller's
   * transaction. Returns how many were created, updated and skipped (existing, nothing changed), and the blocked numbers.
   */
  async importContacts(
    tx: EntityManager,
    accountId: string,
    rows: ImportedContact[],
    options: { groupIds: string[]; existing: 'skip' | 'update' },
  ): Promise<ImportCounts> {
    const out: ImportCounts = { created: 0, updated: 0, skipped: 0, blocked: [] };
    if (options.groupIds.length) {
      // KEY SHARE: a group deleted meanwhile waits for this batch instead of breaking its membership insert.
      const found: Array<{ id: string }> = await tx.query(
        `SELECT id FROM contact_groups WHERE account_id = $1 AND id = ANY($2::bigint[]) FOR KEY SHARE`,
        [accountId, options.groupIds],
      );
      if (found.length !== options.groupIds.length) throw new NotFoundException({ message: GROUP_NOT_FOUND });
    }
    const apply = async (todo: ImportedContact[], onConflict: boolean) => {
      // The rows travel as one JSON array (cheaper to build than four text arrays). New numbers and memberships go in
      // key order, as every other writer of them does: two imports (or an import and an add to the group) over the
      // same numbers in other orders would deadlock. `existing` probes the unique
      // (account_id, contact_number) index once per row (LIMIT 1 keeps the planner from turning it into a scan of all
      // the account's contacts). New contacts cannot be members yet: their memberships need no ON CONFLICT. The answer
      // is counts, not a row per number.
      const [result]: Array<ImportCounts & { retry: string[] }> = await tx.query(
        `${HANDLES_UNIQUE_VIOLATION} WITH input AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(n text, a text, e text, f jsonb)),
              existing AS (SELECT c.id, c.contact_number, c.is_blocked FROM input i
                            CROSS JOIN LATERAL (SELECT c.id, c.contact_number, c.is_blocked FROM contacts c
                                                 WHERE c.account_id = $1 AND c.contact_number = i.n LIMIT 1) c),
              inserted AS (INSERT INTO contacts (account_id, contact_number, name, email, custom_fields)
                           SELECT $1, i.n, i.a, i.e, COALESCE(i.f, '{}') FROM input i
                            WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.contact_number = i.n)
                            ORDER BY i.n
                           ${onConflict ? 'ON CONFLICT (account_id, contact_number) DO NOTHING' : ''}
                           RETURNING id, contact_number),
              updated AS (UPDATE contacts c
                             SET name = COALESCE(i.a, c.name), email = COALESCE(i.e, c.email),
                                 custom_fields = c.custom_fields || COALESCE(i.f, '{}'), updated_at = now()
                            FROM input i JOIN existing e ON e.contact_number = i.n
                           WHERE $3::boolean AND c.id = e.id AND NOT e.is_blocked AND NOT c.is_blocked
                             AND (c.name IS DISTINCT FROM COALESCE(i.a, c.name) OR c.email IS DISTINCT FROM COALESCE(i.e, c.email)
                                  OR NOT c.custom_fields @> COALESCE(i.f, '{}'))
                          RETURNING c.id),
              new_members AS (INSERT INTO contact_group_members (group_id, contact_id)
                              SELECT g, t.id FROM unnest($4::bigint[]) AS g CROSS JOIN inserted t),
              members AS (INSERT INTO contact_group_members (group_id, contact_id)
                          SELECT g, t.id FROM unnest($4::bigint[]) AS g
                           CROSS JOIN (SELECT id FROM existing WHERE NOT is_blocked) t
                           ORDER BY g, t.id
                          ON CONFLICT DO NOTHING)
         SELECT (SELECT count(*) FROM inserted)::int AS created,
                (SELECT count(*) FROM updated)::int AS updated,
                (SELECT count(*) FROM existing WHERE NOT is_blocked)::int - (SELECT count(*) FROM updated)::int AS skipped,
                ARRAY(SELECT contact_number FROM existing WHERE is_blocked) AS blocked,
                ARRAY(SELECT n FROM input EXCEPT ALL
                      (SELECT contact_number FROM inserted UNION ALL SELECT contact_number FROM existing)) AS retry`,
        [
          accountId,
          JSON.stringify(todo.map((r) => ({ n: r.number, a: r.name, e: r.email, f: r.custom }))),
          options.existing === 'update',
          options.groupIds,
        ],
      );
      out.created += result.created;
      out.updated += result.updated;
      out.skipped += result.skipped;
      out.blocked.push(...result.blocked);
      return result.retry;
    };
    // First without ON CONFLICT (no speculative insertion: ~6% less PostgreSQL work per row). A number created by a
    // concurrent transaction since `existing` looked fails it (unique violation): then again, with ON CONFLICT.
    await tx.query(`SAVEPOINT import_contacts`);
    try {
      await apply(rows, false);
      return out;
    } catch (error) {
      if ((error as { code?: string }).code !== '23505') throw error;
      await tx.query(`ROLLBACK TO SAVEPOINT import_contacts`);
    }
    let todo = rows;
    for (let attempt = 0; attempt < 3 && todo.length; attempt++) {
      // created by a concurrent transaction after this statement's snapshot: the next statement sees it
      const retry = new Set(await apply(todo, true));
      todo = todo.filter((r) => retry.has(r.number));
    }
    if (todo.length)
      throw new ConflictException({ message: 'Contacts changed while the import batch was applied; try again' });
    return out;
  }

  // ---------------------------------------------------------------- groups

  /** POST /v2/contact-groups: 409 when the account already has a group of that name (case-insensitive). */
  async createGroup(accountId: string, name: string): Promise<ContactGroupWithCount> {
    const inserted = await this.groups.query(
      `INSERT INTO contact_groups (account_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id, account_id AS "accountId", name, created_at AS "createdAt"`,
      [accountId, name],
    );
    if (!inserted[0]) {
      const [existing] = await this.groups.query(
        `SELECT id FROM contact_groups WHERE account_id = $1 AND lower(name) = lower($2)`,
        [accountId, name],
      );
      throw new ConflictException({
        message: `A contact group named "${name}" already exists`,
        group_id: existing ? Number(existing.id) : undefined,
      });
    }
    return Object.assign(new ContactGroup(), inserted[0], { memberCount: 0 });
  }

  /** GET /v2/contact-groups: newest first, with member counts. */
  async listGroups(accountId: string, page: PageRequest): Promise<{ groups: ContactGroupWithCount[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.groups.query(
        `${this.groupSelect()} WHERE g.account_id = $1 ORDER BY g.created_at DESC, g.id DESC LIMIT $2 OFFSET $3`,
        [accountId, page.pageSize, pageOffset(page)],
      ),
      this.groups.query(`SELECT count(*)::int AS total FROM contact_groups WHERE account_id = $1`, [accountId]),
    ]);
    return { groups: rows.map((r: object) => Object.assign(new ContactGroup(), r)), total };
  }

  /** GET /v2/contact-groups/{id}: 404 `Contact group not found` (also for another account's group). */
  async getGroup(
    accountId: string,
    groupId: string,
    db: EntityManager = this.groups.manager,
  ): Promise<ContactGroupWithCount> {
    const [row] = await db.query(`${this.groupSelect()} WHERE g.account_id = $1 AND g.id = $2`, [accountId, groupId]);
    if (!row) throw new NotFoundException({ message: GROUP_NOT_FOUND });
    return Object.assign(new ContactGroup(), row);
  }

  /**
   * Adds contacts to a group; already-members are left as they are (idempotent). Every id must be one of the
   * account's contacts, or nothing is added (400 listing the missing ids).
   */
  async addMembers(
    accountId: string,
    groupId: string,
    contactIds: Array<number | string>,
  ): Promise<{ added: number; group: ContactGroupWithCount }> {
    const wanted = unique(contactIds);
    return this.groups.manager.transaction(async (tx) => {
      await this.lockGroup(tx, accountId, groupId);
      const found: Array<{ id: string }> = await tx.query(
        `SELECT id FROM contacts WHERE account_id = $1 AND id = ANY($2::bigint[]) FOR KEY SHARE`,
        [accountId, wanted],
      );
      const have = new Set(found.map((c) => String(c.id)));
      const missing = wanted.filter((id) => !have.has(id));
      if (missing.length)
        throw new BadRequestException({ message: CONTACTS_MISSING, missingContacts: missing.map(Number) });
      const added = await tx.query(
        // in id order: two requests adding the same contacts in another order deadlocked (one answered 500)
        `INSERT INTO contact_group_members (group_id, contact_id) SELECT $1, c FROM unnest($2::bigint[]) AS c ORDER BY c ON CONFLICT DO NOTHING RETURNING contact_id`,
        [groupId, wanted],
      );
      return { added: added.length, group: await this.getGroup(accountId, groupId, tx) };
    });
  }

  /** Removes contacts from a group; ids that are not members (or not the account's) are ignored (idempotent). */
  async removeMembers(
    accountId: string,
    groupId: string,
    contactIds: Array<number | string>,
  ): Promise<{ removed: number; group: ContactGroupWithCount }> {
    return this.groups.manager.transaction(async (tx) => {
      await this.lockGroup(tx, accountId, groupId);
      const [, removed] = await tx.query(
        `DELETE FROM contact_group_members WHERE group_id = $1 AND contact_id = ANY($2::bigint[])`,
        [groupId, unique(contactIds)],
      );
      return { removed, group: await this.getGroup(accountId, groupId, tx) };
    });
  }

  /** PATCH /v2/contact-groups/{id}: renames the group; 404 when it is not the account's, 409 when the name is taken. */
  async renameGroup(accountId: string, groupId: string, name: string): Promise<ContactGroupWithCount> {
    const [rows] = (await this.groups
      .query(
        `${HANDLES_UNIQUE_VIOLATION} UPDATE contact_groups g SET name = $3
        WHERE g.account_id = $1 AND g.id = $2
          AND NOT EXISTS (SELECT 1 FROM contact_groups o WHERE o.account_id = $1 AND lower(o.name) = lower($3) AND o.id <> $2)
        RETURNING g.id`,
        [accountId, groupId, name],
      )
      .catch((error: { code?: string }) => {
        if (error.code === '23505') return [[], 0]; // a concurrent create or rename took the name first
        throw error;
      })) as [Array<{ id: string }>, number];
    if (!rows.length) {
      const group = await this.getGroup(accountId, groupId); // 404 for an unknown group
      const [taken] = await this.groups.query(
        `SELECT id FROM contact_groups WHERE account_id = $1 AND lower(name) = lower($2) AND id <> $3`,
        [accountId, name, groupId],
      );
      if (!taken) return group; // renamed to its own name, or the other group went away meanwhile
      throw new ConflictException({
        message: `A contact group named "${name}" already exists`,
        group_id: Number(taken.id),
      });
    }
    return this.getGroup(accountId, groupId);
  }

  /** Deletes the group and its memberships; the contacts stay. 404 when it is not the account's. */
  async deleteGroup(accountId: string, groupId: string): Promise<void> {
    const [, deleted] = await this.groups.query(`DELETE FROM contact_groups WHERE account_id = $1 AND id = $2`, [
      accountId,
      groupId,
    ]);
    if (!deleted) throw new NotFoundException({ message: GROUP_NOT_FOUND });
  }

  private async lockGroup(tx: EntityManager, accountId: string, groupId: string): Promise<void> {
    const [group] = await tx.query(`SELECT id FROM contact_groups WHERE account_id = $1 AND id = $2 FOR KEY SHARE`, [
      accountId,
      groupId,
    ]);
    if (!group) throw new NotFoundException({ message: GROUP_NOT_FOUND });
  }

  private groupSelect(): string {
    return `SELECT g.id, g.account_id AS "accountId", g.name, g.created_at AS "createdAt",
                   (SELECT count(*)::int FROM contact_group_members m WHERE m.group_id = g.id) AS "memberCount"
              FROM contact_groups g`;
  }
}

export type ContactListSql =
  | { kind: 'separate'; pageSql: string; pageParams: unknown[]; countSql: string; countParams: unknown[] }
  /** `name`: the text never varies, so it can be a named prepared statement. */
  | ({ kind: 'combined' } & QueryPlan);

/** The page and total of a `combined` plan's rows (one row per contact, each with the total; nulls when empty). */
export function contactListPage(rows: Array<Record<string, unknown>>): { contacts: ContactListRow[]; total: number } {
  const total = Number(rows[0]?.total ?? 0);
  return {
    contacts: rows.filter((r) => r.id !== null).map(({ total: _, ...r }) => r as unknown as ContactListRow),
    total,
  };
}

/**
 * The condition "the contact whose id is in `column` matches `search`" (its name or number contains it; a search that
 * looks like (part of) a number matches the stored digits as the list's search does: `+1 555 000 1111`, as the inbox
 * shows a number, finds 15550001111), for the query of another module that lists things by contact (the inbox's
 * conversations). Its parameters are pushed onto `params`; `accountParam` is the account's. The contacts table stays
 * this module's: one lookup by primary key per row that query looks at, and no cap on how many contacts match.
 */
export function contactMatchesSql(column: string, accountParam: string, search: string, params: unknown[]): string {
  const { digits, international } = phoneSearch(search);
  params.push(search.trim(), digits, international);
  const [text, digitsParam, prefix] = [params.length - 2, params.length - 1, params.length].map((n) => `$${n}::text`);
  return `EXISTS (SELECT 1 FROM contacts matched WHERE matched.id = ${column} AND matched.account_id = ${accountParam}
            AND (strpos(lower(COALESCE(matched.name, '')), lower(${text})) > 0
                 OR strpos(COALESCE(matched.contact_number, ''), ${text}) > 0
                 OR (${digitsParam} <> '' AND strpos(COALESCE(matched.contact_number, ''), ${digitsParam}) > 0)
                 OR (${prefix} <> '' AND left(matched.contact_number, length(${prefix})) = ${prefix})))`;
}

/**
 * The SQL of GET /v2/contacts (exported for test/bench/contacts-explain.ts, which measures it on 100,000 contacts).
 *
 * Without `search`, the page walks contacts_account_newest_idx and stops after `pageSize` rows, and the total is an
 * index-only count: two cheap queries, run in parallel. With `search`, the matching rows are found once through the
 * pg_trgm GIN indexes (a bitmap OR over name, email and number) and both the page and the total are taken from that
 * one set: otherwise the planner may walk the newest-first index looking for rare matches, or scan twice.
 */
export function contactListSql(accountId: string, query: ContactSearch): ContactListSql {
  const where = ['account_id = $1'];
  const params: unknown[] = [accountId];
  if (query.phone) {
    const digits = normalizePhone(query.phone);
    if (!digits) throw validationException([{ field: 'phone', message: `phone must be ${PHONE_FORMAT_HINT}` }]);
    params.push(digits);
    where.push(`contact_number = $${params.length}`);
  }
  if (query.groupId) {
    params.push(query.groupId);
    where.push(
      `EXISTS (SELECT 1 FROM contact_group_members m WHERE m.contact_id = contacts.id AND m.group_id = $${params.length})`,
    );
  }
  if (query.search) {
    params.push(`%${escapeLike(query.search)}%`);
    const text = `$${params.length}`;
    const anyOf = [`name ILIKE ${text}`, `email ILIKE ${text}`];
    const { digits, international } = phoneSearch(query.search);
    if (digits) {
      params.push(`%${digits}%`);
      anyOf.push(`contact_number LIKE $${params.length}`);
    }
    if (international) {
      params.push(`${international}%`);
      anyOf.push(`contact_number LIKE $${params.length}`);
    }
    where.push(`(${anyOf.join(' OR ')})`);
  }
  const filter = where.join(' AND ');
  const limit = `LIMIT $${params.length + 1} OFFSET $${params.length + 2}`;
  const pageParams = [...params, query.pageSize, pageOffset(query)];
  if (query.phone || (query.groupId && !query.search)) {
    return {
      kind: 'separate',
      pageSql: `SELECT ${contactColumns(undefined, LIST_COLUMNS)} FROM contacts WHERE ${filter} ORDER BY created_at DESC, id DESC ${limit}`,
      pageParams,
      countSql: `SELECT count(*)::int AS total FROM contacts WHERE ${filter}`,
      countParams: params,
    };
  }
  if (!query.search) {
    // Unfiltered (the common case): one round trip, the total from the trigger-maintained contact_counts.
    return {
      kind: 'combined',
      sql: `SELECT page.*, counted.total
              FROM (SELECT COALESCE((SELECT total::int FROM contact_counts WHERE account_id = $1), 0) AS total) counted
              LEFT JOIN LATERAL (SELECT ${contactColumns(undefined, LIST_COLUMNS)} FROM contacts WHERE ${filter} ORDER BY created_at DESC, id DESC ${limit}) page ON true
             ORDER BY page."createdAt" DESC, page."id" DESC`,
      params: pageParams,
      name: 'contacts_list_newest',
    };
  }
  // One row per contact of the page, each with the total; a single row of nulls and the total when the page is empty.
  return {
    kind: 'combined',
    sql: `WITH matches AS MATERIALIZED (SELECT id, created_at FROM contacts WHERE ${filter})
          SELECT ${contactColumns('c', LIST_COLUMNS)}, counted.total
            FROM (SELECT count(*)::int AS total FROM matches) counted
            LEFT JOIN LATERAL (SELECT id, created_at FROM matches ORDER BY created_at DESC, id DESC ${limit}) page ON true
            LEFT JOIN contacts c ON c.id = page.id
           ORDER BY page.created_at DESC, page.id DESC`,
    params: pageParams,
  };
}
