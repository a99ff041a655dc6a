import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createWorkflow } from '../helpers/automations';
import { launchChromium } from '../helpers/browser';
import { signInInBrowser } from '../helpers/console';
import { eventually } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/**
 * The workflow builder's forms in real headless Chromium, typed and dragged as a person would: what the page shows
 * is what the draft holds. Keywords typed key by key, the HTTP body after an undo, a header added after a removal,
 * a node moved on its own, and a tab that reloaded after a conflict (each of these once saved something else, or
 * nothing).
 */
describe('Workflow builder forms in the browser: what is shown is what is saved', () => {
  let t: TestApp;
  let account: TestAccount;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let workflowId: number;
  const node = (id: string) => `.react-flow__node[data-id="${id}"]`;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    account = await t.createAccount();
    workflowId = (
      await createWorkflow(t, account.token, {
        trigger: { type: 'webhook' },
        startNodeId: 'call',
        nodes: [
          {
            id: 'call',
            type: 'http_request',
            method: 'POST',
            url: 'https://crm.example.com/orders',
            headers: { key1: 'one', key2: 'two' },
            body: { status: 'new' },
            next: 'ask',
          },
          {
            id: 'ask',
            type: 'wait_for_reply',
            timeout: '1h',
            branches: [{ match: { type: 'keyword', keywords: ['yes'] }, next: 'done' }],
            onTimeout: 'done',
          },
          { id: 'done', type: 'end' },
        ],
      })
    ).id;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await signInInBrowser(page, t, account.accountId);
    await page.goto(`${t.url}/app/workflows/${workflowId}`);
    await page.locator(node('done')).waitFor();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const draft = async () => (await t.http.get(`/v1/workflows/${workflowId}/draft`, { token: account.token })).body.data;
  /** Waits until the draft the API holds passes `expectations` (the builder autosaves 400 ms after an edit). */
  const inDraft = (expectations: () => Promise<void>) => eventually(async () => (await expectations(), true));
  const draftNode = async (id: string) => (await draft())?.definition.nodes.find((n: any) => n.id === id);
  const transformOf = (p: Page, id: string) => p.locator(node(id)).evaluate((n: any) => n.style.transform as string);

  /** On failure: a screenshot in /tmp, to see what the user saw. */
  async function explained(name: string, body: () => Promise<void>) {
    try {
      await body();
    } catch (error) {
      await page.screenshot({ path: `/tmp/builder-forms-${name}.png` }).catch(() => undefined);
      throw error;
    }
  }

  it('a node moved on its own, with no other edit, is saved where it was dropped', () =>
    explained('move', async () => {
      const before = await transformOf(page, 'done');
      const box = (await page.locator(`${node('done')} [data-testid=node-done]`).boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 + 60, box.y + box.height / 2 + 150, { steps: 8 });
      await page.mouse.up();
      const after = await transformOf(page, 'done');
      expect(after).not.toBe(before);
      await inDraft(async () => {
        const p = (await draft())?.layout.nodes.done;
        expect(p && `translate(${p.x}px, ${p.y}px)`).toBe(after);
      });
      await page.locator('[data-testid=save-state]').filter({ hasText: 'Draft saved' }).waitFor();
    }));

  it('keywords typed key by key keep their comma and spaces, in the field and in the draft', () =>
    explained('keywords', async () => {
      await page.click(node('ask'));
      const field = page.locator('input[name=branch-0-keywords]');
      await field.fill('');
      await field.pressSequentially('yes, sure thing');
      expect(await field.inputValue()).toBe('yes, sure thing');
      await inDraft(async () =>
        expect((await draftNode('ask'))?.branches[0].match).toEqual({
          type: 'keyword',
          keywords: ['yes', 'sure thing'],
        }),
      );
    }));

  it('the HTTP body shown follows an undo, and the draft holds what is shown', () =>
    explained('body-undo', async () => {
      await page.click(node('call'));
      const body = page.locator('textarea[name=body]');
      await body.fill('{"status": "paid"}');
      await inDraft(async () => expect((await draftNode('call'))?.body).toEqual({ status: 'paid' }));
      await page.getByRole('button', { name: 'Undo' }).click();
      await page.waitForFunction(
        () => JSON.parse(document.querySelector('textarea[name=body]')?.value || 'null')?.status === 'new',
      );
      await inDraft(async () => expect((await draftNode('call'))?.body).toEqual({ status: 'new' }));
    }));

  it('a header added after one was removed does not take the name of one kept (whose value was lost)', () =>
    explained('headers', async () => {
      await page.click(node('call'));
      const headers = page.locator('[data-field=headers]');
      await headers.locator('.pair').first().getByRole('button', { name: '×' }).click();
      await headers.getByRole('button', { name: '+ add' }).click();
      await headers.locator('.pair').nth(1).locator('input').nth(1).fill('three');
      await inDraft(async () => expect((await draftNode('call'))?.headers).toEqual({ key2: 'two', key3: 'three' }));
      expect(await headers.locator('.pair input').evaluateAll((l: any[]) => l.map((i) => i.value))).toEqual([
        'key2',
        'two',
        'key3',
        'three',
      ]);
    }));

  it('after a conflict, the tab that reloads saves again and publishes', () =>
    explained('conflict', async () => {
      await page.locator('[data-testid=save-state]').filter({ hasText: 'Draft saved' }).waitFor();
      const second = await context.newPage();
      await second.setViewportSize({ width: 1600, height: 1000 });
      await second.goto(`${t.url}/app/workflows/${workflowId}`);
      await second.locator(node('call')).waitFor();

      await page.click(node('call'));
      await page.fill('input[name=label]', 'Call (tab 1)');
      await inDraft(async () => expect((await draftNode('call'))?.label).toBe('Call (tab 1)'));

      await second.click(node('call'));
      await second.fill('input[name=label]', 'Call (tab 2)');
      const conflict = second.locator('[data-testid=conflict]');
      await conflict.filter({ hasText: 'The draft was changed elsewhere' }).waitFor();
      await conflict.getByRole('button', { name: 'Reload' }).click();
      await second.locator('[data-testid=conflict]').waitFor({ state: 'detached' });

      await second.click(node('call'));
      expect(await second.inputValue('input[name=label]')).toBe('Call (tab 1)');
      await second.fill('input[name=label]', 'Call (tab 2, after reload)');
      await inDraft(async () => expect((await draftNode('call'))?.label).toBe('Call (tab 2, after reload)'));
      await second.locator('[data-testid=save-state]').filter({ hasText: 'Draft saved' }).waitFor();

      await second.click('[data-testid=publish]');
      await second.locator('[data-testid=published]').filter({ hasText: 'Published version 2.' }).waitFor();
      const live = await t.http.get(`/v1/workflows/${workflowId}`, { token: account.token });
      expect(live.body.data.version).toBe(2);
      expect(live.body.data.nodes.find((n: any) => n.id === 'call').label).toBe('Call (tab 2, after reload)');
      await second.close();
    }));
});

// Functions passed to page.evaluate / waitForFunction run in the browser.
declare const document: any;
