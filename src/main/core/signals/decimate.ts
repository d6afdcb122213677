// Min-max decimation of the columns of a ColumnRing over a time range, in core, before anything crosses
// a transport: per time bucket the lowest and the highest value are kept (in time order), so a one-second
// KV spike still shows on a 24 h chart. Gaps survive too: a bucket that holds a NaN, and any stretch
// without rows longer than the gap threshold, come out as null.
//
// A bucket is a span of time, so where each bucket starts depends on the ring's time column only: it is
// found once per ring and window (`bucketRows`, a binary search per bucket) and shared by every key of the
// request, and each key is then one pass of compares over contiguous typed-array slices. Before, every key
// divided every row's time again, which cost ≈ 1–3.5 ms per key for a day of rows.
import type { ColumnRing } from './column-ring';

export interface DecimatedColumn {
  t: number[];
  v: (number | null)[];
}

/** Where the buckets of rows [lo, hi) start; the same for every column of the ring. */
export interface RowBuckets {
  lo: number;
  hi: number;
  /**
   * Logical row at which each non-empty bucket starts, then `hi`; null when the span has no more rows than
   * points asked (every row is kept).
   */
  starts: Int32Array | null;
  /** Time width of one bucket (0 when every row is kept); a step of 2.5 widths is a gap. */
  widthMs: number;
}

/**
 * Buckets for rows [lo, hi) of a ring's time column `t` (logical row k at physical (start + k) mod
 * capacity), about `maxPoints / 2` of them when there are more rows than `maxPoints`. Row k belongs to bucket
 * ⌊(t_k − t_lo) / width⌋ (the last bucket takes the end); that is monotone in k, so each bucket's first row
 * is a binary search.
 */
export function bucketRows(
  t: ArrayLike<number>,
  start: number,
  capacity: number,
  lo: number,
  hi: number,
  maxPoints: number,
): RowBuckets {
  if (hi - lo <= maxPoints) return { lo, hi, starts: null, widthMs: 0 };
  const at = (k: number): number => {
    const i = start + k;
    return i >= capacity ? i - capacity : i;
  };
  const buckets = Math.max(1, Math.floor(maxPoints / 2));
  const t0 = t[at(lo)];
  const width = (t[at(hi - 1)] - t0 + 1) / buckets;
  const bucketOf = (k: number): number => Math.min(buckets - 1, Math.floor((t[at(k)] - t0) / width));
  const starts: number[] = [lo];
  let k = lo;
  while (k < hi) {
    // First row past the bucket of row k.
    const b = bucketOf(k);
    let a = k + 1;
    let z = hi;
    while (a < z) {
      const mid = (a + z) >>> 1;
      if (bucketOf(mid) > b) z = mid;
      else a = mid + 1;
    }
    starts.push(a);
    k = a;
  }
  return { lo, hi, starts: Int32Array.from(starts), widthMs: width };
}

/** One column over the buckets of its ring: min, max and the first NaN of each bucket, in time order. */
export function decimateBuckets(
  t: ArrayLike<number>,
  col: ArrayLike<number>,
  start: number,
  capacity: number,
  buckets: RowBuckets,
  gapMs: number,
): DecimatedColumn {
  const { lo, hi, starts } = buckets;
  const out: DecimatedColumn = { t: [], v: [] };
  if (hi <= lo) return out;
  if (!starts) {
    for (let k = lo, i = phys(start, capacity, lo); k < hi; k++, i = i + 1 === capacity ? 0 : i + 1)
      push(out, t[i], col[i]);
    return withGaps(out, gapMs);
  }
  const picks = [0, 0, 0];
  for (let j = 0; j + 1 < starts.length; j++) {
    const a = phys(start, capacity, starts[j]);
    const n = starts[j + 1] - starts[j];
    // A bucket is at most two contiguous slices: the ring may wrap inside it.
    const end1 = Math.min(capacity, a + n);
    scan(col, a, end1);
    if (end1 - a < n) scanMore(col, 0, n - (end1 - a));
    let count = 0;
    if (minI >= 0) picks[count++] = minI;
    if (maxI >= 0 && maxI !== minI) picks[count++] = maxI;
    if (nanI >= 0) picks[count++] = nanI;
    // In time order (the lowest and highest come in whichever order they happened); equal times keep
    // min, max, NaN order.
    for (let x = 1; x < count; x++)
      for (let y = x; y > 0 && t[picks[y]] < t[picks[y - 1]]; y--) {
        const s = picks[y];
        picks[y] = picks[y - 1];
        picks[y - 1] = s;
      }
    for (let x = 0; x < count; x++) push(out, t[picks[x]], col[picks[x]]);
  }
  return withGaps(out, Math.max(gapMs, 2.5 * buckets.widthMs));
}

