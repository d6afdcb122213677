// Static files to a client that pipelines requests and reads slowly, or not at all: an answer is read from disk
// only when its turn on the connection comes, and streamed at the pace the client reads, so the server holds one
// read-ahead per connection instead of every answer asked for; a connection with more than 16 requests waiting
// is closed (browsers send one at a time). (Before, each request read the whole file at once: 16 connections
// asking 16 times for the 1.58 MB bundle made the server hold 330 MB of answers.)
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEventBus } from '../../src/main/api/dispatch';
import { Core } from '../../src/main/core/core';
import { startWebServer, type WebServer } from '../../src/main/web/server';

/** The size of the renderer's bundle (out/renderer/assets/index-*.js), the largest file browser mode serves. */
const ASSET_BYTES = 1_577_680;

let server: WebServer;
const logged: string[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-web-slow-http-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html>');
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'assets', 'app.js'), Buffer.alloc(ASSET_BYTES, 0x61));
  server = await startWebServer({
    handlers: new Core({ shell: 'browser', version: 'test' }).handlers() as never,
    bus: new EventEmitter() as unknown as ApiEventBus,
    rendererDir: dir,
    log: (l) => logged.push(l),
  });
});
afterAll(async () => {
  await server?.close();
});

const request = (): string =>
  `GET /assets/app.js?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`;

/** Opens a connection and sends `n` requests at once (pipelined). */
async function pipelined(n: number): Promise<net.Socket> {
  const sock = net.connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.write(request().repeat(n));
  return sock;
}

describe('browser mode: static files to clients that pipeline and read slowly', () => {
  it('holds one read-ahead per connection, not every answer asked for', async () => {
    const CONNECTIONS = 16;
    const REQUESTS = 16;
    const base = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const bodies = await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const sock = await pipelined(REQUESTS);
        return new Promise<number>((resolve, reject) => {
          let bytes = 0;
          let expected = Infinity;
          sock.on('data', (d: Buffer) => {
            // Buffers in this process: the server's file reads and unsent answers, and the client's chunks.
            peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
            // Every answer has the same head (Date keeps its length): the first one's says how long each is.
            if (bytes === 0) expected = REQUESTS * (d.indexOf('\r\n\r\n') + 4 + ASSET_BYTES);
            bytes += d.length;
            if (bytes >= expected) {
              sock.off('close', early);
              sock.destroy();
              resolve(bytes);
            }
          });
          const early = (): void => reject(new Error(`closed after ${bytes} of ${expected} bytes`));
          sock.once('close', early);
        });
      }),
    );
    for (const b of bodies) expect(b).toBeGreaterThan(REQUESTS * ASSET_BYTES);
    // 404 MB were served; the old server held most of it at once (330 MB), this one 32–56 MB (mostly the
    // clients' own chunks, this process being both ends).
    expect(peak).toBeLessThan(128 * 1024 * 1024);
    expect(logged).toEqual([]);
  });

  it('closes a connection with more than 16 requests waiting, and serves the next client', async () => {
    const sock = await pipelined(40);
    const name = `${sock.localAddress}:${sock.localPort}`;
    sock.on('error', () => undefined);
    sock.on('data', () => undefined);
    await new Promise<void>((resolve) => sock.once('close', () => resolve()));
    expect(logged).toEqual([
      `pd-console web: closed HTTP client ${name}: more than 16 requests waiting on one connection`,
    ]);
    const res = await fetch(`http://127.0.0.1:${server.port}/assets/app.js?token=${server.token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(ASSET_BYTES));
    expect((await res.arrayBuffer()).byteLength).toBe(ASSET_BYTES);
  });
});
