import { createServer, type Server } from 'node:net';

/**
 * `n` distinct free TCP ports on 127.0.0.1, for servers started next (tests, benches, the Temporal dev server).
 * All `n` are held open at once before any is released: asked one at a time, the OS may hand out a port it just took
 * back, and two servers of one stack were given the same port (the README test's API and sandbox, 2026-11-29).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => (s.listening ? s.close(resolve) : resolve(null)))));
  }
}

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}
