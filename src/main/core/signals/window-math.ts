// Windowed counter math over the columns of one target (the live store's last minutes, or a whole recording),
// with Prometheus semantics: at row i the window holds each series' points with t in [t_i − w, t_i]; increase
// sums positive steps and treats a decrease as a reset; a series needs two points in the window to count. Rows
// are evaluated from `from` on (the live push asks only for the newest). Prefix sums of the per-step increases
// and two pointers per series make each row O(series) instead of O(series × points).
import { parseLe } from '../probes/sglang/series';
import type { AlignedSeries, TargetColumns } from '../review/target-columns';
import { f64, i32, u8 } from './scratch-arrays';

export type LabelFilter = (labels: Record<string, string>) => boolean;

/**
 * A series prepared for window scans: the time of each value and the running sum of its increases. Values and
 * increases are read at `off + k` of their buffers, so the live columns hand over their own buffers instead of
 * a view of each per series per scrape; the times are a view, which series over the same rows share.
 */
export interface Prepared {
  readonly times: Float64Array;
  readonly prefixBuf: Float64Array;
  readonly vBuf: Float64Array;
  readonly off: number;
}

const prepared = new WeakMap<AlignedSeries, Prepared>();

/**
 * Hands the window scans a series' point times and running increases already kept by its owner (the live
 * columns maintain them as scrapes arrive), so a scan does not recompute them: `prefix[k]` is the sum of the
 * increases up to point k (a decrease counts as a reset) at `prefixBuf[off + k]`, its value at `vBuf[off + k]`,
 * `times[k]` the time of point k. The owner keeps `source` current (the live columns refresh it every scrape);
 * it is read at each scan.
 */
export function seedPrepared(s: AlignedSeries, source: Prepared): void {
  prepared.set(s, source);
}

function prepare(axis: Float64Array, s: AlignedSeries): Prepared {
  let p = prepared.get(s);
  if (p) return p;
  const m = s.v.length;
  let times: Float64Array;
  if (s.rows) {
    times = new Float64Array(m);
    for (let k = 0; k < m; k++) times[k] = axis[s.rows[k]];
  } else times = axis.subarray(s.row0, s.row0 + m);
  const prefix = new Float64Array(m);
  const v = s.v;
  for (let k = 1; k < m; k++) {
    const prev = v[k - 1];
    const cur = v[k];
    prefix[k] = prefix[k - 1] + (cur >= prev ? cur - prev : cur);
  }
  p = { times, prefixBuf: prefix, vBuf: s.v, off: 0 };
  prepared.set(s, p);
  return p;
}

/**
 * Walks the rows of a target keeping, per series, the index range [lo, hi] of its points in the window. Series
 * present over the same rows (most of them: every bucket of a histogram) share one range, so a row costs one
 * pointer update per distinct time axis, not per series.
 */
class WindowWalk {
  /** Per group: the range of point indices in the window. */
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  /** Per series: its group. */
  readonly group: Int32Array;
  readonly p: Prepared[];
  private readonly times: Float64Array[];

  constructor(
    private readonly axis: Float64Array,
    series: readonly AlignedSeries[],
    private readonly windowMs: number,
  ) {
    const m = series.length;
    this.p = new Array<Prepared>(m);
    this.group = i32(m);
    this.times = [];
    // Series over the same contiguous rows share a group, keyed by (first row, length) as one number; the
    // buckets of a histogram come one after the other, so the previous series' group is tried first.
    let keys: Map<number, number> | undefined;
    let lastKey = -1;
    let lastGroup = -1;
    for (let j = 0; j < m; j++) {
      const s = series[j];
      const p = (this.p[j] = prepare(axis, s));
      let g: number;
      if (s.rows) {
        g = this.times.length;
        this.times.push(p.times);
      } else {
        // The point count from the times, which the series of a group share (its values need no view here).
        const key = s.row0 * GROUP_KEY_SPAN + p.times.length;
        if (key === lastKey) g = lastGroup;
        else {
          keys ??= new Map();
          const known = keys.get(key);
          if (known === undefined) {
            keys.set(key, (g = this.times.length));
            this.times.push(p.times);
          } else g = known;
          lastKey = key;
          lastGroup = g;
        }
      }
      this.group[j] = g;
    }
    this.lo = i32(this.times.length);
    this.hi = i32(this.times.length, -1);
  }

