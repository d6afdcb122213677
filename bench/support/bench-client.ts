// The benchmarks' side of bench/support/bench-web.ts: how to start it, how to make it push live updates,
// and the page script that collects the renderer's chart timings (standard performance measures).
import { join } from 'node:path';
import type { WebApp } from '../../e2e/support/web-app';

const root = join(__dirname, '..', '..');

/**
 * Node arguments that start the benchmark composition instead of out/main/web.js (tsx compiles it; the
 * tsconfig import is how tsx learns the @shared path alias when loaded with --import).
 */
export const BENCH_WEB_ENTRY = ['--import', 'tsx', join(root, 'bench', 'support', 'bench-web.ts')];
export const BENCH_WEB_ENV = { TSX_TSCONFIG_PATH: join(root, 'tsconfig.node.json') };

/** Asks the backend for `n` one-second rows of `signals` from `t0` and waits until it sent them. */
export function pushSignals(app: WebApp, n: number, t0: number): Promise<void> {
  const before = app.output().length;
  app.proc.stdin!.write(`push ${n} ${t0}\n`);
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (app.output().slice(before).includes(`pushed ${n}`)) {
        clearInterval(timer);
        resolve();
      } else if (app.proc.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`the benchmark backend exited:\n${app.output()}`));
      }
    }, 20);
  });
}

/** Runs in the page before the app: every "pdc:" measure into window.__benchPerf. */
export function collectPerfScript(): void {
  const list: Array<{ chart: string; kind: string; ms: number; points: number; end: number }> = [];
  (window as unknown as { __benchPerf: typeof list }).__benchPerf = list;
  new PerformanceObserver((entries) => {
    for (const e of entries.getEntries()) {
      if (!e.name.startsWith('pdc:')) continue;
      const d = (e as PerformanceMeasure).detail as { chart: string; kind: string; points: number };
      list.push({
        chart: d.chart,
        kind: d.kind,
        ms: e.duration,
        points: d.points,
        end: e.startTime + e.duration,
      });
    }
  }).observe({ type: 'measure' });
}
