// The exact quantiles of a fleet role: histogram_quantile(q, sum by (le) (increase(bucket[w]))) over the buckets
// of all its workers, as the specification reads one server's dp ranks and as the operator's Prometheus answers
// for the role (promql.ts: the role's matchers span every worker). The slowest worker's p99 is not the fleet's: a
// worker serving one slow request in a hundred would set the role's p99 while the fleet's is far lower, and the
// live chart would step where Prometheus history meets it.
//
// Each worker's scrape leaves the increase of every bucket over the rate window (windowBuckets, read from the
// worker's live columns when it is evaluated); the role's poll sums them by bound and reads the quantiles
// (fleetQuantiles). A renamed histogram (ITL, before it the legacy TPOT name) is read as the evaluator reads it
// per worker and as PromQL's `or` reads it for the role: the first name any worker has in the window.
import { SERVER_SIGNALS, type SignalSpec } from '@shared/signals/spec';
import { parseLe } from '../probes/sglang/series';
import type { AlignedSeries, TargetColumns } from '../review/target-columns';
import { quantileOfSorted } from '../review/window-math';

/** One worker's window: per histogram name, each bucket bound's increase over the rate window. */
export type WindowBuckets = Map<string, Map<number, number>>;

interface QuantileGroup {
  /** The histogram names, newest first. */
  bases: readonly string[];
  /** Signal name and quantile of each signal read from them. */
  signals: [string, number][];
}

/** The specification's quantile signals grouped by their histogram list (`ttft_p50_s`, `ttft_p99_s`, … of TTFT). */
const GROUPS: QuantileGroup[] = (() => {
  const by = new Map<string, QuantileGroup>();
  for (const [name, spec] of Object.entries(SERVER_SIGNALS) as [string, SignalSpec][]) {
    if (spec.kind !== 'quantile' || !spec.metrics || spec.q === undefined) continue;
    const key = spec.metrics.join('|');
    let g = by.get(key);
    if (!g) by.set(key, (g = { bases: spec.metrics, signals: [] }));
    g.signals.push([name, spec.q]);
  }
  return [...by.values()];
})();

/**
 * sum by (le) (increase(bucket[windowMs])) of each quantile histogram of one server at `row` (its newest by
 * default): the first of a group's names with a bucket point in the window, each bound whose series have two
 * points there. A histogram with no such bucket is left out.
 *
 * The window and the increase are window-math's (points with t in [t_row − w, t_row], a decrease is a reset), read
 * here per bound over the series' own values: windowSum sums across bounds, and one call per bound cost twice
 * the worker's whole evaluation and ~75 kB a scrape. This is one pass over the window's points, allocating none.
 */
export function windowBuckets(cols: TargetColumns, windowMs: number, row = cols.rows - 1): WindowBuckets {
  const out: WindowBuckets = new Map();
  if (row < 0) return out;
  const t = cols.t;
  const firstRow = firstAtOrAfter(t, t[row] - windowMs);
  for (const g of GROUPS)
    for (const base of g.bases) {
      const series = cols.series(`${base}_bucket`);
      const byLe = new Map<number, number>();
      let inWindow = false;
      for (const s of series) {
        const [lo, hi] = pointRange(s, firstRow, row);
        if (hi < lo) continue;
        inWindow = true;
        const le = parseLe(s.labels.le);
        if (hi === lo || Number.isNaN(le)) continue;
        let inc = 0;
        for (let k = lo + 1; k <= hi; k++) inc += s.v[k] >= s.v[k - 1] ? s.v[k] - s.v[k - 1] : s.v[k];
        byLe.set(le, (byLe.get(le) ?? 0) + inc);
      }
      if (!inWindow) continue;
      if (byLe.size > 0) out.set(base, byLe);
      break;
    }
  return out;
}

/** The first index whose time is at or after `from` (times ascending). */
function firstAtOrAfter(times: Float64Array, from: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The indices [lo, hi] of a series' values at rows firstRow..lastRow (hi < lo: none). */
function pointRange(s: AlignedSeries, firstRow: number, lastRow: number): [number, number] {
  if (!s.rows) return [Math.max(0, firstRow - s.row0), Math.min(s.v.length - 1, lastRow - s.row0)];
  const below = (r: number): number => {
    let lo = 0;
    let hi = s.rows!.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (s.rows![mid] < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return [below(firstRow), below(lastRow + 1) - 1];
}

/**
 * Each quantile signal of the role from its workers' window buckets summed by bound; a signal whose histogram no
 * worker has, or with no observation in the window, is left out (the role reads as not reported).
 */
export function fleetQuantiles(workers: readonly WindowBuckets[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const g of GROUPS) {
    const base = g.bases.find((b) => workers.some((w) => w.has(b)));
    if (base === undefined) continue;
    const merged = new Map<number, number>();
    for (const w of workers)
      for (const [le, n] of w.get(base) ?? []) merged.set(le, (merged.get(le) ?? 0) + n);
    const les = [...merged.keys()].sort((a, b) => a - b);
    const L = Float64Array.from(les);
    const C = Float64Array.from(les, (le) => merged.get(le)!);
    for (const [name, q] of g.signals) {
      const v = quantileOfSorted(q, L, C, les.length);
      if (v === v) out[name] = v;
    }
  }
  return out;
}
