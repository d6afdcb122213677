// Non-GET HTTP through the SSH tunnel, for the router's worker management API (DELETE/POST /workers).
// Bounded like httpGet: a real-time timeout and a response size cap; no redirects (a write must not wander).
import http from 'node:http';
import { systemClock } from '../clock';
import { HttpError } from '../ssh/http-agent';

export interface HttpWriteResult {
  status: number;
  body: string;
}

export function httpRequest(
  agent: http.Agent,
  method: 'POST' | 'DELETE' | 'PATCH' | 'PUT',
  url: string,
  body?: unknown,
  opts: { timeoutMs?: number; maxBytes?: number } = {},
): Promise<HttpWriteResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? 256 * 1024;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: Error | null, value?: HttpWriteResult): void => {
      if (done) return;
      done = true;
      systemClock.clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const u = new URL(url);
    const req = http.request(
      {
        agent,
        host: u.hostname,
        port: u.port || 80,
        path: u.pathname + u.search,
        method,
        headers: {
          accept: 'application/json',
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(payload.length) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            finish(new HttpError(`${method} ${url}: response larger than ${maxBytes} bytes`, 'too-large'));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () =>
          finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (e) => finish(new HttpError(`${method} ${url}: ${e.message}`, 'network')));
      },
    );
    const timer = systemClock.setTimeout(
      () => finish(new HttpError(`${method} ${url}: no answer within ${timeoutMs / 1000} s`, 'timeout')),
      timeoutMs,
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      finish(
        new HttpError(`${method} ${url}: ${e.message}`, e.code === 'ECONNREFUSED' ? 'refused' : 'network'),
      ),
    );
    req.end(payload);
  });
}
