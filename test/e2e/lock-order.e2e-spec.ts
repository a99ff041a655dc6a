import { ContactsService } from '@switchboard/contacts';
import { InboxConversations, MessageEventsService, SendQueueService } from '@switchboard/messaging';
import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * Writes that two processes make at the same moment on the same rows take their row locks in one order, so they wait
 * for each other instead of deadlocking (PostgreSQL 40P01: one of them failed). Each test runs the same write from two
 * processes' services (the API's and the worker's: two pools) with the rows in opposite orders, a few rounds.
 */
describe('Lock order of concurrent batched writes (no deadlocks)', () => {
  let t: TestApp;
  let account: TestAccount;
  let phoneId: string;
  let processes: INestApplicationContext[];

  beforeAll(async () => {
    t = await startTestApp({}, { worker: true });
    processes = [t.app, t.worker!];
    account = await t.createAccount();
    [{ id: phoneId }] = await t.db.query(`SELECT id::text FROM phone_numbers WHERE messaging_phone_id = $1`, [
      account.messagingPhoneId,
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  let batch = 0;
  /** n fresh contacts of the account, in id order */
  const newContacts = async (n: number): Promise<Array<{ id: string; number: string }>> => {
    batch++;
    return t.db.query(
      `INSERT INTO contacts (account_id, contact_number)
       SELECT $1, '4916' || lpad($2::text, 3, '0') || lpad(i::text, 5, '0') FROM generate_series(1, $3::int) i
       RETURNING id::text, contact_number AS number`,
      [account.accountId, batch, n],
    );
  };

  it('linking inbound messages to their contacts (the conversation trigger), in opposite orders', async () => {
    for (let round = 0; round < 3; round++) {
      const contacts = await newContacts(60);
      // two messages per customer, not linked yet: one reaches each worker
      const messages: Array<{ id: string; contact_id: string }> = await t.db.query(
        `INSERT INTO messages (account_id, phone_number_id, direction, recipient, kind, status, payload, body)
         SELECT $1, $2, 'inbound', c.number, 'text', 'received', '{}', 'hi ' || k
           FROM unnest($3::bigint[], $4::text[]) AS c(id, number), generate_series(1, 2) k
         RETURNING id::text, (SELECT c2.id::text FROM contacts c2 WHERE c2.account_id = $1 AND c2.contact_number = recipient) AS contact_id`,
        [account.accountId, phoneId, contacts.map((c) => c.id), contacts.map((c) => c.number)],
      );
      const first = new Map<string, string>();
      const second: Array<{ id: string; contact_id: string }> = [];
      for (const m of messages)
        if (first.has(m.contact_id)) second.push(m);
        else first.set(m.contact_id, m.id);
      const links = [
        [...first].map(([contactId, messageId]) => ({ messageId, contactId })),
        second.map((m) => ({ messageId: m.id, contactId: m.contact_id })).reverse(),
      ];
      await Promise.all(
        processes.map((p, i) =>
          Promise.all(links[i].map((l) => p.get(MessageEventsService).linkContact(l.messageId, l.contactId))),
        ),
      );
      const [{ unlinked, conversations }] = await t.db.query(
        `SELECT (SELECT count(*)::int FROM messages WHERE id = ANY($1::uuid[]) AND contact_id IS NULL) AS unlinked,
                (SELECT count(*)::int FROM conversations WHERE account_id = $2 AND contact_id = ANY($3::bigint[])) AS conversations`,
        [messages.map((m) => m.id), account.accountId, contacts.map((c) => c.id)],
      );
      expect({ unlinked, conversations }).toEqual({ unlinked: 0, conversations: 60 });
    }
  });

  it('storing outbound messages to the same customers (the conversation trigger), in opposite orders', async () => {
    for (let round = 0; round < 3; round++) {
      const contacts = await newContacts(60);
      const messages = contacts.map((c) => ({
        accountId: account.accountId,
        phoneNumberId: phoneId,
        contactId: c.id,
        recipient: c.number,
        kind: 'text',
        body: 'hello',
        payload: { messaging_product: 'whatsapp', to: c.number, type: 'text', text: { body: 'hello' } } as never,
      }));
      const orders = [messages, [...messages].reverse()];
      const stored = await Promise.all(processes.map((p, i) => p.get(SendQueueService).insert(orders[i], 'api')));
      // not to be sent: nothing here answers for the account's number
      const ids = stored.flatMap((s) => s.ids);
      await t.db.query(`UPDATE messages SET status = 'failed' WHERE id = ANY($1::uuid[])`, [ids]);
      expect(ids).toHaveLength(120);
    }
  });

  it("marking conversations read for a session's numbers, listed in opposite orders (or twice)", async () => {
    const [{ id: secondPhoneId }] = await t.db.query(
      `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                  api_base_url, api_version, access_token_encrypted, messages_per_second)
       SELECT account_id, messaging_phone_id || '7', display_phone_number, verified_name, business_account_id,
              api_base_url, api_version, access_token_encrypted, messages_per_second
         FROM phone_numbers WHERE id = $1 RETURNING id::text`,
      [phoneId],
    );
    const contacts = await newContacts(40);
    await t.db.query(
      `INSERT INTO messages (account_id, phone_number_id, contact_id, direction, recipient, kind, status, payload, body)
       SELECT $1, $2, c.id, 'inbound', c.number, 'text', 'received', '{}', 'hi' FROM unnest($3::bigint[], $4::text[]) AS c(id, number)`,
      [account.accountId, phoneId, contacts.map((c) => c.id), contacts.map((c) => c.number)],
    );
    const scopes = [
      [phoneId, secondPhoneId],
      [secondPhoneId, phoneId, secondPhoneId],
    ];
    for (let round = 0; round < 3; round++)
      await Promise.all(
        contacts.flatMap((c) =>
          processes.map((p, i) => p.get(InboxConversations).markRead(account.accountId, c.id, scopes[i])),
        ),
      );
    const [{ n }] = await t.db.query(
      `SELECT count(*)::int AS n FROM conversation_number_reads WHERE account_id = $1 AND contact_id = ANY($2::bigint[])`,
      [account.accountId, contacts.map((c) => c.id)],
    );
    expect(n).toBe(80);
  });

  it('importing the same numbers (new, then existing into a group) from two imports, in opposite orders', async () => {
    const [{ id: groupId }] = await t.db.query(
      `INSERT INTO contact_groups (account_id, name) VALUES ($1, 'Imported twice') RETURNING id::text`,
      [account.accountId],
    );
    batch++;
    const rows = Array.from({ length: 200 }, (_, i) => ({
      number: `4915${String(batch).padStart(3, '0')}${String(i).padStart(5, '0')}`,
      name: null,
      email: null,
      custom: null,
    }));
    for (const groupIds of [[], [groupId]]) {
      const orders = [rows, [...rows].reverse()];
      const counts = await Promise.all(
        processes.map((p, i) =>
          p
            .get(DataSource)
            .transaction((tx) =>
              p.get(ContactsService).importContacts(tx, account.accountId, orders[i], { groupIds, existing: 'skip' }),
            ),
        ),
      );
      expect(counts.map((c) => c.created + c.skipped)).toEqual([200, 200]);
    }
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM contact_group_members WHERE group_id = $1`, [
      groupId,
    ]);
    expect(n).toBe(200);
  });

  it('finding or creating many contacts by number (a campaign trigger), in opposite orders', async () => {
    for (let round = 0; round < 3; round++) {
      batch++;
      const numbers = Array.from({ length: 100 }, (_, i) => ({
        number: `4917${String(batch).padStart(3, '0')}${String(i).padStart(5, '0')}`,
        name: null,
        email: null,
      }));
      const orders = [numbers, [...numbers].reverse()];
      const found = await Promise.all(
        processes.map((p, i) =>
          p
            .get(DataSource)
            .transaction((tx) => p.get(ContactsService).findOrCreateMany(tx, account.accountId, orders[i])),
        ),
      );
      expect(found.map((f) => f?.size)).toEqual([100, 100]);
      expect([...found[0]!].map(([n, c]) => [n, c.id]).sort()).toEqual(
        [...found[1]!].map(([n, c]) => [n, c.id]).sort(),
      );
    }
  });
});
