import { asUser, consoleSession } from '../helpers/console';
import { openSse, SseConnection } from '../helpers/sse';
import { startTestApp, TestApp } from '../helpers/test-app';

/**
 * Live streams (Server-Sent Events) outlast the authentication guard's one check when they open: while open, they ask
 * again every LIVE_EVENTS_RECHECK_MS (5 s) whether the same credentials would still be let in, and end with
 * `event: end` / `{"reason":"access_ended"}` once not (a console sign-out, a rotated or deleted API client, a grant
 * taken away). A reader whose access holds is not disturbed.
 */
describe('Live streams end when their reader’s access ends', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(() => t?.close());

  const ended = async (stream: SseConnection) => {
    const end = await stream.waitFor((e) => e.event === 'end', 9_000);
    expect(end.data).toEqual({ reason: 'access_ended' });
    await stream.ended;
  };

  it('a console sign-out ends its inbox and template streams; another person’s streams go on', async () => {
    const account = await t.createAccount();
    const leaving = await consoleSession(t, account.accountId, 'admin');
    const staying = await consoleSession(t, account.accountId, 'admin');
    const open = (session: typeof leaving, path: string) =>
      openSse(`${t.url}${path}`, { cookie: session.cookie }).then((s) => {
        expect(s.status).toBe(200);
        return s;
      });
    const leavingInbox = await open(leaving, '/v1/inbox/events');
    const leavingTemplates = await open(leaving, '/v2/template-events');
    const stayingInbox = await open(staying, '/v1/inbox/events');

    expect((await t.http.delete('/console/session', asUser(leaving))).status).toBe(200);
    await Promise.all([ended(leavingInbox), ended(leavingTemplates)]);
    // checked at least once more since: still open, nothing ended
    await new Promise((r) => setTimeout(r, 5_500));
    expect(stayingInbox.events.filter((e) => e.event === 'end')).toEqual([]);
    stayingInbox.close();
  }, 40_000);

  it('an API client whose secret is rotated, or whose grant is taken away, loses its open streams', async () => {
    const account = await t.createAccount();
    const inbox = await openSse(`${t.url}/v1/inbox/events`, { authorization: account.token });
    expect(inbox.status).toBe(200);
    await t.db.query(`UPDATE api_clients SET grants = array_remove(grants, '/conversations') WHERE client_id = $1`, [
      account.clientId,
    ]);
    await ended(inbox);

    const other = await t.createAccount();
    const templates = await openSse(`${t.url}/v2/template-events`, { authorization: other.token });
    expect(templates.status).toBe(200);
    const rotated = await t.http.post(`/v1/clients/${other.clientId}/rotate-secret`, undefined, { token: other.token });
    expect(rotated.status).toBe(200);
    await ended(templates);
  }, 40_000);
});
