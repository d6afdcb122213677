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

/** One histogram's bucket bounds, ascending and distinct, and each bound's increase over the rate window. */
export interface BoundIncreases {
  le: Float64Array;
  n: Float64Array;
}

/**
 * One worker's window: per histogram name, its bounds' increases. Typed arrays, not a Map of bound to count: each
 * of a fleet's 32 workers makes one per histogram every scrape, and the role's sum adds them bound by bound — a
 * Map boxed every count it held (one heap number per bound per worker per round, ≈ 440 kB a fleet round).
 */
export type WindowBuckets = Map<string, BoundIncreases>;

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
 * the worker's whole evaluation and ~75 kB a scrape. This is one pass over the window's points, allocating only
 * the result.
 */
export function windowBuckets(cols: TargetColumns, windowMs: number, row = cols.rows - 1): WindowBuckets {
  const out: WindowBuckets = new Map();
  if (row < 0) return out;
  const t = cols.t;
  const firstRow = below(t, t[row] - windowMs);
  for (const g of GROUPS)
    for (const base of g.bases) {
      const series = cols.series(`${base}_bucket`);
      let inWindow = false;
      let m = 0;
      const le = scratch(series.length, 0);
      const n = scratch(series.length, 1);
      for (const s of series) {
        const lo = firstPoint(s, firstRow);
        const hi = lastPoint(s, row);
        if (hi < lo) continue;
        inWindow = true;
        const bound = parseLe(s.labels.le);
        if (hi === lo || Number.isNaN(bound)) continue;
        let inc = 0;
        for (let k = lo + 1; k <= hi; k++) inc += s.v[k] >= s.v[k - 1] ? s.v[k] - s.v[k - 1] : s.v[k];
        m = addAtBound(le, n, m, bound, inc);
      }
      if (!inWindow) continue;
      if (m > 0) out.set(base, { le: le.slice(0, m), n: n.slice(0, m) });
      break;
    }
  return out;
}

/**
 * Adds `inc` at `bound` in the first `m` entries of le/n, kept ascending by bound (series come in the
 * exposition's order, ascending per label set, so the insertion is at the end but for a second label set):
 * returns the new count of bounds.
 */
function addAtBound(le: Float64Array, n: Float64Array, m: number, bound: number, inc: number): number {
  let k = m;
  while (k > 0 && le[k - 1] > bound) k--;
  if (k > 0 && le[k - 1] === bound) {
    n[k - 1] += inc;
    return m;
  }
  le.copyWithin(k + 1, k, m);
  n.copyWithin(k + 1, k, m);
  le[k] = bound;
  n[k] = inc;
  return m + 1;
}

/** Two scratch arrays reused across calls (the module is single-threaded; results are copied out). */
const SCRATCH = [new Float64Array(64), new Float64Array(64)];

function scratch(size: number, which: 0 | 1): Float64Array {
  if (SCRATCH[which].length < size)
    SCRATCH[which] = new Float64Array(Math.max(size, SCRATCH[which].length * 2));
  return SCRATCH[which];
}

/** The index of a series' first value at row firstRow or later (its length when none). */
function firstPoint(s: AlignedSeries, firstRow: number): number {
  return s.rows ? below(s.rows, firstRow) : Math.max(0, firstRow - s.row0);
}

/** The index of a series' last value at row lastRow or earlier (−1 when none). */
function lastPoint(s: AlignedSeries, lastRow: number): number {
  return s.rows ? below(s.rows, lastRow + 1) - 1 : Math.min(s.v.length - 1, lastRow - s.row0);
}

/** How many of the ascending values (rows, or times) are below `r`: the first index at or after it. */
function below(rows: ArrayLike<number>, r: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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
    const { le, n, m } = sumByBound(workers, base);
    for (const [name, q] of g.signals) {
      const v = quantileOfSorted(q, le, n, m);
      if (v === v) out[name] = v;
    }
  }
  return out;
}

/**
 * The workers' increases of one histogram summed by bound: the first `m` entries of le/n (scratch arrays, read
 * before the next call). A role's workers serve the same bounds, so the sum is one add per bound and worker; a
 * worker with other bounds is merged in by bound.
 */
function sumByBound(
  workers: readonly WindowBuckets[],
  base: string,
): { le: Float64Array; n: Float64Array; m: number } {
  let size = 0;
  for (const w of workers) size += w.get(base)?.le.length ?? 0;
  const le = scratch(size, 0);
  const n = scratch(size, 1);
  let m = 0;
  for (const w of workers) {
    const b = w.get(base);
    if (!b) continue;
    if (m === 0) {
      le.set(b.le);
      n.set(b.n);
      m = b.le.length;
    } else if (sameBounds(le, m, b.le)) for (let k = 0; k < m; k++) n[k] += b.n[k];
    else for (let k = 0; k < b.le.length; k++) m = addAtBound(le, n, m, b.le[k], b.n[k]);
  }
  return { le, n, m };
}

function sameBounds(le: Float64Array, m: number, other: Float64Array): boolean {
  if (other.length !== m) return false;
  for (let k = 0; k < m; k++) if (le[k] !== other[k]) return false;
  return true;
}
