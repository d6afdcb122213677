// Timings of the real charts, as performance marks/measures and in window.__pdcPerf for the benchmark
// (bench/dashboard.ts reads them through the page). Cheap enough to stay on: one array push per event.
export type PerfKind = 'first-paint' | 'fetch' | 'live-update' | 'zoom' | 'zoom-refined';

export interface PerfRecord {
  chart: string;
  kind: PerfKind;
  ms: number;
  points: number;
}

declare global {
  interface Window {
    __pdcPerf?: PerfRecord[];
  }
}

const MAX = 20_000;

export function recordPerf(chart: string, kind: PerfKind, ms: number, points: number): void {
  const list = (window.__pdcPerf ??= []);
  if (list.length >= MAX) list.splice(0, list.length - MAX + 1);
  list.push({ chart, kind, ms, points });
  try {
    // Keep only the latest measure per name: the performance timeline is not bounded by itself.
    performance.clearMeasures(`pdc:${chart}:${kind}`);
    performance.measure(`pdc:${chart}:${kind}`, { start: performance.now() - ms, duration: ms });
  } catch {
    // performance.measure with options is missing in very old engines; the array above still has it.
  }
}
