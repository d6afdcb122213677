// Browser mode: the built renderer served on 127.0.0.1 and the API contract carried over a WebSocket.
// It holds the same security bar as the Electron shell: loopback only, a per-run token for the page and
// the socket, Host and Origin checks (no DNS rebinding, no cross-site WebSocket hijacking), no CORS.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { constants as fsConstants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { extname, join, normalize, sep } from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  EVENT_NAMES,
  MAX_CLIENT_FRAME_BYTES,
  type ApiEvents,
  type ClientFrame,
  type EventName,
  type ServerFrame,
} from '@shared/contract';
import type { ApiHandlers } from '@shared/contract';
import { encodeServerFrame } from '@shared/wire-frame';
import { dispatch, type ApiEventBus } from '../api/dispatch';

export interface WebServerOptions {
  handlers: ApiHandlers;
  bus: ApiEventBus;
  rendererDir: string;
  /**
   * The backend's export folder (recordings exported as CSV, OpenMetrics, incident bundles): its files are served at
   * /exports/<name> as downloads, so the browser gets what the backend wrote on its own disk.
   */
  exportsDir?: string;
  port?: number;
  token?: string;
  /** One line per dropped client (bad frame, socket error); default stderr. */
  log?: (line: string) => void;
}

export interface WebServer {
  url: string;
  port: number;
  token: string;
  /** Each WebSocket client the server holds, and the bytes queued for it that the kernel has not taken yet. */
  clients(): { client: string; state: 'open' | 'closing'; queuedBytes: number }[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
};

/**
 * Most the server holds queued for one WebSocket client, beyond what the kernel's socket buffers took: a page
 * that stops reading (a frozen or stopped tab, a client that never reads) must not grow the backend. 8 MiB is
 * ≈ 4 min of the demo fleet's pushes (≈ 32 KiB/s) and many times the largest history answer a page asks for
 * (≈ 0.5 MB), so a page that is only busy for a while never reaches it. One frame larger than the bound still goes
 * to a client that has nothing queued, so the most held for a client is this or its largest single answer.
 */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/**
 * The close code for a client that fell behind (4000–4999 is for applications). Pushes cannot be skipped for it:
 * 'signals' rows, 'dashboard' changes and journal lines each build on the previous ones, so a page that missed one
 * shows wrong data until it fetches again. It gets what a reconnection gets instead: the page's bridge reconnects
 * by itself and fetches everything on screen again.
 */
export const CLOSE_FELL_BEHIND = 4000;

/** What an export is served as (by the names the exports give their files). */
const DOWNLOAD_TYPES: Record<string, string> = {
  '.csv': 'text/csv; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.gz': 'application/gzip',
};

const COOKIE = 'pdc_token';
/** The read-ahead of one static file being sent: what a client that stops reading can make the server hold. */
const STATIC_READ_AHEAD_BYTES = 16 * 1024;
/** Most requests that may wait on one connection behind another's answer (HTTP pipelining). */
const MAX_PIPELINED = 16;
/** How long close() lets open sockets finish before it destroys them. */
const CLOSE_GRACE_MS = 500;

export async function startWebServer(opts: WebServerOptions): Promise<WebServer> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const log = opts.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  let port = 0;
  const allowedHosts = (): string[] => [`127.0.0.1:${port}`, `localhost:${port}`];
  const allowedOrigins = (): string[] => allowedHosts().map((h) => `http://${h}`);

  const tokenOk = (req: http.IncomingMessage, url: URL): boolean => {
    const given = url.searchParams.get('token') ?? readCookie(req.headers.cookie, COOKIE);
    return !!given && safeEqual(given, token);
  };

