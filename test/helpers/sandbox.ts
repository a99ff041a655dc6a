import { createSandbox, type Sandbox } from '../../apps/sandbox/src/sandbox';
import type { SandboxConfig } from '../../apps/sandbox/src/state';
import { HttpClient } from './http';
import type { TestApp } from './test-app';

export interface TestSandbox {
  sandbox: Sandbox;
  url: string;
  /** The sandbox's control API (`/_sandbox/...`) over HTTP. */
  control: HttpClient;
  close(): Promise<void>;
}

/** A Cloud API sandbox on a random port whose signed webhooks go to the test app's receiver. */
export async function startTestSandbox(t: TestApp, config: Partial<SandboxConfig> = {}): Promise<TestSandbox> {
  const sandbox = createSandbox({
    webhookUrl: `${t.url}/webhooks/whatsapp`,
    appSecret: t.config.WHATSAPP_APP_SECRET,
    quiet: true,
    ...config,
  });
  const url = await sandbox.listen(0, '127.0.0.1');
  return { sandbox, url, control: new HttpClient(url), close: () => sandbox.close() };
}

/** Polls until `check` returns a truthy value (webhooks and queues are asynchronous), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | null | undefined | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/**
 * The count `read` gives once it has held for `quietMs` (sends already on their way after a pause or cancel, about 2 s
 * of a number's rate, go out first: 2.5 s is longer, so a stalled send is not taken for the end); fails if it still
 * moves after `timeoutMs`.
 */
export async function settledCount(
  read: () => Promise<number>,
  what: string,
  quietMs = 2500,
  timeoutMs = 20_000,
): Promise<number> {
  const started = Date.now();
  for (let last = await read(); ;) {
    await new Promise((r) => setTimeout(r, quietMs));
    const now = await read();
    if (now === last) return now;
    if (Date.now() - started > timeoutMs)
      throw new Error(`${what} still moving after ${timeoutMs} ms: ${last} → ${now}`);
    last = now;
  }
}
