// Non-GET HTTP through the SSH tunnel, for the router's worker management API (DELETE/POST /workers).
// Bounded like httpGet: a real-time timeout and a response size cap; no redirects (a write must not wander).
import http from 'node:http';
import { boundedRequest } from '../ssh/http-agent';

export interface HttpWriteResult {
  status: number;
  body: string;
}

export async function httpRequest(
  agent: http.Agent,
  method: 'POST' | 'DELETE' | 'PATCH' | 'PUT',
  url: string,
  body?: unknown,
  opts: { timeoutMs?: number; maxBytes?: number } = {},
): Promise<HttpWriteResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? 256 * 1024;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  const res = await boundedRequest(
    agent,
    {
      method,
      url,
      headers: {
        accept: 'application/json',
        ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
      },
      ...(payload ? { body: payload } : {}),
    },
    { timeoutMs, maxBytes },
    {
      tooLarge: `${method} ${url}: response larger than ${maxBytes} bytes`,
      timeout: `${method} ${url}: no answer within ${timeoutMs / 1000} s`,
      failed: (e) => `${method} ${url}: ${e.message}`,
    },
  );
  return { status: res.status, body: res.body };
}
