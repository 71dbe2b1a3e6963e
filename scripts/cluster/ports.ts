import * as net from 'node:net';

/**
 * Free TCP ports on 127.0.0.1 below 32768: the Temporal server stores its membership ports as
 * smallint (ports above 32767 break cluster membership), and the kernel's ephemeral range (where port 0 lands) starts at 32768.
 * Ports are chosen at random in [10000, 32767] and checked by binding them; a port taken between
 * the check and the server's bind makes the start fail, and the caller tries again.
 */
export async function freeLowPorts(count: number, avoid: ReadonlySet<number> = new Set()): Promise<number[]> {
  const chosen = new Set<number>();
  for (let attempts = 0; chosen.size < count; attempts++) {
    if (attempts > count * 200) throw new Error(`found only ${chosen.size} of ${count} free ports below 32768`);
    const port = 10000 + Math.floor(Math.random() * 22768);
    if (chosen.has(port) || avoid.has(port)) continue;
    if (await canBind(port)) chosen.add(port);
  }
  return [...chosen];
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}