  /** Requests waiting on each connection for the answers before theirs to go (HTTP pipelining). */
  const waiting = new WeakMap<Duplex, number>();
  /**
   * True once `res` is the answer its connection writes next; false if the connection closed first. Nothing is
   * read or built for a request before its turn, so a client that asks many times and reads nothing holds one
   * answer's read-ahead; and one with more than MAX_PIPELINED requests waiting is disconnected (browsers send one
   * request at a time on a connection).
   */
  function turnOf(req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
    if (res.socket) return Promise.resolve(true);
    const conn = req.socket;
    if (conn.destroyed) return Promise.resolve(false);
    const n = (waiting.get(conn) ?? 0) + 1;
    if (n > MAX_PIPELINED) {
      log(
        `pd-console web: closed HTTP client ${conn.remoteAddress}:${conn.remotePort}: more than ` +
          `${MAX_PIPELINED} requests waiting on one connection`,
      );
      conn.destroy();
      return Promise.resolve(false);
    }
    waiting.set(conn, n);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (turn: boolean): void => {
        if (settled) return;
        settled = true;
        waiting.set(conn, (waiting.get(conn) ?? 1) - 1);
        resolve(turn);
      };
      res.once('socket', () => settle(true));
      // Node ends the requests still waiting on a connection that closed with 'close' (no socket comes).
      req.once('close', () => settle(false));
    });
  }

  const server = http.createServer((req, res) => {
    const answer = async (): Promise<void> => {
      if (await turnOf(req, res)) await handle(req, res);
    };
    void answer().catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error: ${err.message}`);
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!allowedHosts().includes(req.headers.host ?? '')) {
      // A DNS-rebinding page reaches us with its own host name in Host.
      res.writeHead(421, { 'content-type': 'text/plain' }).end('misdirected request: unexpected Host header');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (!tokenOk(req, url)) {
      res
        .writeHead(401, { 'content-type': 'text/plain; charset=utf-8' })
        .end(
          'PD Console: this page needs the token printed by `npm run web` (open the full URL it printed).',
        );
      return;
    }
    let rel: string;
    try {
      rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname.slice(1));
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`bad request: the path ${url.pathname} has a malformed %-escape`);
      return;
    }
    const download = /^exports\/([^/]+)$/.exec(rel);
    if (download) {
      // One file directly in the export folder, by a name the exports give (no path, no dot-file).
      const name = download[1];
      if (!opts.exportsDir || !/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,250}$/.test(name)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      return sendFile(
        req,
        res,
        join(opts.exportsDir, name),
        name,
        {
          'content-type': DOWNLOAD_TYPES[extname(name)] ?? 'application/octet-stream',
          'content-disposition': `attachment; filename="${name}"`,
        },
        // A link placed in the folder does not lead out of it.
        fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW,
      );
    }
    const file = normalize(join(opts.rendererDir, rel));
    if (!file.startsWith(normalize(opts.rendererDir) + sep)) {
      res.writeHead(404).end();
      return;
    }
    const headers: http.OutgoingHttpHeaders = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    };
    if (rel === 'index.html') headers['set-cookie'] = `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    return sendFile(req, res, file, rel, headers, 'r');
  }

  /** A regular file, streamed at the pace the client reads, with the headers every answer carries. */
  async function sendFile(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    file: string,
    rel: string,
    own: http.OutgoingHttpHeaders,
    flags: string | number,
  ): Promise<void> {
    let fh: FileHandle;
    let size: number;
    try {
      fh = await open(file, flags);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new Error('not a regular file');
      size = st.size;
    } catch {
      await fh.close();
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {
      ...own,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'content-security-policy': contentSecurityPolicy(port),
    };
    headers['content-length'] = size;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      await fh.close();
      res.end();
      return;
    }
    // Streamed at the pace the client reads (the socket's backpressure), one read-ahead buffer at a time.
    await pipeline(fh.createReadStream({ highWaterMark: STATIC_READ_AHEAD_BYTES }), res).catch(
      (err: NodeJS.ErrnoException) => {
        // A client that leaves mid-file (a reload, a closed tab) is no fault of anyone's; anything else is logged.
        if (err.code !== 'ERR_STREAM_PREMATURE_CLOSE')
          log(`pd-console web: sending ${rel} failed: ${err.code ?? 'error'} ${err.message}`);
      },
    );
  }

  // Every raw connection, page or socket, so close() can end them all whatever a client does.
  const connections = new Set<Duplex>();
  server.on('connection', (socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES });
  server.on('upgrade', (req, socket, head) => {
    // Node hands the socket over without an 'error' listener: a reset here must not end the process.
    socket.on('error', () => socket.destroy());
    const refuse = (code: number, why: string): void => {
      // Destroyed once written: a client that never reads or closes must not hold the socket (and shutdown).
      socket.end(`HTTP/1.1 ${code} ${why}\r\nconnection: close\r\n\r\n`, () => socket.destroy());
    };
    if (!allowedHosts().includes(req.headers.host ?? '')) return refuse(421, 'Misdirected Request');
    if (!allowedOrigins().includes(req.headers.origin ?? '')) return refuse(403, 'Forbidden Origin');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (url.pathname !== '/api') return refuse(404, 'Not Found');
    if (!tokenOk(req, url)) return refuse(401, 'Unauthorized');
    const client = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws, client));
  });

  /** Every accepted WebSocket, and the client it serves (address:port) for log lines. */
  const sockets = new Map<WebSocket, string>();
  function attach(ws: WebSocket, client: string): void {
    sockets.set(ws, client);
    // A malformed frame (too big, bad UTF-8, reserved bits, unmasked…) makes ws emit 'error' and close this
    // socket with the matching code (1009, 1007, 1002…); without a listener that error would end the process.
    ws.on('error', (err: Error & { code?: string }) =>
      log(`pd-console web: dropped WebSocket client ${client}: ${err.code ?? 'error'} ${err.message}`),
    );
    const send = (f: ServerFrame): void => {
      if (ws.readyState !== ws.OPEN) return;
      // Text JSON, or one binary message for an answer with long runs of numbers (wire-frame.ts).
      const data = encodeServerFrame(f);
      const queued = ws.bufferedAmount;
      if (queued > 0) {
        const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
        if (queued + size > MAX_QUEUED_BYTES) return fellBehind(queued);
      }
      ws.send(data);
    };
    const fellBehind = (queued: number): void => {
      log(
        `pd-console web: closed WebSocket client ${client}: it stopped reading (${queued} bytes queued, ` +
          `limit ${MAX_QUEUED_BYTES}); its page reconnects and fetches again`,
      );
      // Behind what is queued, the close frame reaches a page that reads again; ws destroys the socket if the
      // client does not answer it within its close timeout.
      ws.close(CLOSE_FELL_BEHIND, 'this page fell behind the backend; reconnecting fetches everything again');
      for (const off of listeners) off();
    };
    const listeners = EVENT_NAMES.map((event) => {
      const l = (payload: ApiEvents[EventName]): void => send({ t: 'evt', event, payload });
      opts.bus.on(event, l as never);
      return () => opts.bus.off(event, l as never);
    });
    ws.on('message', (data) => {
      let frame: ClientFrame;
      try {
        frame = JSON.parse(String(data)) as ClientFrame;
      } catch {
        log(`pd-console web: dropped WebSocket client ${client}: a frame that is not JSON`);
        ws.close(1003, 'frames must be JSON');
        return;
      }
      if (frame?.t !== 'req' || typeof frame.id !== 'number') {
        log(`pd-console web: dropped WebSocket client ${client}: a frame that is not a request`);
        ws.close(1003, 'unexpected frame');
        return;
      }
      void dispatch(opts.handlers, frame.method, frame.args)
        .then((envelope) => send({ t: 'res', id: frame.id, envelope }))
        .catch((err: Error) =>
          // A result that cannot be serialised: the caller still gets an answer instead of waiting.
          send({
            t: 'res',
            id: frame.id,
            envelope: { ok: false, error: { code: 'internal', message: `${frame.method}: ${err.message}` } },
          }),
        );
    });
    ws.on('close', () => {
      sockets.delete(ws);
      for (const off of listeners) off();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, opts.port ?? 0)));
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    clients: () =>
      [...sockets].map(([s, client]) => ({
        client,
        state: s.readyState === s.OPEN ? 'open' : 'closing',
        queuedBytes: s.bufferedAmount,
      })),
    // Bounded whatever clients do: sockets get a close frame, then everything still open is destroyed.
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          for (const s of sockets.keys()) s.terminate();
          for (const c of connections) c.destroy();
          server.closeAllConnections();
        }, CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        for (const s of sockets.keys()) s.close(1001, 'PD Console is shutting down');
        wss.close();
        server.closeIdleConnections();
      }),
  };
}

export function contentSecurityPolicy(port: number): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    // Chart.js and React set inline styles on elements; no inline scripts are allowed.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    `connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}`,
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join('; ');
}

function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Node's listen errors in words an operator can act on: which port, why, and what to pass instead. */
function listenError(err: NodeJS.ErrnoException, port: number): Error {
  const where = `127.0.0.1:${port}`;
  if (err.code === 'EADDRINUSE')
    return new Error(
      `${where} is already in use (another PD Console, or another program): stop it, or pass another --port ` +
        '(leave --port out to take a free one)',
    );
  if (err.code === 'EACCES')
    return new Error(
      `not allowed to listen on ${where}: ports below 1024 need privileges; pass --port 1024 or above`,
    );
  return new Error(`cannot listen on ${where}: ${err.message}`);
}
