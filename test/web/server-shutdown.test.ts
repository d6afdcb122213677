// close() ends browser mode whatever the clients do: a refused upgrade whose client never reads or closes,
// an accepted socket that ignores the close frame and a half-sent HTTP request must not hold shutdown.
// (Before, a refused upgrade was end()ed but never destroyed, and server.close() waited for it forever.)
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { Core } from '../../src/main/core/core';
import { startWebServer } from '../../src/main/web/server';

/**
 * A socket that sends `text` and then never closes. `read: false` never reads either (so it never even
 * learns that the server hung up); `read: true` reads and ignores, so `ended` tells when the server ended it.
 */
async function holdSocket(port: number, text: string, read: boolean): Promise<{ ended: Promise<void> }> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => sock.once('connect', resolve));
  if (read) sock.on('data', () => undefined);
  else sock.pause();
  sock.write(text);
  const ended = new Promise<void>((resolve) => sock.once('close', () => resolve()));
  sock.on('error', () => undefined);
  return { ended };
}

const upgrade = (port: number, token: string, origin: string): string =>
  [
    `GET /api?token=${token} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `Origin: ${origin}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version: 13',
    '',
    '',
  ].join('\r\n');

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms),
    ),
  ]);
}

describe('browser mode shutdown', () => {
  it('closes with a refused upgrade, an ignored close frame and a half-sent request still held', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-web-close-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    const core = new Core({ shell: 'browser', version: 'test' });
    const server = await startWebServer({
      handlers: core.handlers() as never,
      bus: core,
      rendererDir: dir,
      log: () => undefined,
    });
    const { port, token } = server;
    const held = [];
    for (const read of [false, true]) {
      held.push(await holdSocket(port, upgrade(port, token, 'http://evil.example'), read));
      held.push(await holdSocket(port, upgrade(port, token, `http://127.0.0.1:${port}`), read));
      held.push(await holdSocket(port, `GET /?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`, read));
    }
    // Let the server see them all before it is asked to stop.
    await new Promise((r) => setTimeout(r, 200));
    await within(server.close(), 10_000, 'server.close()');
    // The reading ones (the second three) see the server end their connection.
    await within(Promise.all(held.slice(3).map((h) => h.ended)), 5000, 'the held sockets');
  });

  it('destroys a refused upgrade right away, without waiting for shutdown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-web-close-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    const core = new Core({ shell: 'browser', version: 'test' });
    const server = await startWebServer({ handlers: core.handlers() as never, bus: core, rendererDir: dir });
    try {
      const refused = await holdSocket(
        server.port,
        upgrade(server.port, server.token, 'http://evil.example'),
        true,
      );
      await within(refused.ended, 5000, 'the refused socket');
    } finally {
      await server.close();
    }
  });
});
