// A WebSocket client that stops reading must not grow the backend: what the server holds queued for it stays
// under MAX_QUEUED_BYTES, and once it would pass that the client is closed with CLOSE_FELL_BEHIND (its page
// reconnects and fetches again), while a client that reads gets every push. Thirty minutes of the demo fleet's
// pushes (≈ 32 KiB/s, test/support/fleet-pushes.ts) are sent as fast as the reading client takes them.
// (Before, the server queued all of it: ≈ 60 MB held for one paused socket, and growing.)
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ApiEventBus } from '../../src/main/api/dispatch';
import { Core } from '../../src/main/core/core';
import {
  CLOSE_FELL_BEHIND,
  MAX_QUEUED_BYTES,
  startWebServer,
  type WebServer,
} from '../../src/main/web/server';
import { fleetPushRound } from '../support/fleet-pushes';

const SIMULATED_S = 30 * 60;

let server: WebServer;
/** The synthetic push source: the core's event bus as the server sees it. */
const bus = new EventEmitter();
const logged: string[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-web-slow-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html>');
  const core = new Core({ shell: 'browser', version: 'test' });
  server = await startWebServer({
    handlers: core.handlers() as never,
    bus: bus as unknown as ApiEventBus,
    rendererDir: dir,
    log: (l) => logged.push(l),
  });
});
afterAll(async () => {
  await server?.close();
});

/** A client that reads, like a page: counts the frames it received and says when it has `n`. */
function readingClient(): Promise<{
  ws: WebSocket;
  received: () => number;
  reach: (n: number) => Promise<void>;
}> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api?token=${server.token}`, {
      origin: `http://127.0.0.1:${server.port}`,
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
    ws.once('open', () =>
      resolve({
        ws,
        received: () => received,
        reach: (n) =>
          received >= n ? Promise.resolve() : new Promise<void>((r) => (waiting = { n, resolve: r })),
      }),
    );
    ws.once('error', reject);
  });
}

/** A raw TCP socket that completes the WebSocket upgrade the way the renderer does, then never reads. */
async function pausedClient(): Promise<net.Socket> {
  const sock = net.connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.write(
    [
      `GET /api?token=${server.token} HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      `Origin: http://127.0.0.1:${server.port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      '',
      '',
    ].join('\r\n'),
  );
  const head = await new Promise<Buffer>((resolve) => {
    let buf = Buffer.alloc(0);
    sock.on('data', function onData(d: Buffer) {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      sock.pause();
      if (buf.length > end + 4) sock.unshift(buf.subarray(end + 4));
      resolve(buf.subarray(0, end));
    });
  });
  expect(head.toString()).toMatch(/^HTTP\/1\.1 101 /);
  return sock;
}

/** Reads what the server sent a socket until its close frame: the bytes before it, and the code and reason. */
function readToClose(sock: net.Socket): Promise<{ bytes: number; code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let bytes = 0;
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        if (buf.length < 2) return;
        const opcode = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let at = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          at = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          at = 10;
        }
        if (buf.length < at + len) return;
        if (opcode === 0x8) {
          resolve({ bytes, code: buf.readUInt16BE(at), reason: buf.subarray(at + 2, at + len).toString() });
          sock.destroy();
          return;
        }
        bytes += at + len;
        buf = buf.subarray(at + len);
      }
    });
    sock.once('close', () =>
      reject(new Error(`the socket closed without a close frame after ${bytes} bytes`)),
    );
    sock.resume();
  });
}

/** What the kernel may hold for one loopback connection whatever the server does: send plus receive buffers. */
function kernelBufferBytes(): number {
  const max = (f: string): number => Number(readFileSync(f, 'utf8').trim().split(/\s+/)[2]);
  return max('/proc/sys/net/ipv4/tcp_wmem') + max('/proc/sys/net/ipv4/tcp_rmem');
}

describe('browser mode: a WebSocket client that stops reading', () => {
  it('queues at most MAX_QUEUED_BYTES for it, then closes it with CLOSE_FELL_BEHIND; readers get everything', async () => {
    const reader = await readingClient();
    const paused = await pausedClient();
    const pausedName = `${paused.localAddress}:${paused.localPort}`;
    // Wait for the server to hold both before pushing.
    await expect.poll(() => server.clients().length).toBe(2);

    let sent = 0;
    let sentBytes = 0;
    let peakPaused = 0;
    let peakReader = 0;
    let closedAt: number | undefined;
    for (let s = 0; s < SIMULATED_S; s++) {
      for (const { event, payload } of fleetPushRound(s)) {
        bus.emit(event, payload);
        sent++;
        sentBytes += Buffer.byteLength(JSON.stringify({ t: 'evt', event, payload }));
      }
      for (const c of server.clients()) {
        if (c.client === pausedName) {
          peakPaused = Math.max(peakPaused, c.queuedBytes);
          if (c.state === 'closing') closedAt ??= s;
        } else peakReader = Math.max(peakReader, c.queuedBytes);
      }
      // Simulated time moves on when a page that reads has taken this second's pushes.
      await reader.reach(sent);
    }

    expect(sentBytes).toBeGreaterThan(50 * 1024 * 1024);
    expect(peakPaused).toBeLessThanOrEqual(MAX_QUEUED_BYTES);
    expect(peakPaused).toBeGreaterThan(MAX_QUEUED_BYTES / 2);
    expect(closedAt, 'the paused client was closed').toBeDefined();
    expect(logged).toEqual([
      expect.stringMatching(
        new RegExp(
          `closed WebSocket client ${pausedName}: it stopped reading \\(\\d+ bytes queued, limit ${MAX_QUEUED_BYTES}\\)`,
        ),
      ),
    ]);
    // The page that reads got every push, and the server never held more than a round for it.
    expect(reader.received()).toBe(sent);
    expect(reader.ws.readyState).toBe(WebSocket.OPEN);
    expect(peakReader).toBeLessThan(1024 * 1024);

    // The paused client, reading again, gets what was queued (and what the kernel held), then the close frame.
    const end = await readToClose(paused);
    expect(end.code).toBe(CLOSE_FELL_BEHIND);
    expect(end.reason).toBe('this page fell behind the backend; reconnecting fetches everything again');
    expect(end.bytes).toBeLessThanOrEqual(MAX_QUEUED_BYTES + kernelBufferBytes());
    expect(end.bytes).toBeLessThan(sentBytes / 2);

    // A page closed this way comes back like any reconnection: a new socket is served.
    const again = await readingClient();
    bus.emit('signals', { deploymentId: 'demo-fleet', ts: 1, values: {} });
    await again.reach(1);
    again.ws.close();
    reader.ws.close();
  }, 120_000);
});
