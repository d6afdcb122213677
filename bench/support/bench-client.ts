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

/**
 * Runs in the page before the app: every "pdc:" measure into window.__benchPerf, each with `frame`, when the
 * first animation frame after it began (a chart drawn in a long task is on screen only once the task ends).
 */
export function collectPerfScript(): void {
  type Rec = { chart: string; kind: string; ms: number; points: number; end: number; frame: number };
  const list: Rec[] = [];
  (window as unknown as { __benchPerf: typeof list }).__benchPerf = list;
  const measure = performance.measure.bind(performance);
  performance.measure = ((name: string, opts?: PerformanceMeasureOptions) => {
    const m = measure(name, opts);
    if (name.startsWith('pdc:')) {
      const d = m.detail as { chart: string; kind: string; points: number };
      const rec: Rec = {
        chart: d.chart,
        kind: d.kind,
        ms: m.duration,
        points: d.points,
        end: m.startTime + m.duration,
        frame: NaN,
      };
      list.push(rec);
      // The callback's own clock: the frame's timestamp is its vsync, which can fall inside the long task.
      requestAnimationFrame(() => (rec.frame = performance.now()));
    }
    return m;
  }) as typeof performance.measure;
}
