import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium: installed with apt when missing (never a browser download). */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function ensureChromium(log: (line: string) => void = () => undefined): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0)
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`);
  log('Installing Debian chromium for the browser tests (apt-get install -y chromium)...');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Headless Chromium through playwright-core (each launch gets a fresh temporary profile). */
export async function launchChromium(): Promise<Browser> {
  ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** Drags from one element's centre to another's with real mouse events (React Flow's connections and moves). */
export async function dragBetween(page: Page, fromSelector: string, toSelector: string): Promise<void> {
  const from = await page.locator(fromSelector).boundingBox();
  const to = await page.locator(toSelector).boundingBox();
  if (!from || !to) throw new Error(`not visible: ${!from ? fromSelector : toSelector}`);
  // Like a person: rest on the handle, move in steps, rest on the target (React Flow settles the connection on the
  // animation frame after a move; releasing on the same frame can drop it on a busy machine).
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.waitForTimeout(50);
  await page.mouse.down();
  await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 15 });
  await page.waitForTimeout(50);
  await page.mouse.move(to.x + to.width / 2 + 1, to.y + to.height / 2, { steps: 2 });
  await page.waitForTimeout(100);
  await page.mouse.up();
}
