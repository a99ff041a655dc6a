import * as ExcelJS from 'exceljs';
import { request as httpRequest } from 'node:http';
import { getQueueToken } from '@nestjs/bullmq';
import { ContactImportsService, ContactsService } from '@switchboard/contacts';
import { QUEUES } from '@switchboard/core';
import { Queue, UnrecoverableError } from 'bullmq';
import { waitsForLock } from '../helpers/lock-waits';
import { eventually } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** POST /v2/contacts/imports and the import worker: CSV/XLSX edge cases, per-row errors, idempotency, refusals. */
describe('Contact imports', () => {
  let t: TestApp;
  let account: TestAccount;
  let seq = 0;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    account = await t.createAccount();
  });

  /** A fresh number per call: 49151 + 8 digits. */
  const number = () => `49151${String(70000000 + ++seq * 7).padStart(8, '0')}`;

  async function upload(
    content: string | Buffer,
    fields: Record<string, string> = {},
    fileName = 'contacts.csv',
    acct = account,
  ): Promise<{ status: number; body: any; retryAfter: string | null }> {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob([content]), fileName);
    const res = await fetch(`${t.url}/v2/contacts/imports`, {
      method: 'POST',
      headers: { authorization: acct.token },
      body: form,
    });
    return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
  }

  const getImport = (id: number, acct = account) => t.http.get(`/v2/contacts/imports/${id}`, { token: acct.token });
  const finished = (id: number, acct = account) =>
    eventually(
      async () => {
        const r = await getImport(id, acct);
        return ['completed', 'failed'].includes(r.body.data.status) && r.body.data;
      },
      30_000,
      `import ${id} finished`,
    );
  async function importFile(content: string | Buffer, fields: Record<string, string> = {}, fileName?: string) {
    const res = await upload(content, fields, fileName);
    expect(res.status).toBe(202);
    return finished(res.body.data.import_id);
  }
  async function errorReport(id: number, acct = account) {
    const res = await fetch(`${t.url}/v2/contacts/imports/${id}/errors`, { headers: { authorization: acct.token } });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }
  const contactsOf = (acct = account) =>
    t.db.query(
      `SELECT contact_number, name, email, custom_fields, is_blocked, updated_at FROM contacts WHERE account_id = $1 ORDER BY contact_number`,
      [acct.accountId],
    );
  async function group(name = `g${++seq}`) {
    const res = await t.http.post('/v2/contact-groups', { name }, { token: account.token });
    return res.body.data.group.group_id as number;
  }

  it('error rows are numbered as the file shows them, blank lines and empty rows included', async () => {
    const a = number();
    const done = await importFile(`phone,name\n+${a},Ann\n\n,\nabc,Bob\n`);
    expect(done).toMatchObject({ status: 'completed', created: 1, failed: 1 });
    const report = await errorReport(done.import_id);
    expect(report.text).toContain('abc,Bob,5,"bad number');
  });

  it('a name or custom value cut at its limit keeps its emoji whole (half of one failed the whole import)', async () => {
    const [a, b] = [number(), number()];
    const done = await importFile(
      `phone,name,tier\n+${a},${'n'.repeat(199)}😀,${'t'.repeat(1999)}😀\n+${b},Bob,gold\n`,
      { mapping: JSON.stringify({ number: 'phone', name: 'name', custom: { tier: 'tier' } }) },
    );
    expect(done).toMatchObject({ status: 'completed', created: 2 });
    const rows = await t.db.query(
      `SELECT name, custom_fields->>'tier' AS tier FROM contacts WHERE account_id = $1 AND contact_number = ANY($2) ORDER BY name DESC`,
      [account.accountId, [a, b]],
    );
    expect(rows).toEqual([
      { name: 'n'.repeat(199), tier: 't'.repeat(1999) },
      { name: 'Bob', tier: 'gold' },
    ]);
  });

  it('imports a CSV with a BOM, CRLF line ends, quoted commas and custom fields into a group', async () => {
    const [a, b, c] = [number(), number(), number()];
    const groupId = await group();
    const csv =
      '\uFEFFPhone,Full name,E-mail,City\r\n' +
      `+${a.slice(0, 2)} ${a.slice(2, 5)} ${a.slice(5)},"Doe, Jane",jane@example.com,"Berlin, Mitte"\r\n` +
      `00${b},"Said ""Sam"" Smith",,Hamburg\r\n` +
      `${c},Ann,ann@example.com,\r\n`;
    const done = await importFile(csv, {
      mapping: JSON.stringify({ number: 'Phone', name: 'full name', email: 'E-mail', custom: { city: 'City' } }),
      group_ids: JSON.stringify([groupId]),
    });
    expect(done).toMatchObject({
      status: 'completed',
      error: null,
      format: 'csv',
      total_rows: 3,
      processed_rows: 3,
      created: 3,
      updated: 0,
      skipped: 0,
      failed: 0,
      group_ids: [groupId],
      existing: 'skip',
    });
    const rows = await contactsOf();
    expect(rows.map((r: any) => [r.contact_number, r.name, r.email, r.custom_fields])).toEqual(
      [
        [a, 'Doe, Jane', 'jane@example.com', { city: 'Berlin, Mitte' }],
        [b, 'Said "Sam" Smith', null, { city: 'Hamburg' }],
        [c, 'Ann', 'ann@example.com', {}],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    const members = await t.http.get(`/v2/contact-groups/${groupId}`, { token: account.token });
    expect(members.body.data.group.member_count).toBe(3);
    // the chunks of the stored file are gone once it is applied
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM contact_import_chunks WHERE import_id = $1`, [
      done.import_id,
    ]);
    expect(n).toBe(0);
  });

  it('rejects bad numbers, numbers repeated in the file and blocked contacts, and reports each row with its reason', async () => {
    const [a, b, blocked] = [number(), number(), number()];
    await t.http.post(
      '/contacts/create-contact',
      { contact_number: blocked, name: 'Opted out' },
      { token: account.token },
    );
    await t.db.query(`UPDATE contacts SET is_blocked = true WHERE account_id = $1 AND contact_number = $2`, [
      account.accountId,
      blocked,
    ]);
    const csv = [
      'number;name',
      `${a};Ann`,
      'not-a-number;Bob',
      `+${a};Ann again`,
      `${blocked};Blocked`,
      ';No number',
      `${b};"Semi; colon"`,
    ].join('\n');
    const done = await importFile(csv); // no mapping: the "number" and "name" columns; ";" sniffed
    expect(done).toMatchObject({ status: 'completed', total_rows: 6, created: 2, skipped: 0, failed: 4 });
    expect(done.mapping).toEqual({ number: 'number', name: 'name', email: null });
    const report = await errorReport(done.import_id);
    expect(report.status).toBe(200);
    expect(report.type).toMatch(/^text\/csv/);
    const lines = report.text
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    expect(lines).toEqual([
      'number,name,row,reason',
      'not-a-number,Bob,3,"bad number: ""not-a-number"" is not a phone number with country code (8 to 15 digits, e.g. +1 555 010 2030)"',
      `+${a},Ann again,4,duplicate in file: the number ${a} is on row 2`,
      `${blocked},Blocked,5,blocked: the contact has opted out and is left unchanged`,
      ',No number,6,number is missing',
    ]);
    const [stillBlocked] = await t.db.query(
      `SELECT name, is_blocked FROM contacts WHERE account_id = $1 AND contact_number = $2`,
      [account.accountId, blocked],
    );
    expect(stillBlocked).toEqual({ name: 'Opted out', is_blocked: true });
    expect((await contactsOf()).find((r: any) => r.contact_number === b).name).toBe('Semi; colon');
  });

  it('the error report lays each row out at the header: a short row keeps its row number under `row`, an extra cell is left out', async () => {
    const csv = ['number,name,email', 'not-a-number,Ann', 'also-bad', 'bad-again,Cy,cy@example.com,extra'].join('\n');
    const done = await importFile(csv);
    expect(done).toMatchObject({ status: 'completed', total_rows: 3, failed: 3 });
    const lines = (await errorReport(done.import_id)).text
      .replace(/^\uFEFF/, '')
      .trimEnd()
      .split('\r\n');
    const hint = 'is not a phone number with country code (8 to 15 digits, e.g. +1 555 010 2030)';
    expect(lines).toEqual([
      'number,name,email,row,reason',
      `not-a-number,Ann,,2,"bad number: ""not-a-number"" ${hint}"`,
      `also-bad,,,3,"bad number: ""also-bad"" ${hint}"`,
      `bad-again,Cy,cy@example.com,4,"bad number: ""bad-again"" ${hint}"`,
    ]);
  });

  it('reports every row of a 10,000-row file in which every row is bad, and creates nothing', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => `x${i},Person ${i}`);
    const started = Date.now();
    const done = await importFile(['phone,name', ...rows].join('\n'));
    expect(done).toMatchObject({
      status: 'completed',
      total_rows: 10_000,
      processed_rows: 10_000,
      created: 0,
      failed: 10_000,
    });
    const report = await errorReport(done.import_id);
    const lines = report.text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(10_001);
    expect(lines[10_000]).toMatch(/^x9999,Person 9999,10001,"bad number: ""x9999"" is not/);
    expect(await contactsOf()).toEqual([]);
    console.log(`10,000 bad rows imported and reported in ${Date.now() - started} ms`);
  });

  it('re-importing the same file with existing=skip changes nothing; existing=update changes only what differs', async () => {
    const [a, b] = [number(), number()];
    const groupId = await group();
    const csv = `phone,name,email\n${a},Ann,ann@example.com\n${b},Bob,\nbad,Nobody,\n`;
    const fields = { group_ids: String(groupId), existing: 'skip' };
    const first = await importFile(csv, fields);
    expect(first).toMatchObject({ created: 2, skipped: 0, failed: 1 });
    const before = await contactsOf();
    const again = await importFile(csv, fields);
    expect(again).toMatchObject({ status: 'completed', created: 0, updated: 0, skipped: 2, failed: 1 });
    expect(await contactsOf()).toEqual(before);
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM contact_group_members WHERE group_id = $1`, [
      groupId,
    ]);
    expect(n).toBe(2);

    const changed = await importFile(`phone,name,email\n${a},Ann Lee,\n${b},Bob,\n`, { existing: 'update' });
    expect(changed).toMatchObject({ created: 0, updated: 1, skipped: 1, failed: 0 });
    const after = await contactsOf();
    expect(after.map((r: any) => [r.name, r.email])).toEqual([
      ['Ann Lee', 'ann@example.com'], // an empty cell leaves the field as it was
      ['Bob', null],
    ]);
    expect(after[1].updated_at).toEqual(before[1].updated_at);
  });

  it('a run interrupted after a checkpoint resumes there: no row applied twice, duplicates still found across it', async () => {
    const groupId = await group();
    const numbers = Array.from({ length: 10 }, () => number());
    // data rows are file rows 2..13: ten numbers, then row 3's number again, then a bad one
    const csv = ['phone,name', ...numbers.map((n, i) => `${n},Person ${i}`), `${numbers[1]},Again`, 'bad,Nobody'];
    const done = await importFile(csv.join('\n'), { group_ids: String(groupId) });
    expect(done).toMatchObject({ status: 'completed', created: 10, failed: 2 });
    const complete = await contactsOf();
    const report = (await errorReport(done.import_id)).text;

    // As if the worker had died after committing the first 4 rows: the later rows' work undone, the file still stored.
    await t.db.query(`DELETE FROM contacts WHERE account_id = $1 AND contact_number = ANY($2)`, [
      account.accountId,
      numbers.slice(4),
    ]);
    await t.db.query(`DELETE FROM contact_import_errors WHERE import_id = $1`, [done.import_id]);
    await t.db.query(
      `UPDATE contact_imports SET status = 'importing', processed_rows = 4, created_count = 4, failed_count = 0,
              completed_at = NULL WHERE id = $1`,
      [done.import_id],
    );
    await t.db.query(`INSERT INTO contact_import_chunks (import_id, seq, data) VALUES ($1, 0, $2)`, [
      done.import_id,
      Buffer.from(csv.join('\n')),
    ]);
    const batchRows = t.config.CONTACT_IMPORT_BATCH_ROWS;
    t.config.CONTACT_IMPORT_BATCH_ROWS = 3; // the 8 remaining rows in three pipelined batches
    try {
      expect(await t.worker!.get(ContactImportsService).run(String(done.import_id))).toBe('completed');
    } finally {
      t.config.CONTACT_IMPORT_BATCH_ROWS = batchRows;
    }
    const resumed = (await getImport(done.import_id)).body.data;
    expect(resumed).toMatchObject({
      status: 'completed',
      total_rows: 12,
      processed_rows: 12,
      created: 10,
      updated: 0,
      skipped: 0, // the first 4 rows were not applied again
      failed: 2,
    });
    expect((await contactsOf()).map((r: any) => [r.contact_number, r.name])).toEqual(
      complete.map((r: any) => [r.contact_number, r.name]),
    );
    expect((await errorReport(done.import_id)).text).toBe(report);
    expect(report).toContain(`${numbers[1]},Again,12,duplicate in file: the number ${numbers[1]} is on row 3`);
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM contact_group_members WHERE group_id = $1`, [
      groupId,
    ]);
    expect(n).toBe(10);
  });

  it('an import whose job failed for good (its worker died on it, time after time) is failed by the sweep, not left running', async () => {
    const imports = t.worker!.get(ContactImportsService);
    const queue = t.worker!.get<Queue>(getQueueToken(QUEUES.contactImports));
    // what BullMQ records for a job whose worker died on it more often than its stall limit: failed for good, and no
    // handler of ours sees it (here the failure is thrown in the worker instead)
    const run = jest
      .spyOn(imports, 'run')
      .mockRejectedValueOnce(new UnrecoverableError('job stalled more than allowable limit'));
    try {
      const res = await upload(`phone\n${number()}\n`);
      expect(res.status).toBe(202);
      const id = res.body.data.import_id;
      await eventually(async () => (await queue.getJob(`import-${id}`))?.isFailed(), 10_000, 'the job failed for good');
      expect((await getImport(id)).body.data.status).not.toBe('failed'); // left as it was: nothing would end it
      await imports.requeue(String(id)); // the sweep's turn for it
      const data = (await getImport(id)).body.data;
      expect(data.status).toBe('failed');
      expect(data.error).toBe(
        'The import stopped: job stalled more than allowable limit. Rows counted so far were applied.',
      );
    } finally {
      run.mockRestore();
    }
  });

  it('a group deleted before the import adds to it stops the import at once, saying why (not after five retries)', async () => {
    const imports = t.worker!.get(ContactImportsService);
    const realRun = imports.run.bind(imports);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // the worker holds the job until the group is gone (as a delete landing between two batches would)
    const run = jest.spyOn(imports, 'run').mockImplementationOnce(async (id) => {
      await gate;
      return realRun(id);
    });
    try {
      const groupId = await group();
      const res = await upload(`phone\n${number()}\n${number()}\n`, { group_ids: String(groupId) });
      expect(res.status).toBe(202);
      const deleted = await t.http.request('DELETE', `/v2/contact-groups/${groupId}`, { token: account.token });
      expect(deleted.status).toBe(200);
      const started = Date.now();
      release();
      const done = await finished(res.body.data.import_id);
      expect(done).toMatchObject({
        status: 'failed',
        created: 0,
        error:
          'The import stopped: a contact group it adds the contacts to was deleted while it ran. Nothing was imported.',
      });
      expect(Date.now() - started).toBeLessThan(10_000); // retries would have taken ~15 s
      expect(await contactsOf()).toEqual([]);
    } finally {
      run.mockRestore();
    }
  });

  it('uploads received at once are capped (429 + Retry-After): slow uploads never hold every database connection', async () => {
    // CONTACT_IMPORT_MAX_CONCURRENT_UPLOADS (4) uploads that send their head and part of a file, then nothing
    const held = Array.from({ length: 4 }, () => {
      const boundary = `b${++seq}`;
      const req = httpRequest(`${t.url}/v2/contacts/imports`, {
        method: 'POST',
        headers: { authorization: account.token, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      req.on('error', () => undefined);
      req.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.csv"\r\n\r\nphone\n${number()}\n`,
      );
      return req;
    });
    try {
      await eventually(
        async () => {
          const [{ n }] = await t.db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`,
          );
          return n >= 4;
        },
        10_000,
        'four uploads in their transactions',
      );
      const refused = await upload(`phone\n${number()}\n`);
      expect(refused.status).toBe(429);
      expect(refused.body.message).toBe('4 contact files are being uploaded already: retry in 5 seconds');
      expect(refused.retryAfter).toBe('5');
      const started = Date.now();
      expect((await t.http.get('/v2/contacts', { token: account.token })).status).toBe(200); // the API still answers
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      for (const req of held) req.destroy();
    }
    // the slots come back once those uploads are gone
    await eventually(async () => (await upload(`phone\n${number()}\n`)).status === 202, 10_000, 'an upload accepted');
  });

  it('a number created by a concurrent transaction while a batch is applied counts as existing, not as an error', async () => {
    const [a, b] = [number(), number()];
    const other = t.db.createQueryRunner();
    await other.connect();
    await other.startTransaction();
    await other.query(`INSERT INTO contacts (account_id, contact_number, name) VALUES ($1, $2, 'Created elsewhere')`, [
      account.accountId,
      a,
    ]);
    const batch = t.db.transaction((tx) =>
      t.worker!.get(ContactsService).importContacts(
        tx,
        account.accountId,
        [a, b].map((n) => ({ number: n, name: 'Imported', email: null, custom: null })),
        { groupIds: [], existing: 'update' },
      ),
    );
    // the batch's INSERT of `a` waits for the other transaction, which then commits: a unique violation, then the retry
    await waitsForLock(t, 'INSERT INTO contacts', 'the batch waits for the concurrent insert');
    await other.commitTransaction();
    await other.release();
    expect(await batch).toEqual({ created: 1, updated: 1, skipped: 0, blocked: [] });
    expect((await contactsOf()).map((r: any) => [r.contact_number, r.name])).toEqual([
      [a, 'Imported'],
      [b, 'Imported'],
    ]);
  });

  it('imports the first sheet of an XLSX workbook (numbers stored as numbers)', async () => {
    const [a, b] = [number(), number()];
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Customers');
    sheet.addRow(['Mobile', 'Name']);
    sheet.addRow([Number(a), 'Ann']);
    sheet.addRow([`+${b}`, { richText: [{ text: 'Bo' }, { text: 'b' }] }]);
    sheet.addRow(['12', 'Too short']);
    const file = Buffer.from(await workbook.xlsx.writeBuffer());
    const done = await importFile(file, {}, 'customers.xlsx');
    expect(done).toMatchObject({ status: 'completed', format: 'xlsx', total_rows: 3, created: 2, failed: 1 });
    expect((await contactsOf()).map((r: any) => [r.contact_number, r.name])).toEqual(
      [
        [a, 'Ann'],
        [b, 'Bob'],
      ].sort(),
    );
    const report = await errorReport(done.import_id);
    expect(report.text).toContain('12,Too short,4,"bad number: ""12""');
    // a mapping holding a NUL (not checked against a header at upload for XLSX) is a 400 naming it, nothing stored
    const nul = await upload(file, { mapping: JSON.stringify({ number: 'Mobile\u0000' }) }, 'customers.xlsx');
    expect({ status: nul.status, field: nul.body.field }).toEqual({ status: 400, field: 'mapping.number' });
  });

  it('refuses malformed files clearly: binary data, an empty file, a wrong delimiter, unknown columns, a bad form', async () => {
    const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    let res = await upload(garbage, {}, 'contacts.csv');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      field: 'file',
      message: 'the file is not a CSV or XLSX file: it holds binary data',
    });

    res = await upload(garbage, {}, 'contacts.xlsx');
    expect(res.body.message).toBe('the file is not a valid XLSX workbook (send .xlsx, or the sheet saved as CSV)');

    res = await upload('', {});
    expect(res).toMatchObject({ status: 400, body: { field: 'file', message: 'the file is empty' } });

    res = await upload(`phone;name\n${number()};Ann\n`, {
      delimiter: ',',
      mapping: JSON.stringify({ number: 'phone' }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      field: 'mapping',
      message:
        'mapped column "phone" not found: the header row has one column, "phone;name": is the file separated by , ; tab or | ?',
    });

    res = await upload(`tel,name\n${number()},Ann\n`, {});
    expect(res.body).toMatchObject({
      field: 'file',
      message: expect.stringMatching(/^no column of phone numbers found/),
    });

    res = await upload(`phone\n1\n`, {
      mapping: '{"number": "phone", "age": "x"}',
      existing: 'merge',
      group_ids: '[0]',
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.field)).toEqual(['mapping.age', 'group_ids[0]', 'existing']);

    res = await upload(`phone\n1\n`, { group_ids: '[999999]' });
    expect(res).toMatchObject({ status: 400, body: { missingGroups: [999999], field: 'group_ids' } });

    const noFile = await fetch(`${t.url}/v2/contacts/imports`, {
      method: 'POST',
      headers: { authorization: account.token, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noFile.status).toBe(400);
    // nothing of a refused upload is stored
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM contact_imports WHERE account_id = $1`, [
      account.accountId,
    ]);
    expect(n).toBe(0);
  });

  it('fails a file with no data rows, or unreadable further down, without applying any row', async () => {
    const headerOnly = await importFile('phone,name\r\n');
    expect(headerOnly).toMatchObject({
      status: 'failed',
      error: 'The file was refused: it has a header row but no data rows. Nothing was imported.',
    });
    const rows = Array.from({ length: 50 }, () => `${number()},Fine`);
    const broken = await importFile(['phone,name', ...rows, `${number()},"unclosed`, `${number()},After`].join('\n'));
    expect(broken.status).toBe('failed');
    expect(broken.error).toBe(
      'The file was refused: the quoted field opened on line 52 is never closed. Nothing was imported.',
    );
    expect(broken).toMatchObject({ processed_rows: 0, created: 0 });
    expect(await contactsOf()).toEqual([]);
    const badQuote = await importFile(['phone,name', ...rows.slice(0, 3), `${number()},"Ann" Lee`].join('\r\n'));
    expect(badQuote.error).toBe(
      'The file was refused: line 5 has text after a closing quote (quote the whole field, and double "" inside it). Nothing was imported.',
    );
    expect(await contactsOf()).toEqual([]);
    // a quote inside an unquoted field is just text
    const inner = await importFile(`phone,name\n${number()},Ann "the best" Lee\n`);
    expect(inner).toMatchObject({ status: 'completed', created: 1 });
    expect((await contactsOf()).map((r: any) => r.name)).toEqual(['Ann "the best" Lee']);
  });

  it('refuses a file of 2 million rows (over the row limit) before applying any', async () => {
    const lines = ['phone'];
    for (let i = 0; i < 2_000_000; i++) lines.push(String(4915100000000 + i));
    const started = Date.now();
    const res = await upload(lines.join('\n'));
    expect(res.status).toBe(202);
    const uploaded = Date.now() - started;
    const done = await finished(res.body.data.import_id);
    expect(done).toMatchObject({
      status: 'failed',
      error: 'The file was refused: it has more than 1,000,000 rows (the limit): split it. Nothing was imported.',
      created: 0,
    });
    expect(await contactsOf()).toEqual([]);
    console.log(
      `2,000,000-row file (${(lines.join('\n').length / 1e6).toFixed(1)} MB) uploaded in ${uploaded} ms, refused in ${Date.now() - started} ms`,
    );
  }, 60_000);

  it("another account's import is a 404, and lists show only the account's own imports", async () => {
    const mine = await importFile(`phone\n${number()}\n`);
    const other = await t.createAccount();
    expect((await getImport(mine.import_id, other)).status).toBe(404);
    expect((await getImport(mine.import_id, other)).body).toMatchObject({ message: 'Import not found' });
    expect((await errorReport(mine.import_id, other)).status).toBe(404);
    const malformed = await t.http.get('/v2/contacts/imports/abc', { token: account.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ field: 'import_id', message: 'import_id must be a positive integer' });
    const typo = await t.http.get('/v2/contacts/imports?pagesize=5', { token: account.token });
    expect(typo.status).toBe(400);
    expect(typo.body.errors.map((e: any) => e.field)).toEqual(['pagesize']);
    const theirs = await t.http.get('/v2/contacts/imports', { token: other.token });
    expect(theirs.body.data).toMatchObject({ imports: [], total: 0, page: 1, pageSize: 20 });
    const list = await t.http.get('/v2/contacts/imports', { token: account.token });
    expect(list.body.data.imports.map((i: any) => i.import_id)).toEqual([mine.import_id]);
  });
});
