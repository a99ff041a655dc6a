import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createWorkflow, simpleDefinition } from '../helpers/automations';
import { launchChromium } from '../helpers/browser';
import { signInInBrowser } from '../helpers/console';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

// Functions passed to page.evaluate / waitForFunction run in the browser.
declare const document: any;
declare const window: any;

/**
 * The console's templates and contacts pages in real headless Chromium, against the real API, worker and Cloud API
 * sandbox (issue 20): create a template with a header, two variables and quick replies while the preview follows the
 * typing, submit it, and watch PENDING turn APPROVED (and another one REJECTED with its reason) without a reload;
 * then search contacts, create and rename a group, and open a contact's detail (conversation, workflow runs).
 * UPDATE_SCREENSHOTS=1 also writes docs/images/console-templates.png and console-contacts.png.
 */
describe('Console: templates and contacts in the browser', () => {
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let browser: Browser;
  let page: Page;
  const h = () => messagingHelpers(t, () => sandbox);
  const shots = process.env.UPDATE_SCREENSHOTS ? join(__dirname, '..', '..', 'docs', 'images') : null;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { worker: true });
    sandbox = await startTestSandbox(t, { autoReview: false, statusDelaysMs: { sent: 20, delivered: 40, read: null } });
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000); // a step that does not happen fails with its own message, before the test's timeout
    if (shots) mkdirSync(shots, { recursive: true });
    await signInInBrowser(page, t, account.accountId);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
    await t?.close();
  });

  /** On failure: a screenshot in /tmp, to see what the user saw. */
  async function explained(name: string, body: () => Promise<void>) {
    try {
      await body();
    } catch (error) {
      await page.screenshot({ path: `/tmp/console-catalog-${name}.png`, fullPage: true }).catch(() => undefined);
      throw error;
    }
  }

  const previewBody = () => page.locator('[data-testid=preview-body]').textContent();
  const fieldError = (field: string) => page.locator(`.field-error[data-field="${field}"]`);
  const badgeOf = (name: string) => page.locator(`tr[data-template="${name}"] [data-testid=status-badge]`);

  it(
    'creates a template with a header, two variables and quick replies; the preview follows; PENDING turns APPROVED live',
    () =>
      explained('templates', async () => {
        await page.click('nav >> text=Templates');
        await page.locator('[data-testid=new-template]').click();
        await page.fill('input[name=template_name]', 'Spring Sale');
        await fieldError('template_name')
          .filter({ hasText: 'template_name must be 1 to 512 lowercase letters, digits or underscores' })
          .waitFor();
        await page.fill('input[name=template_name]', 'spring_sale');
        await fieldError('template_name').waitFor({ state: 'detached' });

        await page.selectOption('select[name=header-kind]', 'text');
        await page.fill('input[name=header-text]', 'Spring sale');
        await page.locator('[data-testid=preview-header]').filter({ hasText: 'Spring sale' }).waitFor();

        // type the body as a person would: the preview follows every keystroke
        const body = page.locator('textarea[name=body]');
        await body.click();
        await body.pressSequentially('Hi {{name}}, your code is ');
        await page.waitForFunction(
          () => document.querySelector('[data-testid=preview-body]')?.textContent === 'Hi {{name}}, your code is ',
        );
        await body.pressSequentially('{{code}} until Sunday.');
        expect(await previewBody()).toBe('Hi {{name}}, your code is {{code}} until Sunday.');
        await page.locator('input[name=example-name]').pressSequentially('Ann');
        expect(await previewBody()).toBe('Hi Ann, your code is {{code}} until Sunday.');

        // submitting too early: the server's rules, run in the browser, mark the field (nothing is sent)
        await page.click('[data-testid=submit-template]');
        await fieldError('example.code').filter({ hasText: 'variable code needs an example value' }).waitFor();
        expect(await t.db.query('SELECT count(*)::int AS n FROM templates')).toEqual([{ n: 0 }]);
        await page.locator('input[name=example-code]').pressSequentially('SPRING20');
        await fieldError('example.code').waitFor({ state: 'detached' });
        expect(await previewBody()).toBe('Hi Ann, your code is SPRING20 until Sunday.');

        await page.fill('input[name=footer]', 'Reply STOP to opt out');
        await page.click('[data-testid=add-quick_reply]');
        await page.fill('input[name=button-0-text]', 'Show me');
        await page.click('[data-testid=add-quick_reply]');
        await page.fill('input[name=button-1-text]', 'Show me');
        await fieldError('button.1').filter({ hasText: 'button label "Show me" is used twice' }).waitFor();
        await page.fill('input[name=button-1-text]', 'Not now');
        expect(await page.locator('[data-testid=preview-button]').allInnerTexts()).toEqual(['↩ Show me', '↩ Not now']);
        if (shots) await page.screenshot({ path: join(shots, 'console-templates.png') });

        await page.click('[data-testid=submit-template]');
        await badgeOf('spring_sale').filter({ hasText: 'PENDING' }).waitFor();
        const [stored] = await t.db.query(
          `SELECT status, variables, header_type, buttons FROM templates WHERE name = 'spring_sale'`,
        );
        expect(stored).toEqual({
          status: 'PENDING',
          variables: ['name', 'code'],
          header_type: 'text',
          buttons: [
            { index: 0, type: 'quick_reply', text: 'Show me' },
            { index: 1, type: 'quick_reply', text: 'Not now' },
          ],
        });

        // the platform's reviewer decides; the review webhook reaches the page without a reload
        await page.locator('[data-testid=templates-table][data-live=on]').waitFor(); // the event stream is connected
        await page.evaluate(() => (window.__sameDocument = true));
        const review = await sandbox.control.post('/_sandbox/templates/review', {
          name: 'spring_sale',
          status: 'APPROVED',
        });
        expect(review.status).toBe(200);
        await badgeOf('spring_sale').filter({ hasText: 'APPROVED' }).waitFor({ timeout: 10_000 });
        expect(await page.evaluate(() => window.__sameDocument)).toBe(true);

        // another one, created through the API, is rejected with a reason: the badge says why
        await h().approvedTemplate(account, [h().body('Big news for {{name}} today!', { name: 'Ann' })], {
          name: 'big_news',
          approve: false,
        });
        await page.reload();
        await badgeOf('big_news').filter({ hasText: 'PENDING' }).waitFor();
        await sandbox.control.post('/_sandbox/templates/review', {
          name: 'big_news',
          status: 'REJECTED',
          reason: 'INVALID_FORMAT',
        });
        await badgeOf('big_news').filter({ hasText: 'REJECTED · INVALID_FORMAT' }).waitFor({ timeout: 10_000 });
      }),
    60_000,
  );

  it('edits a template: the form reads its components back, and an edit goes back to review', () =>
    explained('template-edit', async () => {
      await page.click('tr[data-template="spring_sale"] a');
      // the editor shows an empty form at once and fills it when the template has loaded
      await page.waitForFunction(() => document.querySelector('textarea[name=body]')?.value);
      expect(await page.inputValue('textarea[name=body]')).toBe('Hi {{name}}, your code is {{code}} until Sunday.');
      expect(await page.inputValue('input[name=example-code]')).toBe('SPRING20');
      expect(await page.inputValue('input[name=button-1-text]')).toBe('Not now');
      await page.fill('input[name=example-code]', 'SPRING25');
      expect(await previewBody()).toBe('Hi Ann, your code is SPRING25 until Sunday.');
      await page.click('[data-testid=submit-template]');
      await badgeOf('spring_sale').filter({ hasText: 'PENDING' }).waitFor();
      const [row] = await t.db.query(`SELECT status, components FROM templates WHERE name = 'spring_sale'`);
      expect(row.status).toBe('PENDING');
      expect(row.components[1].parameters[2]).toEqual({
        type: 'variable',
        variable: { text: 'code', value: 'SPRING25' },
      });
    }));

  it('searches contacts, creates and renames a group, and opens a contact with its conversation and runs', () =>
    explained('contacts', async () => {
      const create = (number: string, name: string, email?: string) =>
        t.http.post('/contacts/create-contact', { contact_number: number, name, email }, { token: account.token });
      for (let i = 0; i < 23; i++) await create(`+4915110000${String(i).padStart(2, '0')}`, `Customer ${i}`);
      const blocked = (await create('+4915119999901', 'Bea Blocked')).body.data.contact.contact_id;
      await t.http.request('PATCH', `/v2/contacts/${blocked}`, { token: account.token, body: { isBlocked: true } });
      // Ada writes to the number (a stored conversation), and a workflow runs for her
      await h().customerWrites(account, '4915112345678', 'Is my order on its way?', { name: 'Ada Lovelace' });
      const ada = await eventually(async () => {
        const r = await t.http.get('/v2/contacts?phone=4915112345678', { token: account.token });
        return r.body.data.contacts[0]?.contact_id as number | undefined;
      });
      await t.http.request('PATCH', `/v2/contacts/${ada}`, {
        token: account.token,
        body: { name: 'Ada Lovelace', email: 'ada@example.com' },
      });
      const wf = await createWorkflow(t, account.token, simpleDefinition(), 'Order follow-up');
      await t.http.post(`/webhook/workflow/${wf.identifier}`, { phone: '+4915112345678' });

      await page.click('nav >> text=Contacts');
      await page.locator('[data-testid=contacts-total]').filter({ hasText: '25 contacts' }).waitFor();
      expect(await page.locator('[data-testid=contacts-table] tbody tr').count()).toBe(20);
      await page.click('.pager >> text=Next');
      await page.locator('[data-testid=contacts-total]').filter({ hasText: 'Page 2 of 2' }).waitFor();
      // the page number shows at once, the second page's rows once they have loaded
      await page.waitForFunction(
        () => document.querySelectorAll('[data-testid=contacts-table] tbody tr').length === 5,
        undefined,
        { timeout: 5000 },
      );
      expect(await page.locator('[data-testid=contacts-table] tbody tr').count()).toBe(5);

      await page.fill('input[name=contact-search]', 'bea');
      await page.locator('[data-testid=contacts-total]').filter({ hasText: '1 contact' }).waitFor();
      await page.locator('[data-testid=contacts-table] [data-testid=opt-out]').waitFor();
      // an earlier search whose answer comes after a later one's is not shown over it
      const slow = (url: URL) => url.pathname === '/v2/contacts' && url.searchParams.get('search') === 'customer';
      let delayed = 0;
      await page.route(slow, async (route) => {
        delayed++;
        await new Promise((r) => setTimeout(r, 800));
        await route.continue().catch(() => undefined);
      });
      await page.fill('input[name=contact-search]', 'customer');
      await page.fill('input[name=contact-search]', 'bea');
      await page.locator('[data-testid=contacts-total]').filter({ hasText: '1 contact' }).waitFor();
      await new Promise((r) => setTimeout(r, 1200)); // the "customer" answer has come meanwhile
      await page.unroute(slow);
      expect(delayed).toBe(1);
      expect(await page.locator('[data-testid=contacts-total]').innerText()).toContain('1 contact');
      expect(await page.locator('[data-testid=contacts-table] tbody tr').count()).toBe(1);
      await page.fill('input[name=contact-search]', '');

      await page.fill('input[name=new-group]', 'Spring buyers');
      await page.click('[data-testid=create-group]');
      await page.locator('[data-testid=group-head] h2').filter({ hasText: 'Spring buyers' }).waitFor();
      await page.click('[data-testid=rename-group]');
      await page.fill('input[name=group-name]', 'Spring VIP');
      await page.click('[data-testid=save-group-name]');
      await page.locator('[data-testid=group-head] h2').filter({ hasText: 'Spring VIP' }).waitFor();
      await page.locator('.group-item[data-group="Spring VIP"]').waitFor();
      expect(await t.db.query(`SELECT name FROM contact_groups WHERE account_id = $1`, [account.accountId])).toEqual([
        { name: 'Spring VIP' },
      ]);

      // Ada's detail: profile, conversation, the run she is in; she joins the group from there
      await page.click('.group-item >> text=All contacts');
      await page.fill('input[name=contact-search]', 'ada');
      await page.click('[data-testid=contacts-table] >> text=Ada Lovelace');
      await page.locator('[data-testid=contact-detail]').waitFor();
      await page.locator('[data-testid=conversation]').filter({ hasText: 'Is my order on its way?' }).waitFor();
      await page.locator('[data-testid=contact-runs]').filter({ hasText: 'Order follow-up' }).waitFor();
      await page.selectOption('select[name=add-to-group]', { label: 'Spring VIP' });
      await page.click('[data-testid=contact-detail] form.inline button[type=submit]');
      await page.locator('[data-testid=contact-groups]').filter({ hasText: 'Spring VIP' }).waitFor();

      await page.click('text=Back to contacts');
      await page.click('.group-item[data-group="Spring VIP"]');
      // the list of all contacts (Ada among them) shows until the group's answer arrives
      await page
        .locator('[data-testid=contacts-total]')
        .filter({ hasText: /· 1 contact$/ })
        .waitFor();
      await page.locator('[data-testid=contacts-table]').filter({ hasText: 'Ada Lovelace' }).waitFor();
      expect(await page.locator('[data-testid=contacts-table] tbody tr').count()).toBe(1);
      await page.click('.group-item >> text=All contacts');
      await page.locator('[data-testid=contacts-total]').filter({ hasText: '25 contacts' }).waitFor();
      if (shots) await page.screenshot({ path: join(shots, 'console-contacts.png') });
    }));
});