  /** Moves every window to end at row i (rows must be visited in ascending order). */
  to(i: number): void {
    const end = this.axis[i];
    const from = end - this.windowMs;
    for (let g = 0; g < this.times.length; g++) {
      const times = this.times[g];
      const n = times.length;
      // A walk over every row moves each edge by a point or so; the live push starts at its newest row, where
      // stepping from the first point would cost the whole window: a longer move is a bisection.
      let hi = this.hi[g];
      if (hi + 1 < n && times[hi + 1] <= end) {
        hi++;
        if (hi + 1 < n && times[hi + 1] <= end) hi = lastAtOrBefore(times, end, hi + 1, n - 1);
      }
      let lo = this.lo[g];
      if (lo <= hi && times[lo] < from) {
        lo++;
        if (lo <= hi && times[lo] < from) lo = firstAtOrAfter(times, from, lo + 1, hi + 1);
      }
      this.hi[g] = hi;
      this.lo[g] = lo;
    }
  }

  /** Points of series j in the window. */
  count(j: number): number {
    const g = this.group[j];
    return this.hi[g] - this.lo[g] + 1;
  }

  increase(j: number): number {
    const g = this.group[j];
    const p = this.p[j];
    return p.prefixBuf[p.off + this.hi[g]] - p.prefixBuf[p.off + this.lo[g]];
  }

  /** Seconds between the first and last point of series j in the window. */
  seconds(j: number): number {
    const g = this.group[j];
    const t = this.p[j].times;
    return (t[this.hi[g]] - t[this.lo[g]]) / 1000;
  }

  latest(j: number): number {
    const p = this.p[j];
    return p.vBuf[p.off + this.hi[this.group[j]]];
  }
}

/** (first row, length) of a contiguous series as one number: both stay far below 2^26 (776 days at 1 s). */
const GROUP_KEY_SPAN = 2 ** 26;

