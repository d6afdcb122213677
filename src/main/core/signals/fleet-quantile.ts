// The exact quantiles of a fleet role: histogram_quantile(q, sum by (le) (increase(bucket[w]))) over the buckets
// of all its workers, as the specification reads one server's dp ranks and as the operator's Prometheus answers
// for the role (promql.ts: the role's matchers span every worker). The slowest worker's p99 is not the fleet's: a
// worker serving one slow request in a hundred would set the role's p99 while the fleet's is far lower, and the
// live chart would step where Prometheus history meets it.
//
// Each worker's scrape leaves the increase of every bucket over the rate window (its WindowBucketCursor, rewound
// onto the worker's live columns when it is evaluated); the role's poll sums them by bound and reads the quantiles
// (fleetQuantiles). Review reads a fleet recording with the same two, a cursor per worker moved poll by poll
// (review/fleet-data.ts), so a role's quantiles in review are the ones live showed. A renamed histogram (ITL,
// before it the legacy TPOT name) is read as the evaluator reads it per worker and as PromQL's `or` reads it for
// the role: the first name any worker has in the window.
import { SERVER_SIGNALS, type SignalSpec } from '@shared/signals/spec';
import { parseLe } from '../probes/sglang/series';
import { isBuffered, type AlignedSeries, type TargetColumns } from '../review/target-columns';
import { quantileOfSorted } from './window-math';

interface QuantileGroup {
  /** The histograms' bucket series names (`…_bucket`), newest histogram name first. */
  buckets: readonly string[];
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
    if (!g) by.set(key, (g = { buckets: spec.metrics.map((b) => `${b}_bucket`), signals: [] }));
    g.signals.push([name, spec.q]);
  }
  return [...by.values()];
})();

/**
 * One worker's window: per quantile group (GROUPS order), the histogram read — the first of the group's names
 * with a bucket point in the window; −1 when none is, or when none of its bounds has two points there — and per
 * name its bounds ascending with each bound's increase over the window (NaN: no series of the bound has two
 * points in it).
 */
export interface WindowBuckets {
  readonly groups: readonly { base: number; readonly bases: readonly BoundIncreases[] }[];
}

interface BoundIncreases {
  readonly les: Float64Array;
  readonly inc: Float64Array;
}

/** A histogram name the server does not have: nothing to slide, no bound (shared, never written). */
const NO_SERIES = { series: [], out: { les: new Float64Array(0), inc: new Float64Array(0) } };

/** One bucket series' points in the window, [lo, hi], and the sum of its increases from lo to hi. */
interface SeriesWindow {
  s: AlignedSeries;
  /** Index of its bound in its histogram's `les`; −1 for a bound that does not parse. */
  le: number;
  lo: number;
  hi: number;
  sum: number;
}

/**
 * sum by (le) (increase(bucket[windowMs])) of each quantile histogram of one server at the rows it is moved to,
 * in ascending order: live rewinds one per worker and moves it to the newest row of every scrape, review one per
 * worker along the whole recording, poll by poll. The window and the increase are window-math's (points with
 * t in [t_row − w, t_row], a decrease is a reset), read per bound over the series' own values: windowSum sums
 * across bounds, and one call per bound cost twice the worker's whole evaluation and ~75 kB a scrape.
 *
 * The window slides: each point enters it once and leaves it once, adding and then subtracting its increase, so
 * a 24 h review costs one pass over the points, not one window per poll. Bucket counts are integers, so the
 * running sums are exact and equal to summing the window afresh, which is what live and review both get.
 */
export class WindowBucketCursor {
  private readonly bases: { series: SeriesWindow[]; out: BoundIncreases }[][];
  private firstRow = 0;
  private row = -1;
  readonly buckets: WindowBuckets;

  constructor(
    private cols: TargetColumns,
    private readonly windowMs: number,
  ) {
    this.bases = GROUPS.map((g) =>
      g.buckets.map((name) => {
        const list = cols.series(name);
        // Most servers lack one name of a renamed histogram, and live builds a cursor every scrape.
        if (list.length === 0) return NO_SERIES;
        const parsed = list.map((s) => parseLe(s.labels.le));
        const les = Float64Array.from(new Set(parsed.filter((le) => !Number.isNaN(le)))).sort();
        const index = new Map<number, number>();
        les.forEach((le, k) => index.set(le, k));
        const series = list.map((s, k) => ({ s, le: index.get(parsed[k]) ?? -1, lo: 0, hi: -1, sum: 0 }));
        return { series, out: { les, inc: new Float64Array(les.length).fill(NaN) } };
      }),
    );
    this.buckets = { groups: this.bases.map((b) => ({ base: -1, bases: b.map((x) => x.out) })) };
  }

  /**
   * Back to the start, over `cols`: the next scrape's columns of the same live series (the same AlignedSeries
   * objects, refreshed in place, in the same order: the caller checks the live columns' series generation).
   * Live rewinds a worker's cursor every scrape instead of building one: parsing the bounds and pairing the
   * series with them was most of the role quantiles' cost.
   */
  rewind(cols: TargetColumns): this {
    this.cols = cols;
    this.firstRow = 0;
    this.row = -1;
    for (const bases of this.bases)
      for (const { series } of bases)
        for (const w of series) {
          w.lo = 0;
          w.hi = -1;
          w.sum = 0;
        }
    return this;
  }

