// Browser mode: the built renderer served on 127.0.0.1 and the API contract carried over a WebSocket.
// It holds the same security bar as the Electron shell: loopback only, a per-run token for the page and
// the socket, Host and Origin checks (no DNS rebinding, no cross-site WebSocket hijacking), no CORS.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  EVENT_NAMES,
  type ApiEvents,
  type ClientFrame,
  type EventName,
  type ServerFrame,
} from '@shared/contract';
import type { ApiHandlers } from '@shared/contract';
import { dispatch, type ApiEventBus } from '../api/dispatch';

export interface WebServerOptions {
  handlers: ApiHandlers;
  bus: ApiEventBus;
  rendererDir: string;
  port?: number;
  token?: string;
}

export interface WebServer {
  url: string;
  port: number;
  token: string;
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

const COOKIE = 'pdc_token';
const MAX_FRAME = 1024 * 1024;

export async function startWebServer(opts: WebServerOptions): Promise<WebServer> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  let port = 0;
  const allowedHosts = (): string[] => [`127.0.0.1:${port}`, `localhost:${port}`];
  const allowedOrigins = (): string[] => allowedHosts().map((h) => `http://${h}`);

  const tokenOk = (req: http.IncomingMessage, url: URL): boolean => {
    const given = url.searchParams.get('token') ?? readCookie(req.headers.cookie, COOKIE);
    return !!given && safeEqual(given, token);
  };

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err: Error) => {
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
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname.slice(1));
    const file = normalize(join(opts.rendererDir, rel));
    if (!file.startsWith(normalize(opts.rendererDir) + sep)) {
      res.writeHead(404).end();
      return;
    }
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'content-security-policy': contentSecurityPolicy(port),
    };
    if (rel === 'index.html') headers['set-cookie'] = `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const refuse = (code: number, why: string): void => {
      socket.end(`HTTP/1.1 ${code} ${why}\r\nconnection: close\r\n\r\n`);
    };
    if (!allowedHosts().includes(req.headers.host ?? '')) return refuse(421, 'Misdirected Request');
    if (!allowedOrigins().includes(req.headers.origin ?? '')) return refuse(403, 'Forbidden Origin');
    if (url.pathname !== '/api') return refuse(404, 'Not Found');
    if (!tokenOk(req, url)) return refuse(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws));
  });

  const sockets = new Set<WebSocket>();
  function attach(ws: WebSocket): void {
    sockets.add(ws);
    const send = (f: ServerFrame): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(f));
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
        ws.close(1003, 'frames must be JSON');
        return;
      }
      if (frame?.t !== 'req' || typeof frame.id !== 'number') {
        ws.close(1003, 'unexpected frame');
        return;
      }
      void dispatch(opts.handlers, frame.method, frame.args).then((envelope) =>
        send({ t: 'res', id: frame.id, envelope }),
      );
    });
    ws.on('close', () => {
      sockets.delete(ws);
      for (const off of listeners) off();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
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
