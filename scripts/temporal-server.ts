/**
 * A Temporal server on demand, for development and tests (`npm run temporal`, the jest global setup, `npm run dev --
 * --temporal`). Production points TEMPORAL_ADDRESS at its own cluster or Temporal Cloud and never calls this.
 *
 * 1. The `temporal` CLI: `$TEMPORAL_CLI` when set, else on PATH, else in the cache
 *    (`$XDG_CACHE_HOME/switchboard/temporal/bin`, default `~/.cache/switchboard/temporal/bin`), else built there with
 *    `go install` at the pinned version (GOMODCACHE in the cache too, so a second build is fast; a cold build takes
 *    several minutes). Without `go` it says so in one line. Nothing is committed to the repository.
 * 2. `temporal server start-dev --headless` (the real Temporal server with SQLite persistence) on free ports with its
 *    own SQLite file, then waits until the frontend answers and the namespace exists.
 *
 * Pinned to CLI v1.5.1 (Temporal server 1.29.1): from v1.6.0 on the CLI's go.mod has a `replace ./cliext` directive,
 * which `go install module@version` refuses (see STACK-NOTES.md).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePorts } from './free-ports';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
/** The Temporal server inside that CLI release (`go install` builds report the CLI itself as 0.0.0-DEV). */
export const TEMPORAL_SERVER_VERSION = '1.29.1';

export type Log = (line: string) => void;

export function temporalCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'switchboard', 'temporal');
}

const isExecutable = (path: string) => {
  try {
    return statSync(path).isFile() && (statSync(path).mode & 0o111) !== 0;
  } catch {
    return false;
  }
};

function onPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** `temporal --version` of a binary, e.g. "temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)". */
export function temporalVersion(binary: string): string | undefined {
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

export type TemporalBinary =
  | { path: string; source: 'env' | 'path' | 'cache' | 'built'; buildSeconds?: number }
  | { path?: undefined; reason: string };

/**
 * Finds the `temporal` CLI, building the pinned release into the cache when it is nowhere (and `build` is true).
 * Resolves `{reason}` (one line) when it cannot be had.
 */
export async function findTemporalBinary(
  options: { build?: boolean; log?: Log; env?: NodeJS.ProcessEnv } = {},
): Promise<TemporalBinary> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  if (env.TEMPORAL_CLI) {
    return isExecutable(env.TEMPORAL_CLI)
      ? { path: env.TEMPORAL_CLI, source: 'env' }
      : { reason: `TEMPORAL_CLI=${env.TEMPORAL_CLI} is not an executable file` };
  }
  const fromPath = onPath('temporal', env);
  if (fromPath) return { path: fromPath, source: 'path' };

  const cache = temporalCacheDir(env);
  const cached = join(cache, 'bin', 'temporal');
  if (isExecutable(cached) && temporalVersion(cached)?.includes(`Server ${TEMPORAL_SERVER_VERSION}`))
    return { path: cached, source: 'cache' };

  const go = onPath('go', env);
  if (!go)
    return {
      reason: `Temporal: no \`temporal\` on PATH or in ${join(cache, 'bin')}, and no \`go\` to build ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
    };
  if (options.build === false)
    return { reason: `Temporal: no \`temporal\` on PATH or in ${join(cache, 'bin')} (not building it)` };

  mkdirSync(join(cache, 'bin'), { recursive: true });
  log(
    `Temporal: building ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} with go install into ${join(cache, 'bin')} (a cold build takes several minutes; it is cached)`,
  );
  const startedAt = Date.now();
  const child = spawn(go, ['install', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], {
    env: { ...env, GOBIN: join(cache, 'bin'), GOMODCACHE: env.GOMODCACHE || join(cache, 'gomod'), GOFLAGS: '-mod=mod' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(-1));
    child.once('exit', resolve);
  });
  const buildSeconds = Math.round((Date.now() - startedAt) / 1000);
  if (code !== 0 || !isExecutable(cached)) {
    const lastLine =
      stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('go: downloading'))
        .pop() ?? `exit ${code}`;
    return { reason: `Temporal: go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} failed: ${lastLine}` };
  }
  log(`Temporal: built ${cached} in ${buildSeconds} s`);
  return { path: cached, source: 'built', buildSeconds };
}

