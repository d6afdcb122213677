// Browser mode for the prom-history benchmark: the product's composition and web server, with the history
// service pointed at the real Prometheus the benchmark started (BENCH_PROM_URL), whose series carry the
// backfill's `target` label (test/support/prometheus-backfill.ts) — what discovery's job/instance labels
// are on a real host.
//   BENCH_PROM_URL=http://127.0.0.1:9090 node --import tsx bench/support/prom-history-web.ts
import { join } from 'node:path';
import { createApp } from '../../src/main/compose';
import { startWebServer } from '../../src/main/web/server';
import { PromHttpClient } from '../../src/main/core/prometheus/http-client';

async function main(): Promise<void> {
  const url = process.env.BENCH_PROM_URL;
  if (!url) throw new Error('BENCH_PROM_URL is not set');
  const app = createApp({ shell: 'browser', autoOpenDemo: true });
  const api = new PromHttpClient({ baseUrl: url, label: 'prometheus (benchmark, 7 d at 15 s)' });
  app.history.setPrometheus(async () => ({
    api,
    scrapeIntervalS: 15,
    selector: (role) => `target="${role}"`,
  }));
  const server = await startWebServer({
    handlers: app.handlers,
    bus: app.core,
    rendererDir: join(__dirname, '..', '..', 'out', 'renderer'),
  });
  process.stdout.write(`${server.url}\n`);
  await app.core.openDemo({});
  const stop = async (): Promise<void> => {
    api.dispose();
    await server.close();
    await app.shutdown();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

void main();