  /** The window ending at `row` (at or after the last one asked for); the same `buckets`, updated. */
  at(row: number): WindowBuckets {
    if (row < this.row) throw new Error(`window buckets asked for row ${row} after row ${this.row}`);
    this.row = row;
    const t = this.cols.t;
    while (this.firstRow < row && t[this.firstRow] < t[row] - this.windowMs) this.firstRow++;
    this.bases.forEach((bases, g) => {
      const group = this.buckets.groups[g];
      group.base = -1;
      for (let b = 0; b < bases.length; b++) {
        const { series, out } = bases[b];
        out.inc.fill(NaN);
        let inWindow = false;
        let withIncrease = false;
        for (const w of series) {
          slide(w, this.firstRow, row);
          if (w.hi < w.lo) continue;
          inWindow = true;
          if (w.hi === w.lo || w.le < 0) continue;
          withIncrease = true;
          const c = out.inc[w.le];
          out.inc[w.le] = (c === c ? c : 0) + w.sum;
        }
        if (!inWindow) continue;
        if (withIncrease) group.base = b;
        break;
      }
    });
    return this.buckets;
  }
}

/** Moves a series' window to its points at rows firstRow..lastRow, keeping the sum of their increases. */
function slide(w: SeriesWindow, firstRow: number, lastRow: number): void {
  const s = w.s;
  const { rows, row0 } = s;
  // The live columns' values in their own buffer (no view per bucket per scrape); review's as they are.
  const v = isBuffered(s) ? s.vBuf : s.v;
  const o = isBuffered(s) ? s.off : 0;
  const n = isBuffered(s) ? s.count : v.length;
  let { lo, hi, sum } = w;
  // A series without gaps has its points at rows row0, row0 + 1, …: the window's ends are known at once.
  const hiTo = rows ? hi : Math.min(n - 1, lastRow - row0);
  while (rows ? hi + 1 < n && rows[hi + 1] <= lastRow : hi < hiTo) {
    hi++;
    if (hi > lo) sum += v[o + hi] >= v[o + hi - 1] ? v[o + hi] - v[o + hi - 1] : v[o + hi];
  }
  const loTo = rows ? lo : Math.min(n, firstRow - row0);
  while (rows ? lo < n && rows[lo] < firstRow : lo < loTo) {
    lo++;
    if (lo <= hi) sum -= v[o + lo] >= v[o + lo - 1] ? v[o + lo] - v[o + lo - 1] : v[o + lo];
  }
  w.lo = lo;
  w.hi = hi;
  w.sum = sum;
}

/**
 * Each quantile signal of the role from its workers' window buckets summed by bound; a signal whose histogram no
 * worker has, or with no observation in the window, is left out (the role reads as not reported).
 */
export function fleetQuantiles(workers: readonly WindowBuckets[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (let gi = 0; gi < GROUPS.length; gi++) {
    // The first name any worker reads, as PromQL's `or` reads the role.
    let base = Infinity;
    for (const w of workers) {
      const b = w.groups[gi].base;
      if (b >= 0 && b < base) base = b;
    }
    if (base === Infinity) continue;
    picked.length = 0;
    for (const w of workers) if (w.groups[gi].base === base) picked.push(w.groups[gi].bases[base]);
    const m = mergeBounds(picked);
    for (const [name, q] of GROUPS[gi].signals) {
      const v = quantileOfSorted(q, merged.L, merged.C, m);
      if (v === v) out[name] = v;
    }
  }
  return out;
}

/**
 * The merge's scratch, used again by every call (review merges at every poll of a recording): the workers'
 * histograms being merged, and the bounds, ascending, with their summed increases.
 */
const picked: BoundIncreases[] = [];
const merged = { L: new Float64Array(64), C: new Float64Array(64), pos: new Int32Array(8) };

/** Sums the workers' increases by bound into `merged` (bounds without an increase left out); returns how many. */
function mergeBounds(list: readonly BoundIncreases[]): number {
  let cap = 0;
  for (const x of list) cap += x.les.length;
  if (merged.L.length < cap) {
    merged.L = new Float64Array(cap);
    merged.C = new Float64Array(cap);
  }
  const { L, C } = merged;
  let m = 0;
  // The workers of a role serve the same buckets: summed bound by bound.
  if (list.every((x) => sameBounds(x.les, list[0].les))) {
    const les = list[0].les;
    for (let b = 0; b < les.length; b++) {
      let c = 0;
      let any = false;
      for (const x of list) {
        const n = x.inc[b];
        if (n === n) {
          c += n;
          any = true;
        }
      }
      if (!any) continue;
      L[m] = les[b];
      C[m++] = c;
    }
    return m;
  }
  if (merged.pos.length < list.length) merged.pos = new Int32Array(list.length);
  const pos = merged.pos.fill(0, 0, list.length);
  for (;;) {
    // The lowest bound with an increase at any worker's position, then every worker's increase at it.
    let le = Infinity;
    let any = false;
    for (let j = 0; j < list.length; j++) {
      const x = list[j];
      while (pos[j] < x.les.length && !(x.inc[pos[j]] === x.inc[pos[j]])) pos[j]++;
      if (pos[j] < x.les.length && (!any || x.les[pos[j]] < le)) {
        le = x.les[pos[j]];
        any = true;
      }
    }
    if (!any) return m;
    let c = 0;
    for (let j = 0; j < list.length; j++) {
      const x = list[j];
      if (pos[j] < x.les.length && x.les[pos[j]] === le) c += x.inc[pos[j]++];
    }
    L[m] = le;
    C[m++] = c;
  }
}

function sameBounds(a: Float64Array, b: Float64Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}