export interface TemporalDevServer {
  /** host:port of the frontend (TEMPORAL_ADDRESS). */
  address: string;
  namespace: string;
  /** The web UI, unless headless. */
  uiUrl?: string;
  dbFile: string;
  binary: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface StartTemporalOptions {
  binary: string;
  log?: Log;
  /** Serve the web UI too (default: headless). */
  ui?: boolean;
  /** SQLite file; default: a new file in a temporary directory, removed on stop. */
  dbFile?: string;
  namespace?: string;
  /** How long to wait for the frontend (default 60 s). */
  readyTimeoutMs?: number;
}

/** Starts `temporal server start-dev` on free ports and resolves once its frontend answers for the namespace. */
export async function startTemporalDevServer(options: StartTemporalOptions): Promise<TemporalDevServer> {
  const log = options.log ?? (() => {});
  const namespace = options.namespace ?? 'default';
  const tempDir = options.dbFile ? undefined : mkdtempSync(join(tmpdir(), 'switchboard-temporal-'));
  const dbFile = options.dbFile ?? join(tempDir!, 'temporal.sqlite');
  const [port, httpPort, metricsPort, uiPort] = await freePorts(4);
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--http-port', String(httpPort)];
  args.push('--metrics-port', String(metricsPort), '--db-filename', dbFile, '--log-level', 'error');
  if (namespace !== 'default') args.push('--namespace', namespace); // "default" always exists
  // WAL without fsync per commit: survives the server being killed (not a power loss), several times faster here.
  args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=0');
  if (options.ui) args.push('--ui-port', String(uiPort));
  else args.push('--headless');

  const child = spawn(options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  let output = '';
  const keep = (d: Buffer) => (output = (output + String(d)).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited (${signal ?? code})`));
  child.once('error', (error) => (exited = error.message));

  const address = `127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    }
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };

  const startedAt = Date.now();
  try {
    await waitUntilReady(address, namespace, options.readyTimeoutMs ?? 60_000, () => exited);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output.trim().split('\n').slice(-10).join('\n')}`);
  }
  log(
    `Temporal: dev server ${address} ready in ${Date.now() - startedAt} ms (namespace ${namespace}, SQLite ${dbFile})`,
  );
  return {
    address,
    namespace,
    uiUrl: options.ui ? `http://127.0.0.1:${uiPort}` : undefined,
    dbFile,
    binary: options.binary,
    process: child,
    stop,
  };
}

/** Polls DescribeNamespace until the frontend answers (the dev server registers the namespace at start). */
async function waitUntilReady(
  address: string,
  namespace: string,
  timeoutMs: number,
  exited: () => string | undefined,
): Promise<void> {
  const { Connection } = await import('@temporalio/client');
  const deadline = Date.now() + timeoutMs;
  let last = 'not started';
  while (Date.now() < deadline) {
    const gone = exited();
    if (gone) throw new Error(`temporal server start-dev ${gone}`);
    const connection = Connection.lazy({ address, connectTimeout: 1000 });
    try {
      await connection.withDeadline(Date.now() + 2000, () =>
        connection.workflowService.describeNamespace({ namespace }),
      );
      return;
    } catch (error) {
      last = (error as Error).message;
    } finally {
      await connection.close().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Temporal dev server at ${address} not ready after ${timeoutMs} ms: ${last}`);
}

/** Finds (or builds) the CLI and starts a dev server; resolves `{reason}` when no binary can be had. */
export async function startTemporal(
  options: Omit<StartTemporalOptions, 'binary'> & { build?: boolean } = {},
): Promise<TemporalDevServer | { reason: string }> {
  const binary = await findTemporalBinary({ build: options.build, log: options.log });
  if (!('source' in binary)) return { reason: binary.reason };
  return startTemporalDevServer({ ...options, binary: binary.path });
}

/** `npm run temporal [-- --ui] [--db-filename file]`: a dev server until Ctrl-C. */
async function main() {
  const argv = process.argv.slice(2);
  const dbAt = argv.indexOf('--db-filename');
  const dbFile = dbAt >= 0 ? argv[dbAt + 1] : join(process.cwd(), '.data', 'temporal.sqlite');
  if (!existsSync(join(dbFile, '..'))) mkdirSync(join(dbFile, '..'), { recursive: true });
  const server = await startTemporal({ log: console.log, ui: argv.includes('--ui'), dbFile });
  if (!('address' in server)) {
    console.log(server.reason);
    process.exit(1);
  }
  console.log(
    `\nTEMPORAL_ADDRESS=${server.address}${server.uiUrl ? `\nTemporal UI: ${server.uiUrl}` : ''}\nCtrl-C stops it.\n`,
  );
  const shutdown = () => void server.stop().then(() => process.exit(0));
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  server.process.once('exit', (code) => {
    console.error(`temporal server exited (${code})`);
    process.exit(1);
  });
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