/** The last k in [lo, hi] with times[k] <= t, given times[lo] <= t (times ascending). */
function lastAtOrBefore(times: Float64Array, t: number, lo: number, hi: number): number {
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (times[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The first k in [lo, end) with times[k] >= t, or end when there is none (times ascending). */
function firstAtOrAfter(times: Float64Array, t: number, lo: number, end: number): number {
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function pick(cols: TargetColumns, name: string, filter?: LabelFilter): AlignedSeries[] {
  const all = cols.series(name);
  return filter ? all.filter((s) => filter(s.labels)) : all;
}

/**
 * sum(increase(name[w])) (or sum(rate(name[w])) with `rate`) at every row; NaN where no series has two points
 * in the window — derived.ts's sumIncrease / sumRate returning null.
 */
export function windowSum(
  cols: TargetColumns,
  name: string,
  windowMs: number,
  opts: { rate?: boolean; filter?: LabelFilter; from?: number } = {},
): Float64Array {
  const n = cols.rows;
  const out = f64(n, NaN);
  const series = pick(cols, name, opts.filter);
  if (series.length === 0) return out;
  const w = new WindowWalk(cols.t, series, windowMs);
  for (let i = opts.from ?? 0; i < n; i++) {
    w.to(i);
    let total = 0;
    let any = false;
    for (let j = 0; j < series.length; j++) {
      if (w.count(j) < 2) continue;
      if (opts.rate) {
        const secs = w.seconds(j);
        if (!(secs > 0)) continue;
        total += w.increase(j) / secs;
      } else total += w.increase(j);
      any = true;
    }
    if (any) out[i] = total;
  }
  return out;
}

/** 1 where at least one series of `name` (passing `filter`) has a point in the window, else 0. */
export function anyInWindow(
  cols: TargetColumns,
  name: string,
  windowMs: number,
  filter?: LabelFilter,
  from = 0,
): Uint8Array {
  const n = cols.rows;
  const out = u8(n);
  const series = pick(cols, name, filter);
  if (series.length === 0) return out;
  const w = new WindowWalk(cols.t, series, windowMs);
  for (let i = from; i < n; i++) {
    w.to(i);
    for (let j = 0; j < series.length; j++)
      if (w.count(j) > 0) {
        out[i] = 1;
        break;
      }
  }
  return out;
}

/** The latest value in the window of each series of `name` that has one, per row (for gauge-era figures). */
export function latestInWindow(
  cols: TargetColumns,
  name: string,
  windowMs: number,
  each: (i: number, latest: { labels: Record<string, string>; value: number }[]) => void,
  from = 0,
): void {
  const series = cols.series(name);
  if (series.length === 0) return;
  const w = new WindowWalk(cols.t, series, windowMs);
  const buf: { labels: Record<string, string>; value: number }[] = [];
  for (let i = from; i < cols.rows; i++) {
    w.to(i);
    buf.length = 0;
    for (let j = 0; j < series.length; j++)
      if (w.count(j) > 0) buf.push({ labels: series[j].labels, value: w.latest(j) });
    if (buf.length) each(i, buf);
  }
}

/** The bucket series of a histogram with a bound, the distinct bounds ascending, and each series' bound. */
interface BucketPlan {
  /** The list it was made from (element by element), to tell whether it still applies. */
  from: readonly AlignedSeries[];
  series: AlignedSeries[];
  les: number[];
  leIndex: Int32Array;
}

/**
 * Plans by the first series of their list. The live columns hand the same series objects every scrape (and
 * a series' labels never change), so the bounds are parsed and sorted once per set of buckets, not per scrape.
 */
const plans = new WeakMap<AlignedSeries, BucketPlan>();

function bucketPlan(all: readonly AlignedSeries[], filter?: LabelFilter): BucketPlan {
  const memo = !filter && all.length > 0;
  if (memo) {
    const known = plans.get(all[0]);
    if (known && sameList(known.from, all)) return known;
  }
  const series: AlignedSeries[] = [];
  const bounds: number[] = [];
  for (const s of all) {
    if (filter && !filter(s.labels)) continue;
    const le = parseLe(s.labels.le);
    if (Number.isNaN(le)) continue;
    series.push(s);
    bounds.push(le);
  }
  const les = [...new Set(bounds)].sort((a, b) => a - b);
  const slot = new Map(les.map((le, b) => [le, b]));
  const plan: BucketPlan = {
    from: all.slice(),
    series,
    les,
    leIndex: Int32Array.from(bounds, (le) => slot.get(le)!),
  };
  if (memo) plans.set(all[0], plan);
  return plan;
}

function sameList(a: readonly AlignedSeries[], b: readonly AlignedSeries[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * histogram_quantile(q, sum by (le) (increase(base_bucket[w]))) at every row, for each q in `qs`; NaN where the
 * live code says null (no bucket series with two points, or no observation in the window).
 */
export function windowQuantiles(
  cols: TargetColumns,
  base: string,
  qs: readonly number[],
  windowMs: number,
  filter?: LabelFilter,
  from = 0,
): Float64Array[] {
  const n = cols.rows;
  const outs = qs.map(() => f64(n, NaN));
  const plan = bucketPlan(cols.series(`${base}_bucket`), filter);
  const { series, les, leIndex } = plan;
  if (series.length === 0) return outs;
  const counts = f64(les.length);
  const present = u8(les.length);
  const L = f64(les.length);
  const C = f64(les.length);
  const w = new WindowWalk(cols.t, series, windowMs);
  const { lo, hi, group } = w;
  for (let i = from; i < n; i++) {
    w.to(i);
    counts.fill(0);
    present.fill(0);
    let any = false;
    for (let j = 0; j < series.length; j++) {
      const g = group[j];
      const h = hi[g];
      const l = lo[g];
      if (h - l < 1) continue;
      const { prefixBuf, off } = w.p[j];
      counts[leIndex[j]] += prefixBuf[off + h] - prefixBuf[off + l];
      present[leIndex[j]] = 1;
      any = true;
    }
    if (!any) continue;
    let m = 0;
    for (let b = 0; b < les.length; b++)
      if (present[b]) {
        L[m] = les[b];
        C[m++] = counts[b];
      }
    for (let q = 0; q < qs.length; q++) outs[q][i] = quantileOfSorted(qs[q], L, C, m);
  }
  return outs;
}

/**
 * histogramQuantile (derived.ts, Prometheus' bucketQuantile) for buckets already sorted by distinct bound:
 * bounds L[0..m), cumulative counts C[0..m) (C is not modified: monotonicity is applied on the fly).
 */
export function quantileOfSorted(q: number, L: Float64Array, C: Float64Array, m: number): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  if (m === 0 || L[m - 1] !== Infinity || m < 2) return NaN;
  // Counts are forced monotonic (each bucket at least the one below it), so the +Inf bucket holds the maximum.
  let observations = C[0];
  for (let b = 1; b < m; b++) if (C[b] > observations) observations = C[b];
  if (!(observations > 0)) return NaN;
  let rank = q * observations;
  let b = -1;
  let running = -Infinity;
  let prevRunning = 0;
  for (let k = 0; k < m - 1; k++) {
    const c = Math.max(running, C[k]);
    if (c >= rank) {
      b = k;
      running = c;
      break;
    }
    prevRunning = c;
    running = c;
  }
  if (b === -1) return L[m - 2];
  if (b === 0 && L[0] <= 0) return L[0];
  let start = 0;
  let count = running;
  if (b > 0) {
    start = L[b - 1];
    count -= prevRunning;
    rank -= prevRunning;
  }
  return start + (L[b] - start) * (rank / count);
}
