import { eventually, TestSandbox } from './sandbox';
import { TestAccount, TestApp } from './test-app';

/** Helpers shared by the messaging suites: templates through the API and the sandbox's reviewer, the customer's side. */
export function messagingHelpers(t: TestApp, sandbox: () => TestSandbox) {
  let seq = 0;
  const unique = (base: string) => `${base}_${Date.now().toString(36)}_${(seq++).toString(36)}`;

  /** Creates a template through POST /templates/create, approves it as the sandbox's reviewer, waits until APPROVED here. */
  async function approvedTemplate(
    account: TestAccount,
    components: unknown[],
    opts: { name?: string; category?: string; approve?: boolean } = {},
  ) {
    const name = opts.name ?? unique('tpl');
    const created = await t.http.post(
      '/templates/create',
      {
        template_name: name,
        category: opts.category ?? 'UTILITY',
        language: 'en_US',
        messagingPhoneId: account.messagingPhoneId,
        components,
      },
      { token: account.token },
    );
    if (created.status !== 200 || typeof created.body.data !== 'object')
      throw new Error(`template create failed: ${created.status} ${JSON.stringify(created.body)}`);
    if (opts.approve === false) return name;
    const review = await sandbox().control.post('/_sandbox/templates/review', { name, status: 'APPROVED' });
    if (review.status !== 200) throw new Error(`review failed: ${JSON.stringify(review.body)}`);
    await eventually(
      async () => {
        const res = await t.http.get(`/templates/status?template_name=${name}`, { token: account.token });
        return res.body?.data?.status === 'APPROVED';
      },
      10_000,
      `template ${name} approved`,
    );
    return name;
  }

  const body = (text: string, vars: Record<string, string> = {}) => ({
    type: 'body',
    parameters: [
      { type: 'text', text },
      ...Object.entries(vars).map(([k, v]) => ({ type: 'variable', variable: { text: k, value: v } })),
    ],
  });

  /** What the sandbox (the platform) received for this recipient, oldest first. */
  async function received(account: TestAccount, to: string): Promise<any[]> {
    const res = await sandbox().control.get(`/_sandbox/messages?to=${to}&phone_number_id=${account.messagingPhoneId}`);
    return res.body.data;
  }

  /** The customer writes to the number: opens the 24-hour window. */
  async function customerWrites(account: TestAccount, from: string, text = 'hi', extra: Record<string, unknown> = {}) {
    const res = await sandbox().control.post('/_sandbox/inbound', {
      from,
      phone_number_id: account.messagingPhoneId,
      text,
      name: 'Customer',
      ...extra,
    });
    if (res.status !== 200) throw new Error(`inbound failed: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A customer known only by a business-scoped user id (a WhatsApp username, no phone) writes to the number. */
  async function userWrites(account: TestAccount, userId: string, text: string) {
    return customerWrites(account, undefined as never, text, { user_id: userId, username: '@ann.k', name: 'Ann' });
  }

  /**
   * The customer writes (as customerWrites) and the worker has stored the message, linked to its contact: the contact
   * exists, named by the customer's profile ('Customer'), before the test goes on.
   */
  async function customerWritesStored(account: TestAccount, from: string, text = 'hi') {
    await customerWrites(account, from, text);
    await eventually(async () => {
      const [row] = await t.db.query(
        `SELECT 1 FROM messages WHERE account_id = $1 AND direction = 'inbound' AND recipient = $2 AND body = $3
            AND contact_id IS NOT NULL`,
        [account.accountId, from, text],
      );
      return row;
    }, 10_000);
  }

  /** The id of the account's contact with this number, once the worker has created it (a customer who wrote). */
  function contactIdOf(account: Pick<TestAccount, 'accountId'>, number: string): Promise<string> {
    return eventually(
      async () => {
        const [row] = await t.db.query(`SELECT id FROM contacts WHERE account_id = $1 AND contact_number = $2`, [
          account.accountId,
          number,
        ]);
        return row ? String(row.id) : null;
      },
      10_000,
      `contact ${number}`,
    );
  }

  let phoneSeq = 0;
  /** A fresh customer number (never ending in 0000, the sandbox's undeliverable suffix). */
  const customer = () => `4917${String(Date.now() % 1e6).padStart(6, '0')}${String((phoneSeq++ % 90) + 10)}`;

  /** Connects a second number of the account in another WhatsApp Business Account (its id: the first's + `suffix`). */
  async function numberInOtherWaba(account: TestAccount, suffix: string): Promise<string> {
    const other = `${account.messagingPhoneId}${suffix}`;
    await t.db.query(
      `INSERT INTO phone_numbers (account_id, messaging_phone_id, display_phone_number, verified_name, business_account_id,
                                  api_base_url, api_version, access_token_encrypted, messages_per_second)
       SELECT account_id, $2, display_phone_number, verified_name, business_account_id || '9',
              api_base_url, api_version, access_token_encrypted, messages_per_second
         FROM phone_numbers WHERE messaging_phone_id = $1`,
      [account.messagingPhoneId, other],
    );
    return other;
  }

  return {
    unique,
    approvedTemplate,
    body,
    received,
    customerWrites,
    customerWritesStored,
    contactIdOf,
    userWrites,
    customer,
    numberInOtherWaba,
  };
}
