import { execFileSync, spawnSync } from 'node:child_process';

const answers = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

/** `docker compose` (the CLI plugin) or `docker-compose`, whichever answers; null when neither does. */
export function composeTool(): string[] | null {
  if (answers('docker', ['compose', 'version'])) return ['docker', 'compose'];
  if (answers('docker-compose', ['version'])) return ['docker-compose'];
  return null;
}

/** Installs Debian's docker-compose when no compose tool answers and we are root (as ensureChromium does). */
export function ensureComposeTool(log: (line: string) => void = () => undefined): void {
  if (composeTool()) return;
  if (process.getuid?.() !== 0)
    throw new Error('no compose tool: install Debian docker-compose (apt-get install -y docker-compose)');
  log('Installing Debian docker-compose for the deployment files test (apt-get install -y docker-compose)...');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'docker-compose'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
