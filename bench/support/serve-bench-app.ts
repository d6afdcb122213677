// The product's web server in front of a benchmark's composition, stopped cleanly on SIGINT/SIGTERM (the bench
// kills its child that way and waits): what every bench/support/*-web.ts entry point shares. The URL line is
// what startWebApp-style readers wait for.
import { join } from 'node:path';
import type { App } from '../../src/main/compose';
import { startWebServer } from '../../src/main/web/server';

export async function serveBenchApp(
  app: App,
  what: string,
  beforeStop?: () => void,
): Promise<Awaited<ReturnType<typeof startWebServer>>> {
  const server = await startWebServer({
    handlers: app.handlers,
    bus: app.core,
    rendererDir: process.env.BENCH_RENDERER_DIR ?? join(__dirname, '..', '..', 'out', 'renderer'),
  });
  process.stdout.write(`PD Console (${what}) is serving on 127.0.0.1:${server.port}\n${server.url}\n`);
  const stop = async (): Promise<void> => {
    beforeStop?.();
    await server.close();
    await app.shutdown();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  return server;
}
