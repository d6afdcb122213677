// A TCP relay in front of a server that can turn into a black hole, as a network path that dies: every byte in
// flight and every new connection is swallowed (accepted, never answered) until it is restored. What an SSH
// client sees is a link that goes silent, not one that is refused.
import net from 'node:net';

export interface Blackhole {
  port: number;
  /** From now on nothing gets through, either way, on existing or new connections. */
  swallow(): void;
  /**
   * New connections get through again. The swallowed ones are closed, as the client would close them after its
   * keepalives went unanswered (which takes it up to 30 s): it reconnects at once.
   */
  restore(): void;
  close(): Promise<void>;
}

export async function tcpBlackhole(targetPort: number, host = '127.0.0.1'): Promise<Blackhole> {
  let dead = false;
  const pairs = new Set<{ a: net.Socket; b: net.Socket | null }>();
  const server = net.createServer((a) => {
    const pair: { a: net.Socket; b: net.Socket | null } = { a, b: null };
    pairs.add(pair);
    a.on('error', () => a.destroy());
    a.once('close', () => {
      pair.b?.destroy();
      pairs.delete(pair);
    });
    if (dead) return;
    const b = net.connect(targetPort, host);
    pair.b = b;
    b.on('error', () => a.destroy());
    b.once('close', () => a.destroy());
    a.on('data', (d) => {
      if (!dead) b.write(d);
    });
    b.on('data', (d) => {
      if (!dead) a.write(d);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('tcp blackhole: the relay has no TCP address');
  return {
    port: addr.port,
    swallow: () => {
      dead = true;
    },
    restore: () => {
      dead = false;
      for (const p of pairs) p.a.destroy();
    },
    close: async () => {
      for (const p of pairs) {
        p.a.destroy();
        p.b?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
