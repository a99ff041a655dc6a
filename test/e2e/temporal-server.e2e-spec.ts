import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  findTemporalBinary,
  startTemporalDevServer,
  temporalCacheDir,
  TEMPORAL_CLI_MODULE,
  TEMPORAL_CLI_VERSION,
  TEMPORAL_SERVER_VERSION,
  temporalVersion,
} from '../../scripts/temporal-server';

/** scripts/temporal-server.ts: finding (or not) the CLI, and a dev server on free ports with its own SQLite file. */
describe('Temporal server on demand', () => {
  it('without a binary and without go: one line that says so', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'sb-no-temporal-'));
    const found = await findTemporalBinary({ env: { PATH: '', XDG_CACHE_HOME: cache, HOME: cache } });
    expect(found).toEqual({
      reason: `Temporal: no \`temporal\` on PATH or in ${join(cache, 'switchboard', 'temporal', 'bin')}, and no \`go\` to build ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
    });
  });

  it('TEMPORAL_CLI must be an executable file; the cache follows XDG_CACHE_HOME', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-temporal-cli-'));
    writeFileSync(join(dir, 'temporal'), 'not executable', { mode: 0o644 });
    expect(await findTemporalBinary({ env: { TEMPORAL_CLI: join(dir, 'temporal') } })).toEqual({
      reason: `TEMPORAL_CLI=${join(dir, 'temporal')} is not an executable file`,
    });
    expect(temporalCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/switchboard/temporal');
  });

  const serverAvailable = Boolean(process.env.SWITCHBOARD_TEST_TEMPORAL_ADDRESS);
  (serverAvailable ? it : it.skip)(
    'the binary of this run is the pinned server; a second dev server starts on free ports and removes its SQLite file on stop',
    async () => {
      const found = await findTemporalBinary({ build: false });
      expect('source' in found).toBe(true);
      const binary = (found as { path: string }).path;
      expect(temporalVersion(binary)).toContain(`Server ${TEMPORAL_SERVER_VERSION}`);
      const server = await startTemporalDevServer({ binary });
      try {
        expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
        expect(server.address).not.toBe(process.env.SWITCHBOARD_TEST_TEMPORAL_ADDRESS);
        expect(existsSync(server.dbFile)).toBe(true);
      } finally {
        await server.stop();
      }
      expect(existsSync(dirname(server.dbFile))).toBe(false);
      expect(server.process.exitCode !== null || server.process.signalCode !== null).toBe(true);
    },
    60_000,
  );
});
