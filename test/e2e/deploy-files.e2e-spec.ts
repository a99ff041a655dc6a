import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_NODE_FLAGS } from '../../apps/api/src/node-flags';
import { composeTool } from '../helpers/compose-tool';

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Instructions of a Dockerfile (continuation lines joined), per stage. */
function stagesOf(dockerfile: string): Array<{ from: string; name?: string; lines: string[] }> {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Array<{ from: string; name?: string; lines: string[] }> = [];
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.push({ from: from[1], name: from[2], lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

/**
 * The production image and compose file (docs/production.md "Deploying"), checked without a Docker engine: the
 * Dockerfile's rules by reading it, the compose file by `docker-compose config` (Debian's docker-compose, or the docker
 * CLI's compose plugin) with the settings it requires.
 */
describe('Deployment files', () => {
  const dockerfile = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
  const stages = stagesOf(dockerfile);
  const runtime = stages.at(-1)!;

  it('Dockerfile: multi-stage, pinned base images, production dependencies and built JS only, non-root, health check', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    for (const { from } of stages) expect(from).toMatch(/^node:\d+\.\d+\.\d+-[a-z-]+$/); // a full version, never latest
    const build = stages[0].lines.join('\n');
    expect(build).toMatch(/RUN npm run build/);
    expect(build).toMatch(/npm prune --omit=dev/);
    const final = runtime.lines.join('\n');
    expect(runtime.lines.filter((l) => /^COPY /.test(l))).toEqual([
      'COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./',
      'COPY --from=build --chown=node:node /app/node_modules ./node_modules',
      'COPY --from=build --chown=node:node /app/dist ./dist',
    ]);
    expect(final).not.toMatch(/^RUN npm (install|ci)/m);
    expect(runtime.lines.filter((l) => /^USER /.test(l))).toEqual(['USER node']);
    expect(final).toMatch(/^HEALTHCHECK .*CMD .*\/health/m);
    expect(final).toMatch(/^ENV NODE_ENV=production/m);
    // the API's node flags (apps/api/src/node-flags.ts) wherever it is started outside the TypeScript launchers
    const argv = ['node', '--enable-source-maps', ...API_NODE_FLAGS, 'dist/apps/api/src/main.js'];
    expect(final).toContain(`CMD [${argv.map((a) => `"${a}"`).join(', ')}]`);
    expect(readFileSync(join(ROOT, 'deploy', 'compose.production.yml'), 'utf8')).toContain(
      `command: [${argv.map((a) => `'${a}'`).join(', ')}]`,
    );
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['start:api']).toBe(argv.join(' '));
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.secrets', '.env', '.git']));
  });

  it('compose file: valid, every image pinned, migrations as a one-shot step before api and worker, secrets from files', async () => {
    const env = {
      ...process.env,
      POSTGRES_PASSWORD: 'pw',
      APP_URL: 'https://api.example.com',
      WHATSAPP_APP_SECRET: 'app-secret',
      WHATSAPP_VERIFY_TOKEN: 'verify',
    };
    const file = join(ROOT, 'deploy', 'compose.production.yml');
    const tool = composeTool();
    if (!tool) throw new Error('no compose tool: install Debian docker-compose (apt-get install -y docker-compose)');
    const config = async (vars: NodeJS.ProcessEnv) =>
      run(tool[0], [...tool.slice(1), '-f', file, 'config'], { env: vars, cwd: ROOT });
    const { stdout } = await config(env);
    const images = [...stdout.matchAll(/^\s+image: (\S+)$/gm)].map((m) => m[1]);
    expect(images.length).toBeGreaterThanOrEqual(7);
    for (const image of images) expect(image).toMatch(/:\d+(\.\d+)+$/);
    expect(stdout).toMatch(/migrate:[\s\S]*?dist\/scripts\/migrate\.js/);
    expect(stdout).toMatch(/condition: service_completed_successfully/);
    expect(stdout).toContain('ENCRYPTION_KEY_FILE: /run/secrets/encryption_key');
    for (const service of ['api', 'worker', 'migrate', 'postgres', 'redis', 'temporal'])
      expect(stdout).toMatch(new RegExp(`^  ${service}:$`, 'm'));

    // a required setting left out is named
    const { POSTGRES_PASSWORD: _omitted, ...withoutPassword } = env;
    await expect(config(withoutPassword)).rejects.toMatchObject({
      stderr: expect.stringContaining('set POSTGRES_PASSWORD'),
    });
  });
});
