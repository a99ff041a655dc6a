import { createUser } from '@switchboard/users';
import type { Page } from 'playwright-core';
import type { TestApp } from './test-app';

export interface ConsoleSession {
  email: string;
  password: string;
  /** `sb_session=...`, ready for a Cookie header. */
  cookie: string;
  csrf: string;
  setCookie: string;
}

/** Creates a person of the account with a known password. */
export async function createConsoleUser(
  t: TestApp,
  accountId: string,
  role: 'admin' | 'marketer' | 'agent' = 'marketer',
) {
  const email = `${role}.${Math.random().toString(36).slice(2, 10)}@example.com`;
  const password = 'correct horse battery staple';
  await createUser(t.db, { accountId, email, role, password });
  return { email, password };
}

export async function signIn(t: TestApp, email: string, password: string): Promise<ConsoleSession> {
  const res = await t.http.post('/console/session', { email, password }, { headers: { 'x-switchboard-csrf': '1' } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  const setCookie = res.headers.get('set-cookie')!;
  return { email, password, setCookie, cookie: setCookie.split(';')[0], csrf: res.body.data.csrfToken };
}

/** Signs in a new person of the account. */
export async function consoleSession(t: TestApp, accountId: string, role: 'admin' | 'marketer' | 'agent' = 'marketer') {
  const user = await createConsoleUser(t, accountId, role);
  return signIn(t, user.email, user.password);
}

/** Request options with the session cookie (and the CSRF header, as the console sends it). */
export function asUser(session: ConsoleSession, headers: Record<string, string> = {}) {
  return { headers: { cookie: session.cookie, 'x-switchboard-csrf': session.csrf, ...headers } };
}

/** A new marketer (or `role`) of the account signs in to the console in `page`, as a person would. */
export async function signInInBrowser(
  page: Page,
  t: TestApp,
  accountId: string,
  role: 'admin' | 'marketer' | 'agent' = 'marketer',
): Promise<void> {
  const user = await createConsoleUser(t, accountId, role);
  await page.goto(`${t.url}/app/`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  await page.locator('[data-testid=who]').waitFor();
}
