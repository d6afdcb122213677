// What a client that stops reading costs browser mode's server. The server (bench/support/push-source-web.ts, a
// process of its own) gets the demo fleet's pushes (≈ 32 KiB/s) with one page that reads and one WebSocket that
// completed its upgrade and then never reads; thirty simulated minutes pass in seconds (the next minute's pushes
// go once the reading page has all of the last). Prints, per simulated minute, the server's RSS and JS heap after
// a full GC (unsent text frames wait in the socket as strings, on the heap) and what it holds queued for the
// non-reader. The HTTP runs print the memory of the server's Buffers too (file contents, unsent answers). Then the same for HTTP: connections that each ask for the largest
// static file (the 1.58 MB bundle) many times over, pipelined, and never read an answer.
//   npm run bench -- web-slow-client   (BENCH_SLOW_MINUTES=30 simulated minutes, BENCH_SLOW_HTTP_CONNECTIONS=50
//                                       connections, BENCH_SLOW_HTTP_REQUESTS=16,2000 requests each, one run each)
import { spawn } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

const MINUTES = Number(process.env.BENCH_SLOW_MINUTES ?? 30);
const HTTP_CONNECTIONS = Number(process.env.BENCH_SLOW_HTTP_CONNECTIONS ?? 50);
/** Requests per connection, one run each: within the server's pipelining cap (16 waiting), and far over it. */
const HTTP_REQUESTS = (process.env.BENCH_SLOW_HTTP_REQUESTS ?? '16,2000').split(',').map(Number);
/** Pushes per simulated second (test/support/fleet-pushes.ts). */
const PUSHES_PER_S = 4;
/** How long the held HTTP connections get to fill what the server will hold for them (a bench may wait). */
const HTTP_SETTLE_MS = 3000;

interface Stats {
  second: number;
  rssMB: number;
  heapUsedMB: number;
  externalMB: number;
  arrayBuffersMB: number;
  clients: { client: string; state: string; queuedBytes: number }[];
}

function startServer(): Promise<{
  port: number;
  token: string;
  ask: (cmd: string) => Promise<Stats>;
  stop: () => Promise<void>;
}> {
  const root = join(__dirname, '..');
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(__dirname, 'support', 'push-source-web.ts')],
    {
      cwd: root,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.node.json') },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! });
  let exited: Error | undefined;
  let waiting: ((line: string | Error) => void) | undefined;
  lines.on('line', (l) => waiting?.(l));
  child.once('exit', (code) => {
    exited = new Error(`the push source server exited (${code})`);
    waiting?.(exited);
  });
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      if (exited) return reject(exited);
      waiting = (l) => {
        waiting = undefined;
        if (l instanceof Error) reject(l);
        else resolve(l);
      };
    });
  return next().then((first) => {
    const { port, token } = JSON.parse(first) as { port: number; token: string };
    return {
      port,
      token,
      ask: async (cmd) => {
        const answer = next();
        child.stdin!.write(`${cmd}\n`);
        return JSON.parse(await answer) as Stats;
      },
      stop: async () => {
        child.stdin!.end();
        await new Promise((r) => child.once('exit', r));
      },
    };
  });
}

/** A page that reads: counts frames, and says when it has `n`. */
function reader(
  port: number,
  token: string,
): Promise<{ reach: (n: number) => Promise<void>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api?token=${token}`, {
      origin: `http://127.0.0.1:${port}`,
    });
    let received = 0;
    let waiting: { n: number; resolve: () => void } | undefined;
    ws.on('message', () => {
      received++;
      if (waiting && received >= waiting.n) {
        waiting.resolve();
        waiting = undefined;
      }
    });
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        reach: (n) => (received >= n ? Promise.resolve() : new Promise((r) => (waiting = { n, resolve: r }))),
        close: () => ws.close(),
      }),
    );
  });
}

/** A socket that sends `request` and never reads (the kernel's receive buffer fills, then the server's). */
async function neverReads(port: number, request: string): Promise<net.Socket> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.pause();
  sock.on('error', () => undefined);
  sock.write(request);
  return sock;
}

export async function runWebSlowClientBench(): Promise<void> {
  const line = (s: string): void => void process.stdout.write(`${s}\n`);
  const server = await startServer();
  const { port, token } = server;
  const base = await server.ask('stats');
  const page = await reader(port, token);
  const paused = await neverReads(
    port,
    [
      `GET /api?token=${token} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      `Origin: http://127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      '',
      '',
    ].join('\r\n'),
  );
  const pausedName = `${paused.localAddress}:${paused.localPort}`;
  line(`WebSocket: one page that reads, one client that never reads; the demo fleet's pushes (≈ 32 KiB/s)`);
  line(
    `${'simulated min'.padEnd(15)}${'server RSS MB'.padStart(14)}${'heap used MB'.padStart(14)}${'queued for the non-reader'.padStart(28)}`,
  );
  line(
    `${'0'.padEnd(15)}${base.rssMB.toFixed(1).padStart(14)}${base.heapUsedMB.toFixed(1).padStart(14)}${''.padStart(28)}`,
  );
  let first: Stats | undefined;
  let last = base;
  for (let m = 1; m <= MINUTES; m++) {
    last = await server.ask('push 60');
    await page.reach(m * 60 * PUSHES_PER_S);
    first ??= last;
    const c = last.clients.find((x) => x.client === pausedName);
    const queued = c
      ? `${(c.queuedBytes / 1024 / 1024).toFixed(2)} MB${c.state === 'open' ? '' : ` (${c.state})`}`
      : 'closed';
    if (m <= 10 || m % 5 === 0)
      line(
        `${String(m).padEnd(15)}${last.rssMB.toFixed(1).padStart(14)}${last.heapUsedMB.toFixed(1).padStart(14)}${queued.padStart(28)}`,
      );
  }
  line(
    `RSS growth over ${MINUTES} simulated min: ${(last.rssMB - base.rssMB).toFixed(1)} MB ` +
      `(after minute 1: ${(last.rssMB - first!.rssMB).toFixed(1)} MB)`,
  );
  page.close();
  paused.destroy();

  const asset = `GET /assets/app.js?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
  line(
    `HTTP: ${HTTP_CONNECTIONS} connections, each asking for the 1.58 MB bundle N times (pipelined), never reading`,
  );
  for (const requests of HTTP_REQUESTS) {
    const before = await server.ask('stats');
    const held: net.Socket[] = [];
    for (let i = 0; i < HTTP_CONNECTIONS; i++) held.push(await neverReads(port, asset.repeat(requests)));
    await new Promise((r) => setTimeout(r, HTTP_SETTLE_MS));
    const after = await server.ask('stats');
    const grew = after.rssMB - before.rssMB;
    line(
      `  N = ${String(requests).padEnd(6)} server RSS ${before.rssMB.toFixed(1)} → ${after.rssMB.toFixed(1)} MB ` +
        `(+${grew.toFixed(1)} MB, ${(grew / HTTP_CONNECTIONS).toFixed(2)} MB a connection), ` +
        `buffers ${before.arrayBuffersMB.toFixed(1)} → ${after.arrayBuffersMB.toFixed(1)} MB, ` +
        `heap used ${before.heapUsedMB.toFixed(1)} → ${after.heapUsedMB.toFixed(1)} MB`,
    );
    for (const s of held) s.destroy();
  }
  await server.stop();
}
