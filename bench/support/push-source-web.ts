// The product's web server fed by a synthetic push source at the demo fleet's rate and sizes
// (test/support/fleet-pushes.ts), in a process of its own so web-slow-client reads this server's memory alone.
// It serves a renderer folder holding an index.html and an asset the size of the built bundle (1.58 MB).
// Prints `{ port, token }` once listening, then answers each stdin command with one JSON line:
//   push N   N simulated seconds of pushes (one turn of the event loop each, as seconds would give), then stats
//   stats    after a full GC: rss, heap used, external and array buffers (Buffers; MB), and the server's clients()
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ApiEventBus } from '../../src/main/api/dispatch';
import { Core } from '../../src/main/core/core';
import { startWebServer } from '../../src/main/web/server';
import { fleetPushRound } from '../../test/support/fleet-pushes';

/** The size of out/renderer/assets/index-*.js when this bench was written. */
const ASSET_BYTES = 1_577_680;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-push-source-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>PD Console</title>');
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'assets', 'app.js'), Buffer.alloc(ASSET_BYTES, 0x61));
  const bus = new EventEmitter();
  const core = new Core({ shell: 'browser', version: 'bench' });
  const server = await startWebServer({
    handlers: core.handlers() as never,
    bus: bus as unknown as ApiEventBus,
    rendererDir: dir,
    log: (l) => void process.stderr.write(`${l}\n`),
  });
  const out = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
  out({ port: server.port, token: server.token });
  let second = 0;
  const stats = (): unknown => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    const mb = (n: number): number => Math.round((n / 1024 / 1024) * 10) / 10;
    return {
      second,
      rssMB: mb(m.rss),
      heapUsedMB: mb(m.heapUsed),
      externalMB: mb(m.external),
      arrayBuffersMB: mb(m.arrayBuffers),
      clients: server.clients(),
    };
  };
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'push') {
      for (let i = 0; i < Number(arg); i++, second++) {
        for (const { event, payload } of fleetPushRound(second)) bus.emit(event, payload);
        await new Promise((r) => setImmediate(r));
      }
      out(stats());
    } else if (cmd === 'stats') out(stats());
    else out({ error: `unknown command ${cmd}` });
  }
  await server.close();
  process.exit(0);
}

void main();
