// Browser mode as the benchmarks run it: the product's own composition and web server, plus what only a
// benchmark needs, kept out of the product: a day of synthetic history written into the dashboard's signal
// store when the demo opens (BENCH_HISTORY_HOURS), a memory log line every 5 s (BENCH_MEMLOG), and bursts of
// `signals` events on request (a line "push N" on stdin), which reach the page over the real WebSocket.
//   node --import tsx bench/support/bench-web.ts [--demo-speed X]
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createApp } from '../../src/main/compose';
import { serveBenchApp } from './serve-bench-app';
import { fillSyntheticHistory } from './synthetic-history';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const speedAt = argv.indexOf('--demo-speed');
  const demoSpeed = speedAt >= 0 ? Number(argv[speedAt + 1]) : undefined;
  const app = createApp({ shell: 'browser', autoOpenDemo: true, demoSpeed });
  const hours = Number(process.env.BENCH_HISTORY_HOURS ?? 0);
  app.core.hooks.on('opened', ({ deploymentId, host, deployment }) => {
    if (host.kind !== 'demo' || !(hours > 0)) return;
    const now = app.core.now;
    fillSyntheticHistory(app.dashboard.store, deploymentId, {
      fromMs: now - hours * 3_600_000,
      toMs: now - 1000,
      roles: deployment.services.map((s) => s.role),
      gpus: deployment.services.flatMap((s) => s.gpus ?? []),
    });
  });
  await serveBenchApp(app, 'benchmark composition');
  await app.core.openDemo({});
  const memlog = process.env.BENCH_MEMLOG;
  if (memlog)
    setInterval(() => {
      const m = process.memoryUsage();
      appendFileSync(
        memlog,
        JSON.stringify({ t: Date.now(), rss: m.rss, heapUsed: m.heapUsed, external: m.external }) + '\n',
      );
    }, 5000).unref();
  // "push N T0": N one-second rows of a KV wave starting at T0, as the live path would deliver them.
  createInterface({ input: process.stdin }).on('line', (line) => {
    const m = /^push (\d+) (\d+)$/.exec(line.trim());
    if (!m) return;
    const [n, t0] = [Number(m[1]), Number(m[2])];
    for (let k = 0; k < n; k++) app.core.emit('signals', benchRow(t0 + k * 1000, k));
    process.stdout.write(`pushed ${n}\n`);
  });
}

function benchRow(
  ts: number,
  k: number,
): { deploymentId: string; ts: number; values: Record<string, number> } {
  const wave = 0.5 + 0.4 * Math.sin(k / 50);
  const values: Record<string, number> = {};
  for (const role of ['prefill', 'decode']) {
    const cap = role === 'decode' ? 2_580_000 : 447_416;
    values[`${role}.kv_ratio`] = wave;
    values[`${role}.kv_used`] = Math.round(wave * cap);
    values[`${role}.kv_capacity`] = cap;
    values[`${role}.kv_evictable`] = Math.round(0.05 * cap);
    values[`${role}.kv_free`] = Math.round((0.95 - wave) * cap);
  }
  return { deploymentId: 'demo', ts, values };
}

void main();
