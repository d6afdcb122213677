// The renderer's chart timings as a page sees them: every "pdc:" performance measure the charts record
// (src/renderer/src/charts/perf.ts), kept in window.__chartPerf for the test or benchmark to read, and which
// charts are on screen.
import type { Page } from '@playwright/test';

export interface ChartPerfRecord {
  chart: string;
  kind: string;
  ms: number;
  points: number;
  /** performance.now() when the measure ended. */
  end: number;
  /** performance.now() when the first animation frame after it began: the chart is on screen in that frame. */
  frame: number;
}

/**
 * Runs in the page (as an init script, or evaluated once it is loaded): every "pdc:" measure into
 * window.__chartPerf, each with `frame` (a chart drawn in a long task is on screen only once the task ends).
 */
export function collectPerfScript(): void {
  type Rec = { chart: string; kind: string; ms: number; points: number; end: number; frame: number };
  const list: Rec[] = [];
  (window as unknown as { __chartPerf: typeof list }).__chartPerf = list;
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

/**
 * The charts (their ids) whose canvas is in the viewport now: those the page draws first. One in the charts'
 * 100 px look-ahead below the screen is drawn when the page is idle, as those further down.
 */
export const chartsOnScreen = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    [...document.querySelectorAll('canvas[data-testid^="canvas-"]')]
      .filter((c) => {
        const r = c.getBoundingClientRect();
        return r.bottom > 0 && r.top < window.innerHeight;
      })
      .map((c) => c.getAttribute('data-testid')!.slice('canvas-'.length)),
  );
