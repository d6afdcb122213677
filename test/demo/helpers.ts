// Test helpers for the demo host: a manual clock, an ssh2 client connected with the demo's keys, and HTTP
// over SSH port forwarding (the way the app scrapes /metrics).
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { Client, type ClientChannel } from 'ssh2';
import type { Clock, ClockTimer } from '../../src/main/core/clock';
import type { DemoHost } from '../../src/main/demo';

export const T0 = Date.UTC(2026, 10, 29, 16, 0, 0);

export interface ManualClock extends Clock {
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void;
}

export function manualClock(start = T0): ManualClock {
  let now = start;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms): ClockTimer {
      const id = next++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return { id };
    },
    clearTimeout(t) {
      timers.delete(t.id);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        let due: [number, { at: number; fn: () => void }] | null = null;
        for (const e of timers) if (e[1].at <= end && (!due || e[1].at < due[1].at)) due = e;
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = end;
    },
  };
}

export async function connect(
  host: DemoHost,
  extra: { username?: string; password?: string; privateKey?: string } = {},
): Promise<Client> {
  const c = new Client();
  await new Promise<void>((resolve, reject) => {
    c.once('ready', () => resolve());
    c.once('error', reject);
    c.connect({
      host: host.host,
      port: host.port,
      username: extra.username ?? host.username,
      ...(extra.password !== undefined
        ? { password: extra.password }
        : { privateKey: extra.privateKey ?? host.clientPrivateKey }),
      hostVerifier: (key: Buffer) => key.equals(host.hostKeyPublic),
      readyTimeout: 5000,
    });
  });
  return c;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  raw: Buffer;
}

export function exec(c: Client, command: string): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    c.exec(command, (err, stream) => {
      if (err) return reject(err);
      const out: Buffer[] = [];
      const errs: Buffer[] = [];
      let code: number | null = null;
      stream.on('data', (d: Buffer) => out.push(d));
      stream.stderr.on('data', (d: Buffer) => errs.push(d));
      stream.on('exit', (c2: number | null) => (code = c2));
      stream.on('close', () => {
        const raw = Buffer.concat(out);
        resolve({ stdout: raw.toString('utf8'), stderr: Buffer.concat(errs).toString('utf8'), code, raw });
      });
    });
  });
}

/** Opens a forwarded channel the way an http.Agent's createConnection would (socket methods as no-ops). */
export function forward(c: Client, port: number, address = '127.0.0.1'): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    c.forwardOut('127.0.0.1', 0, address, port, (err, ch) => {
      if (err) return reject(err);
      const s = ch as ClientChannel & Record<string, unknown>;
      for (const m of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref']) s[m] = () => s;
      resolve(ch);
    });
  });
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body as received (a gzip-encoded one stays compressed here; `body` is its UTF-8 decoding). */
  bytes: Buffer;
}

export function httpGet(
  c: Client,
  port: number,
  path: string,
  timeoutMs = 5000,
  address = '127.0.0.1',
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path,
        headers,
        // No agent: with createConnection set, the request then uses the forwarded channel as its socket.
        createConnection: (_opts: unknown, cb: (err: Error | null, s?: Duplex) => void) => {
          forward(c, port, address).then(
            (s) => cb(null, s),
            (e: Error) => cb(e),
          );
          return undefined;
        },
      } as http.RequestOptions,
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes.toString('utf8'), bytes });
        });
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`GET ${address}:${port}${path} timed out after ${timeoutMs} ms`)),
    );
    req.on('error', reject);
  });
}

/** Polls `fn` until it returns a truthy value or `ms` of real time passed. */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  ms: number,
  what: string,
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Parses `systemctl show` output into one record per unit. */
export function parseShow(text: string): Array<Record<string, string>> {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const rec: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) rec[line.slice(0, eq)] = line.slice(eq + 1);
      }
      return rec;
    });
}