// The running state of one bucket's scan, kept in module variables so the inner loop allocates nothing.
let minV = Infinity;
let maxV = -Infinity;
let minI = -1;
let maxI = -1;
let nanI = -1;

/** Starts a bucket and scans physical rows [from, to) of `col`. */
function scan(col: ArrayLike<number>, from: number, to: number): void {
  minV = Infinity;
  maxV = -Infinity;
  minI = maxI = nanI = -1;
  scanMore(col, from, to);
}

/** Continues the bucket over physical rows [from, to): the first lowest, first highest and first NaN. */
function scanMore(col: ArrayLike<number>, from: number, to: number): void {
  let lo = minV;
  let hi = maxV;
  let loI = minI;
  let hiI = maxI;
  let nan = nanI;
  for (let i = from; i < to; i++) {
    const v = col[i];
    if (v < lo) {
      lo = v;
      loI = i;
    }
    if (v > hi) {
      hi = v;
      hiI = i;
    } else if (v !== v && nan < 0) nan = i;
  }
  minV = lo;
  maxV = hi;
  minI = loI;
  maxI = hiI;
  nanI = nan;
}

/**
 * Rows [lo, hi) of `key`, decimated to about `maxPoints` when there are more. `gapMs`: a time step larger
 * than this between two kept points is drawn as a gap (a null point inserted between them). `buckets`: the
 * ring's buckets for this span when the caller already has them (every key of a request shares them).
 */
export function decimateColumn(
  ring: ColumnRing,
  key: string,
  lo: number,
  hi: number,
  maxPoints: number,
  gapMs: number,
  buckets?: RowBuckets,
): DecimatedColumn {
  const { t, col, start, capacity } = ring.raw(key);
  if (!col) return { t: [], v: [] };
  const b = buckets ?? bucketRows(t, start, capacity, lo, hi, maxPoints);
  return decimateBuckets(t, col, start, capacity, b, gapMs);
}

/**
 * The same over plain arrays stored as a ring: logical row k lives at physical index (start + k) mod capacity.
 * Flat arrays (a recording's columns) pass start 0 and capacity = their length.
 */
export function decimateRows(
  t: ArrayLike<number>,
  col: ArrayLike<number>,
  start: number,
  capacity: number,
  lo: number,
  hi: number,
  maxPoints: number,
  gapMs: number,
): DecimatedColumn {
  return decimateBuckets(t, col, start, capacity, bucketRows(t, start, capacity, lo, hi, maxPoints), gapMs);
}

function phys(start: number, capacity: number, k: number): number {
  const i = start + k;
  return i >= capacity ? i - capacity : i;
}

function push(out: DecimatedColumn, t: number, v: number): void {
  out.t.push(t);
  out.v.push(Number.isFinite(v) ? v : null);
}

/** Inserts a null between two points further apart than gapMs, so the chart breaks the line there. */
function withGaps(c: DecimatedColumn, gapMs: number): DecimatedColumn {
  let needs = false;
  for (let i = 1; i < c.t.length; i++) if (c.t[i] - c.t[i - 1] > gapMs) needs = true;
  if (!needs) return c;
  const out: DecimatedColumn = { t: [], v: [] };
  for (let i = 0; i < c.t.length; i++) {
    if (i > 0 && c.t[i] - c.t[i - 1] > gapMs && c.v[i] !== null && c.v[i - 1] !== null) {
      out.t.push(c.t[i - 1] + 1);
      out.v.push(null);
    }
    out.t.push(c.t[i]);
    out.v.push(c.v[i]);
  }
  return out;
}

/** A gap threshold for a ring: 3× its typical (median) step over the last rows, at least 3 s. */
export function typicalGapMs(ring: ColumnRing, sample = 64): number {
  const n = ring.length;
  if (n < 3) return 3000;
  const steps: number[] = [];
  for (let k = Math.max(1, n - sample); k < n; k++) steps.push(ring.timeAt(k) - ring.timeAt(k - 1));
  steps.sort((a, b) => a - b);
  return Math.max(3000, 3 * steps[steps.length >> 1]);
}
