import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { LiveEvents } from '@switchboard/core';
import { EmbedTokens } from '@switchboard/inbox';
import { launchChromium } from '../helpers/browser';
import { messagingHelpers } from '../helpers/messaging';
import { eventually, startTestSandbox, TestSandbox } from '../helpers/sandbox';
import { startTestApp, TestAccount, TestApp } from '../helpers/test-app';

/** A customer's page on another origin (127.0.0.2 / 127.0.0.3) that frames the inbox, as docs/inbox.md shows. */
async function hostPage(
  address: string,
): Promise<{ origin: string; frame(url: string): string; close(): Promise<void> }> {
  let frameUrl = '';
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;font-family:sans-serif">
      <h3 style="margin:8px">Acme CRM — support</h3>
      <iframe id="inbox" src="${frameUrl}" style="width:1100px;height:640px;border:1px solid #ccc"></iframe>
      </body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const origin = `http://${address}:${(server.address() as { port: number }).port}`;
  return {
    origin,
    frame: (url) => ((frameUrl = url), `${origin}/`),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The embeddable inbox in real headless Chromium, framed by a host page on a second loopback origin, against the real
 * API, worker and Cloud API sandbox: list and thread, a live inbound on top with its unread badge, a reply with ticks
 * advancing, the closed window's template send, framing refused for other origins, expired and reused tokens.
 * UPDATE_SCREENSHOTS=1 also writes docs/images/inbox-embed.png.
 */
describe('Embedded inbox in the browser', () => {
  jest.setTimeout(60_000);
  let t: TestApp;
  let sandbox: TestSandbox;
  let account: TestAccount;
  let browser: Browser;
  let page: Page;
  let host: Awaited<ReturnType<typeof hostPage>>;
  let template: string;
  const h = () => messagingHelpers(t, () => sandbox);
  const shots = process.env.UPDATE_SCREENSHOTS ? join(__dirname, '..', '..', 'docs', 'images') : null;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', SEND_WAIT_TIMEOUT_MS: '15000' }, { worker: true });
    sandbox = await startTestSandbox(t, {
      statusDelaysMs: { sent: 100, delivered: 400, read: 900 },
      autoReview: false,
    });
    account = await t.createAccount({ apiBaseUrl: sandbox.url });
    template = await h().approvedTemplate(
      account,
      [h().body('Hi {{name}}, your order is ready for pickup', { name: 'Ann' })],
      {
        name: 'pickup_ready',
      },
    );
    host = await hostPage('127.0.0.2');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1200, height: 760 } })).newPage();
    if (shots) mkdirSync(shots, { recursive: true });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await sandbox?.close();
    await t?.close();
  });

  /** Mints a token for `origins` and returns the page URL on the test API (embedUrl's path, the test app's port). */
  async function embedUrl(origins = [host.origin], permissions = ['read', 'send', 'send_template']) {
    const minted = await t.http.post(
      '/v1/embed/tokens',
      {
        scope: { messagingPhoneIds: [account.messagingPhoneId] },
        permissions,
        allowedOrigins: origins,
        agentName: 'Dana',
      },
      { token: account.token },
    );
    expect(minted.status).toBe(201);
    const url = new URL(minted.body.embedUrl);
    return { url: `${t.url}${url.pathname}${url.search}${url.hash}`, token: minted.body.embedToken as string };
  }

  async function openFramed(url: string, hostServer = host): Promise<Frame> {
    await page.goto(hostServer.frame(url), { waitUntil: 'domcontentloaded', timeout: 10_000 });
    const handle = await page.waitForSelector('iframe#inbox', { timeout: 10_000 });
    return (await handle.contentFrame())!;
  }

  const conversationNames = (frame: Frame) =>
    frame.$$eval('[data-testid=conversation] .conversation-name', (els) => els.map((e) => (e as any).textContent));

  it('list and thread render; an inbound message appears on top with an unread badge, live; a reply reaches the platform and its ticks advance', async () => {
    const first = h().customer();
    await h().customerWrites(account, first, 'Is my order ready?', { name: 'Ana' });
    await eventually(
      async () =>
        (await t.db.query(`SELECT 1 FROM conversations WHERE account_id = $1`, [account.accountId])).length > 0,
    );

    const { url } = await embedUrl();
    const frame = await openFramed(url);
    await frame.waitForSelector('[data-testid=conversation]', { timeout: 10_000 });
    // the token left the address bar at once
    expect(frame.url()).not.toContain('token=');
    expect(await conversationNames(frame)).toEqual(['Ana']);
    await frame.waitForSelector('.live-dot.on');

    // a second customer writes: on top, with a badge, no reload
    const second = h().customer();
    await h().customerWrites(account, second, 'Hello there');
    await frame.waitForFunction(
      (n) => (globalThis as any).document.querySelectorAll('[data-testid=conversation]').length === n,
      2,
      { timeout: 8000 }, // live (no reload); its latency is measured by `npm run bench inbox`, not here
    );
    const top = frame.locator('[data-testid=conversation]').first();
    expect(await top.locator('.conversation-preview').textContent()).toBe('Hello there');
    expect(await top.locator('[data-testid=unread-badge]').textContent()).toBe('1');

    // open it, reply with the keyboard
    await top.click();
    await frame.waitForSelector('[data-testid=message]');
    expect(await frame.locator('[data-testid=message] .message-text').first().textContent()).toBe('Hello there');
    await frame.waitForFunction(
      () =>
        !(globalThis as any).document.querySelector('[data-testid=conversation].selected [data-testid=unread-badge]'),
    );
    await frame
      .locator('textarea[aria-label=Message]')
      .fill('Hi! How can we help?', { timeout: 10_000 })
      .catch(async (e) => {
        console.log('FRAME:', await frame.locator('body').innerText());
        throw e;
      });
    expect(await frame.locator('[data-testid=window-countdown]').textContent()).toMatch(/closes in 2[34]h/);
    await frame.locator('textarea[aria-label=Message]').press('Enter');
    const got = await eventually(async () => {
      const r = await h().received(account, second);
      return r.length ? r : null;
    });
    expect(got[0].payload).toMatchObject({ type: 'text', text: { body: 'Hi! How can we help?' } });
    const outbound = frame.locator('.message.outbound').last();
    await outbound
      .locator('.ticks[data-status=sent], .ticks[data-status=delivered], .ticks[data-status=read]')
      .waitFor({ timeout: 5000 });
    await outbound.locator('.ticks[data-status=delivered], .ticks[data-status=read]').waitFor({ timeout: 5000 });
    await outbound.locator('.ticks[data-status=read]').waitFor({ timeout: 5000 });
    if (shots) await page.screenshot({ path: join(shots, 'inbox-embed.png') });
  });

  it('an event skipped by a process that had not yet heard of the open inbox makes the page reload: the message shows', async () => {
    const customer = h().customer();
    await h().customerWrites(account, customer, 'First question', { name: 'Rita' });
    const { url } = await embedUrl();
    const frame = await openFramed(url);
    await frame.waitForSelector('.live-dot.on');
    await frame.locator('[data-testid=conversation]', { hasText: 'Rita' }).click();
    await frame.locator('[data-testid=message]', { hasText: 'First question' }).waitFor({ timeout: 5000 });

    // The worker still believes nobody watches this inbox (the moment before the stream's announcement reaches it):
    // it keeps nothing of the next customer message's events, and tells the open streams to reset instead.
    const workerLive = t.worker!.get(LiveEvents) as unknown as { watchKnown: Map<string, unknown> };
    workerLive.watchKnown.set(`inbox:${account.accountId}`, { watched: false, at: Date.now() });
    await h().customerWrites(account, customer, 'Second question');
    await frame.locator('[data-testid=message]', { hasText: 'Second question' }).waitFor({ timeout: 5000 });
    // the list is read again beside the thread, not after it
    await frame
      .locator('[data-testid=conversation]', { hasText: 'Rita' })
      .locator('.conversation-preview', { hasText: 'Second question' })
      .waitFor({ timeout: 5000 });
  });

  it('a message that arrives after the first list read and before the live stream starts shows once the stream opens', async () => {
    const before = h().customer();
    await h().customerWrites(account, before, 'Already here', { name: 'Olga' });
    await eventually(
      async () =>
        (await t.db.query(`SELECT 1 FROM messages WHERE recipient = $1 AND contact_id IS NOT NULL`, [before])).length >
        0,
    );
    // the stream's request is held until the list has been read and the next customer's message is stored
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/events', async (route) => {
      await held;
      await route.continue();
    });
    try {
      const { url } = await embedUrl();
      const frame = await openFramed(url);
      await frame.locator('[data-testid=conversation]', { hasText: 'Olga' }).waitFor({ timeout: 10_000 });
      expect(await frame.locator('.live-dot.on').count()).toBe(0);
      const late = h().customer();
      await h().customerWrites(account, late, 'In between', { name: 'Pavel' });
      await eventually(
        async () =>
          (await t.db.query(`SELECT 1 FROM messages WHERE recipient = $1 AND contact_id IS NOT NULL`, [late])).length >
          0,
      );
      expect(await frame.locator('[data-testid=conversation]', { hasText: 'Pavel' }).count()).toBe(0);
      release();
      await frame.waitForSelector('.live-dot.on', { timeout: 10_000 });
      const pavel = frame.locator('[data-testid=conversation]', { hasText: 'Pavel' });
      await pavel.waitFor({ timeout: 5000 });
      expect(await pavel.locator('.conversation-preview').textContent()).toBe('In between');
    } finally {
      release();
      await page.unroute('**/events');
    }
  });

  it('typing a search filters the list over the same live stream: the stream is not reopened per keystroke', async () => {
    const customer = h().customer();
    await h().customerWrites(account, customer, 'Where is my parcel?', { name: 'Quentin' });
    const { url } = await embedUrl();
    const streams: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().endsWith('/events')) streams.push(request.url());
    };
    page.on('request', onRequest);
    try {
      const frame = await openFramed(url);
      await frame.waitForSelector('.live-dot.on');
      await frame.locator('[data-testid=conversation]', { hasText: 'Quentin' }).waitFor({ timeout: 5000 });
      await frame.locator('input[aria-label="Search conversations"]').pressSequentially('Quen', { delay: 50 });
      await frame.waitForFunction(
        () =>
          [...(globalThis as any).document.querySelectorAll('[data-testid=conversation] .conversation-name')].every(
            (e: any) => e.textContent === 'Quentin',
          ),
        undefined,
        { timeout: 5000 },
      );
      expect(await conversationNames(frame)).toEqual(['Quentin']);
      // a message arriving now still shows live
      await h().customerWrites(account, customer, 'Any news?');
      await frame
        .locator('[data-testid=conversation]', { hasText: 'Quentin' })
        .locator('.conversation-preview', { hasText: 'Any news?' })
        .waitFor({ timeout: 5000 });
      expect(streams).toHaveLength(1);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('the open conversation stays open when a search leaves it out of the list', async () => {
    const customer = h().customer();
    await h().customerWrites(account, customer, 'Can I change the size?', { name: 'Rosalind' });
    const { url } = await embedUrl();
    const frame = await openFramed(url);
    await frame.locator('[data-testid=conversation]', { hasText: 'Rosalind' }).click();
    await frame.locator('[data-testid=message]', { hasText: 'Can I change the size?' }).waitFor({ timeout: 5000 });
    await frame.locator('input[aria-label="Search conversations"]').pressSequentially('nobody-by-this-name');
    await frame.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('[data-testid=conversation]').length === 0,
      undefined,
      { timeout: 5000 },
    );
    // the thread and its composer are still there (it turned into an endless "Loading…")
    await frame.locator('[data-testid=message]', { hasText: 'Can I change the size?' }).waitFor({ timeout: 2000 });
    expect(await frame.locator('.thread-header').innerText()).toContain('Rosalind');
    expect(await frame.locator('textarea').count()).toBe(1);
  });

  it('outside the window the composer is disabled and an approved template goes out, one with a tracking link too', async () => {
    const customer = h().customer();
    const tracked = await h().approvedTemplate(account, [
      h().body('Hi {{name}}, your parcel is on its way.', { name: 'Ana' }),
      {
        type: 'button',
        parameters: [{ type: 'cta', cta: { text: 'URL', value: 'Track', url: 'https://shop.example.com/t/{{1}}' } }],
      },
    ]);
    const direct = await t.http.post(
      `/send-message/${account.messagingPhoneId}`,
      { templateName: template, to: `+${customer}`, variables: { name: 'Bo' }, receipentName: 'Bo Window' },
      { token: account.token },
    );
    expect(direct.status).toBe(200);
    const { url } = await embedUrl();
    const frame = await openFramed(url);
    await frame.waitForSelector('[data-testid=conversation]', { timeout: 10_000 }).catch(async (e) => {
      await page.screenshot({ path: '/tmp/inbox-window.png' });
      throw e;
    });
    await frame
      .locator('[data-testid=conversation]', { hasText: 'Bo Window' })
      .click({ timeout: 10_000 })
      .catch(async (e) => {
        await page.screenshot({ path: '/tmp/inbox-window.png' });
        throw e;
      });
    await frame.waitForSelector('[data-testid=window-closed]', { timeout: 5000 }).catch(async (e) => {
      console.log(await frame.locator('body').innerText());
      throw e;
    });
    expect(await frame.locator('textarea[aria-label=Message]').isDisabled()).toBe(true);
    await frame.locator('select[aria-label=Template]').selectOption(template);
    await frame.locator('input[aria-label="Variable name"]').fill('Cy');
    expect(await frame.locator('[data-testid=template-preview]').textContent()).toBe(
      'Hi Cy, your order is ready for pickup',
    );
    await frame.locator('button', { hasText: 'Send template' }).click();
    const got = await eventually(async () => {
      const r = await h().received(account, customer);
      return r.length >= 2 ? r : null;
    });
    expect(JSON.stringify(got[1].payload)).toContain('Cy');
    await frame
      .locator('.message.outbound .message-kind', { hasText: `Template ${template}` })
      .nth(1)
      .waitFor();

    // a dynamic URL button: the agent types its part of the link, and cannot send without it
    await frame.locator('select[aria-label=Template]').selectOption(tracked);
    await frame.locator('input[aria-label="Variable name"]').fill('Dee');
    const link = frame.locator('input[aria-label="Link of the button Track"]');
    expect(await link.getAttribute('placeholder')).toBe('Track: https://shop.example.com/t/…');
    const sendTemplate = frame.locator('button', { hasText: 'Send template' });
    expect(await sendTemplate.isDisabled()).toBe(true);
    await link.fill('PARCEL-42');
    await sendTemplate.click();
    const withLink = await eventually(async () => {
      const r = await h().received(account, customer);
      return r.length >= 3 ? r[2] : null;
    });
    expect(withLink.payload.template.components).toContainEqual({
      type: 'button',
      sub_type: 'url',
      index: '0',
      parameters: [{ type: 'text', text: 'PARCEL-42' }],
    });
  });

  it('a host page on an origin not in allowedOrigins is refused framing (CSP frame-ancestors), the frame stays empty', async () => {
    const { url } = await embedUrl([host.origin]);
    const response = await fetch(url);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain(`frame-ancestors ${host.origin}`);
    expect(csp).not.toContain('*');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-frame-options')).toBeNull();

    const stranger = await hostPage('127.0.0.3');
    try {
      const frame = await openFramed(url, stranger);
      await page.waitForTimeout(1500);
      const rendered = await frame.$('[data-testid=inbox], [data-testid=embed-error]').catch(() => null);
      expect(rendered).toBeNull();
    } finally {
      await stranger.close();
    }
  });

  it('an expired and a reused token show the error screen', async () => {
    const tokens = t.app.get(EmbedTokens);
    const expired = await tokens.mint(
      {
        accountId: account.accountId,
        scope: {},
        permissions: ['read'],
        allowedOrigins: [host.origin],
        agentName: null,
      },
      -5,
    );
    let frame = await openFramed(`${t.url}/embed-chat?e=${expired.id}#token=${expired.token}`);
    await frame.waitForSelector('[data-testid=embed-error]');
    expect(await frame.locator('[data-testid=embed-error]').textContent()).toContain('Embed token has expired');

    const { url, token } = await embedUrl();
    const used = await t.http.post('/v1/embed/session', { embedToken: token });
    expect(used.status).toBe(200);
    frame = await openFramed(url);
    await frame.waitForSelector('[data-testid=embed-error]');
    expect(await frame.locator('[data-testid=embed-error]').textContent()).toContain('already been used');
  });
});
