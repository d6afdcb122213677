// Browser mode for the prom-history benchmark: the product's composition and web server, with the history
// service pointed at the real Prometheus the benchmark started (BENCH_PROM_URL), whose series carry the
// backfill's `target` label (test/support/prometheus-backfill.ts) — what discovery's job/instance labels
// are on a real host.
//   BENCH_PROM_URL=http://127.0.0.1:9090 node --import tsx bench/support/prom-history-web.ts
import { createApp } from '../../src/main/compose';
import { serveBenchApp } from './serve-bench-app';
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
  await serveBenchApp(app, 'history benchmark', () => api.dispose());
  await app.core.openDemo({});
}

void main();
