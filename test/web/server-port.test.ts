// A port already taken (a second PD Console on the same --port) is said in words with what to do, instead of
// Node's EADDRINUSE stack trace after "serving on" was already printed.
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Core } from '../../src/main/core/core';
import { startWebServer } from '../../src/main/web/server';

describe('browser mode on a port already in use', () => {
  it('rejects with the port and the --port advice, and leaves the other listener alone', async () => {
    const other = net.createServer((s) => s.end('other\n'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as net.AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'pdc-web-port-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    const core = new Core({ shell: 'browser', version: 'test' });
    try {
      const refused = await startWebServer({
        handlers: core.handlers() as never,
        bus: core,
        rendererDir: dir,
        port,
        log: () => undefined,
      }).then(
        () => null,
        (err: Error) => err.message,
      );
      expect(refused).toContain(`127.0.0.1:${port} is already in use`);
      expect(refused).toMatch(/pass another --port/);
      // The program that holds the port still answers.
      const reply = await new Promise<string>((resolve) => {
        const c = net.connect(port, '127.0.0.1');
        c.on('data', (d) => resolve(d.toString()));
      });
      expect(reply).toBe('other\n');
    } finally {
      await core.shutdown();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});
