import { GRANTS } from '@switchboard/auth';
import { startTestApp, TestApp } from '../helpers/test-app';

/**
 * SPEC §5.8: each endpoint needs the grant of its area. One row per protected route: every module adds its own,
 * and each row is checked both ways (with every grant but that one: 403 naming it; with only that one: not 403).
 */
export const PROTECTED_ROUTES: Array<{
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  grant: (typeof GRANTS)[number];
}> = [
  { method: 'GET', path: '/account/get', grant: '/account' },
  { method: 'POST', path: '/contacts/create-contact', grant: '/contacts' },
  { method: 'GET', path: '/v2/contacts', grant: '/contacts' },
  { method: 'GET', path: '/v2/contacts/1', grant: '/contacts' },
  { method: 'PATCH', path: '/v2/contacts/1', grant: '/contacts' },
  { method: 'POST', path: '/v2/contact-groups', grant: '/contacts' },
  { method: 'GET', path: '/v2/contact-groups', grant: '/contacts' },
  { method: 'GET', path: '/v2/contact-groups/1', grant: '/contacts' },
  { method: 'DELETE', path: '/v2/contact-groups/1', grant: '/contacts' },
  { method: 'POST', path: '/v2/contact-groups/1/members', grant: '/contacts' },
  { method: 'DELETE', path: '/v2/contact-groups/1/members', grant: '/contacts' },
  { method: 'POST', path: '/send-message/123456789012345', grant: '/send-message' },
  { method: 'POST', path: '/v1/send-message/123456789012345', grant: '/send-message' },
  { method: 'GET', path: '/v2/conversations', grant: '/conversations' },
  { method: 'GET', path: '/v2/conversations/1/messages', grant: '/conversations' },
  { method: 'POST', path: '/templates/create', grant: '/templates' },
  { method: 'GET', path: '/v2/templates', grant: '/templates' },
  { method: 'GET', path: '/templates/get-templates', grant: '/templates' },
  { method: 'GET', path: '/v2/templates/some_template', grant: '/templates' },
  { method: 'GET', path: '/templates/status?template_name=some_template', grant: '/templates' },
  { method: 'POST', path: '/v2/templates/sync', grant: '/templates' },
  { method: 'PUT', path: '/templates/update?template_name=some_template', grant: '/templates' },
  { method: 'POST', path: '/v2/campaigns', grant: '/campaigns' },
  { method: 'GET', path: '/v2/campaigns', grant: '/campaigns' },
  { method: 'GET', path: '/v2/campaigns/1', grant: '/campaigns' },
  { method: 'POST', path: '/v2/campaigns/1/start', grant: '/campaigns' },
  { method: 'POST', path: '/v2/campaigns/1/pause', grant: '/campaigns' },
  { method: 'POST', path: '/v2/campaigns/1/resume', grant: '/campaigns' },
  { method: 'POST', path: '/v2/campaigns/1/cancel', grant: '/campaigns' },
  { method: 'POST', path: '/campaigns/trigger_campaign-api/1', grant: '/campaigns' },
  { method: 'GET', path: '/workflows/active', grant: '/workflows' },
  { method: 'POST', path: '/v1/workflows', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflows/1', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflows/1/runs', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflow-runs/00000000-0000-4000-8000-000000000000', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflows', grant: '/workflows' },
  { method: 'DELETE', path: '/v1/workflows/1', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflows/1/draft', grant: '/workflows' },
  { method: 'PUT', path: '/v1/workflows/1/draft', grant: '/workflows' },
  { method: 'DELETE', path: '/v1/workflows/1/draft', grant: '/workflows' },
  { method: 'POST', path: '/v1/workflows/1/publish', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflows/1/versions', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflows/1/versions/1', grant: '/workflows' },
  { method: 'POST', path: '/v1/workflows/1/versions/1/restore', grant: '/workflows' },
  { method: 'POST', path: '/v1/workflows/1/test-runs', grant: '/workflows' },
  { method: 'GET', path: '/v1/workflow-runs/00000000-0000-4000-8000-000000000000/events', grant: '/workflows' },
  { method: 'POST', path: '/v1/workflow-runs/00000000-0000-4000-8000-000000000000/sandbox-reply', grant: '/workflows' },
  { method: 'POST', path: '/flow/create', grant: '/flow' },
  { method: 'PUT', path: '/flow/update', grant: '/flow' },
  { method: 'DELETE', path: '/flow/delete', grant: '/flow' },
  { method: 'GET', path: '/v2/flows', grant: '/flow' },
  { method: 'GET', path: '/v2/flows/1', grant: '/flow' },
  { method: 'GET', path: '/v2/flows/1/responses', grant: '/flow' },
  { method: 'POST', path: '/v2/flows/1/send', grant: '/flow' },
];

describe('Grants', () => {
  let t: TestApp;
  beforeAll(async () => {
    // every row authenticates several clients: more than the 105/min authentication limit once all modules add rows
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(() => t.close());

  async function tokenWithGrants(grants: string[]) {
    const account = await t.createAccount();
    await t.db.query('UPDATE api_clients SET grants = $2 WHERE client_id = $1', [account.clientId, grants]);
    const auth = await t.http.post('/v1/authenticate', undefined, {
      headers: { clientid: account.clientId, clientsecret: account.clientSecret },
    });
    return auth.body.token as string;
  }

  it('a new account client has every grant', async () => {
    const account = await t.createAccount();
    const [row] = await t.db.query('SELECT grants FROM api_clients WHERE client_id = $1', [account.clientId]);
    expect([...row.grants].sort()).toEqual([...GRANTS].sort());
  });

  it.each(PROTECTED_ROUTES)('$method $path needs $grant', async ({ method, path, grant }) => {
    const without = await tokenWithGrants(GRANTS.filter((g) => g !== grant));
    const denied = await t.http.request(method, path, { token: without });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      statusCode: 403,
      message: 'Unauthorized to make this request',
      required_grant: grant,
    });

    const only = await tokenWithGrants([grant]);
    const allowed = await t.http.request(method, path, { token: only });
    expect(allowed.status).not.toBe(403);
    expect(allowed.status).not.toBe(401);
  });

  it('every grant of SPEC §2 is exercised by at least one protected route', () => {
    // Grows with the modules; the grants not yet served by any route are listed so the gap stays visible.
    const covered = new Set(PROTECTED_ROUTES.map((r) => r.grant));
    const missing = GRANTS.filter((g) => !covered.has(g));
    if (missing.length) process.stdout.write(`Grants without an endpoint yet: ${missing.join(', ')}\n`);
    expect(covered.has('/account')).toBe(true);
  });
});
