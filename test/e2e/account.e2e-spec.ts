import { startTestApp, TestApp } from '../helpers/test-app';

describe('GET /account/get', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists the connected numbers with their messagingPhoneId', async () => {
    const account = await t.createAccount({ displayPhoneNumber: '+1 555 010 2030' });
    const res = await t.http.get('/account/get', { token: account.token });
    expect(res.status).toBe(200);
    expect(res.body.data.phone_numbers).toEqual([
      {
        messagingPhoneId: account.messagingPhoneId,
        display_phone_number: '+1 555 010 2030',
        verified_name: expect.any(String),
        status: 'CONNECTED',
        messages_per_second: 80,
      },
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/access_token|accessToken/);
  });

  it('keeps the platform access token encrypted at rest', async () => {
    const account = await t.createAccount({ accessToken: 'EAAG-very-secret-token' });
    const [row] = await t.db.query('SELECT access_token_encrypted FROM phone_numbers WHERE messaging_phone_id = $1', [
      account.messagingPhoneId,
    ]);
    expect(row.access_token_encrypted).not.toContain('EAAG-very-secret-token');
    expect(row.access_token_encrypted).toMatch(/^v1\./);
  });

  it("never shows another account's numbers", async () => {
    const a = await t.createAccount();
    const b = await t.createAccount();
    const resA = await t.http.get('/account/get', { token: a.token });
    const resB = await t.http.get('/account/get', { token: b.token });
    expect(resA.body.data.phone_numbers.map((p: any) => p.messagingPhoneId)).toEqual([a.messagingPhoneId]);
    expect(resB.body.data.phone_numbers.map((p: any) => p.messagingPhoneId)).toEqual([b.messagingPhoneId]);
    expect(resA.body.data.id).not.toBe(resB.body.data.id);
  });
});
