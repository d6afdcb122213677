// The benchmarks' side of bench/support/bench-web.ts: how to start it and how to make it push live updates.
// The page script that collects the renderer's chart timings is e2e/support/chart-perf.ts.
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
