import { createUser } from '@switchboard/users';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePorts } from '../../scripts/free-ports';
import { startTestApp, TestApp } from '../helpers/test-app';
import { processEnv, spawnDist } from '../helpers/worker-process';

const ROOT = join(__dirname, '..', '..');

/** A fenced shell block of the README: ```bash / ```sh, skipped when its info string says `no-run`. */
export interface ShellBlock {
  line: number;
  code: string;
  run: boolean;
  /** ```bash allow-errors: the block shows an error answer on purpose (curl does not fail on it). */
  allowErrors: boolean;
}

export function shellBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const fence = /^```(bash|sh|shell)([^\n]*)\n([\s\S]*?)^```$/gm;
  for (const match of markdown.matchAll(fence)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    blocks.push({
      line,
      code: match[3],
      run: !/\bno-run\b/.test(match[2]),
      allowErrors: /\ballow-errors\b/.test(match[2]),
    });
  }
  return blocks;
}

async function answers(url: string, child: ChildProcess, logs: string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited\n${logs.join('').slice(-3000)}`);
    if (
      await fetch(url).then(
        (r) => r.ok, // 200 only: another server on the port (a 404 or 400) is not this one
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer\n${logs.join('').slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issue 21 §5: every shell example of the README runs, in order, in one bash (`set -euo pipefail`, curl failing on
 * HTTP errors), against a stack run as `npm run dev` runs it: the compiled API, worker and Cloud API sandbox as
 * processes in development mode, a demo account whose credentials are in .data/demo-account.json of the examples'
 * working directory. Blocks fenced ```bash no-run are skipped (installing, starting servers, the operator CLI).
 */
describe('README examples', () => {
  let t: TestApp;
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  let workDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    t = await startTestApp();
    const [apiPort, sandboxPort] = await freePorts(2);
    const api = `http://127.0.0.1:${apiPort}`;
    const sandbox = `http://127.0.0.1:${sandboxPort}`;
    const stackEnv = {
      ...processEnv(t),
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      PORT: String(apiPort),
      WHATSAPP_API_BASE_URL: sandbox,
      ALLOW_PRIVATE_NETWORK_TARGETS: 'true', // the README's callbacks go to a receiver on 127.0.0.1
      RATE_LIMIT_PER_MINUTE: '1000',
    };
    const sandboxChild = spawnDist(
      'apps/sandbox/src/main.js',
      { ...stackEnv, SANDBOX_PORT: String(sandboxPort), SANDBOX_WEBHOOK_URL: `${api}/webhooks/whatsapp` },
      logs,
    );
    children.push(sandboxChild);
    children.push(spawnDist('apps/api/src/main.js', stackEnv, logs));
    children.push(spawnDist('apps/worker/src/main.js', stackEnv, logs));
    await answers(`${sandbox}/_sandbox/messages`, sandboxChild, logs);
    await answers(`${api}/health`, children[1], logs);

    // the demo account as `npm run dev` creates it (scripts/dev.ts), in the examples' working directory
    const demo = await t.createAccount({ name: 'Demo Shop', apiBaseUrl: sandbox });
    const user = await createUser(t.db, {
      accountId: demo.accountId,
      email: `demo+${demo.accountId}@switchboard.local`,
      role: 'admin',
    });
    workDir = mkdtempSync(join(tmpdir(), 'readme-'));
    mkdirSync(join(workDir, '.data'));
    writeFileSync(
      join(workDir, '.data', 'demo-account.json'),
      JSON.stringify({ ...demo, user: { email: user.email, password: user.password } }, null, 2),
    );
    env = { PATH: process.env.PATH, HOME: workDir, API: api, SANDBOX: sandbox };
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
    if (workDir) rmSync(workDir, { recursive: true, force: true });
    await t?.close();
  });

  it('run in order on a fresh stack, each block without an error', async () => {
    const blocks = shellBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const runnable = blocks.filter((b) => b.run);
    expect(runnable.length).toBeGreaterThan(10);
    const script = [
      'set -euo pipefail',
      // an HTTP error fails the example (its body is printed), unless the block is marked allow-errors
      'curl() { if [[ -n "${ALLOW_ERRORS:-}" ]]; then command curl --max-time 30 "$@"; else command curl --fail-with-body --max-time 30 "$@"; fi; }',
      ...runnable.map(
        (b) => `echo "### README.md line ${b.line}" >&2\nALLOW_ERRORS=${b.allowErrors ? 1 : ''}\n${b.code}`,
      ),
      'echo "### done" >&2',
    ].join('\n');
    const bash = spawn('bash', ['-c', script], {
      cwd: workDir,
      env: { ...env, RECEIVER_PORT: String(await freePort()) }, // chosen last, once the stack's own ports are bound
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    bash.stdout.on('data', (d) => (output += d));
    bash.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => process.kill(-bash.pid!, 'SIGKILL'), 90_000);
    const code = await new Promise<number | null>((resolve) => bash.once('exit', resolve));
    clearTimeout(timer);
    try {
      process.kill(-bash.pid!, 'SIGTERM'); // what the examples left running (the callback receiver)
    } catch {
      // nothing left
    }
    if (process.env.README_OUTPUT) writeFileSync(process.env.README_OUTPUT, output);
    const failedAt = [...output.matchAll(/### (README\.md line \d+)/g)].at(-1)?.[1];
    if (code !== 0 || !output.includes('### done')) {
      throw new Error(
        `the README's example at ${failedAt} failed (exit ${code}):\n${output.slice(-4000)}\n--- stack logs ---\n${logs.join('').slice(-2000)}`,
      );
    }
  }, 120_000);
});
