// Timings of the real charts as standard performance measures ("pdc:<chart>:<kind>", with chart, kind and
// point count in `detail`). The dashboard benchmark collects them with a PerformanceObserver of its own, so
// the product keeps no benchmark state: only the latest measure per name stays on the timeline.
export type PerfKind = 'first-paint' | 'scroll-in' | 'fetch' | 'live-update' | 'zoom' | 'zoom-refined';

export interface PerfRecord {
  chart: string;
  kind: PerfKind;
  ms: number;
  points: number;
}

export function recordPerf(chart: string, kind: PerfKind, ms: number, points: number): void {
  const name = `pdc:${chart}:${kind}`;
  try {
    // The performance timeline is not bounded by itself: keep one measure per name.
    performance.clearMeasures(name);
    performance.measure(name, {
      start: performance.now() - ms,
      duration: ms,
      detail: { chart, kind, points } satisfies Omit<PerfRecord, 'ms'>,
    });
  } catch {
    // performance.measure with options is missing in very old engines; timings are then simply not kept.
  }
}
