// Min-max decimation of the columns of a ColumnRing over a time range, in core, before anything crosses
// a transport: per time bucket the lowest and the highest value are kept (in time order), so a one-second
// KV spike still shows on a 24 h chart. Gaps survive too: a bucket that holds a NaN, and any stretch
// without rows longer than the gap threshold, come out as null.
//
// A bucket is a span of time, so where each bucket starts depends on the ring's time column only: it is
// found once per ring and window (`bucketRows`, a binary search per bucket) and shared by every key of the
// request, and each key is then one pass of compares over contiguous typed-array slices. Over a ring, a
// bucket's whole blocks of rows are read from their summaries (column-ring.ts, BlockSummaries: kept once
// found, as a block's rows never change), so a day's bucket of ~250 rows is ~15 summaries and two partial
// blocks. Before, every key divided every row's time again: ≈ 1–3.5 ms per key for a day of rows.
import { BLOCK_ROWS, type BlockSummaries, type ColumnRing } from './column-ring';

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

/** A ring's block summaries of one column, and where its rows stand (ColumnRing.raw's base and appended). */
export interface ColumnBlocks {
  sums: BlockSummaries;
  base: number;
  appended: number;
}

/** One column over the buckets of its ring: min, max and the first NaN of each bucket, in time order. */
export function decimateBuckets(
  t: ArrayLike<number>,
  col: ArrayLike<number>,
  start: number,
  capacity: number,
  buckets: RowBuckets,
  gapMs: number,
  blocks?: ColumnBlocks,
): DecimatedColumn {
  const { lo, hi, starts } = buckets;
  const out: DecimatedColumn = { t: [], v: [] };
  if (hi <= lo) return out;
  if (!starts) {
    for (let k = lo, i = phys(start, capacity, lo); k < hi; k++, i = i + 1 === capacity ? 0 : i + 1)
      push(out, t[i], col[i]);
    return withGaps(out, gapMs);
  }
  // Logical row k is absolute row base + k, at physical (base + k) mod capacity; flat arrays start at 0.
  const base = blocks ? blocks.base : start;
  // Whole blocks older than the last row (the one a later write may still merge into) can be summarised.
  const immutableEnd = blocks ? Math.floor((blocks.appended - 1) / BLOCK_ROWS) * BLOCK_ROWS : 0;
  const picks = [0, 0, 0];
  for (let j = 0; j + 1 < starts.length; j++) {
    const a = base + starts[j];
    const e = base + starts[j + 1];
    reset();
    const first = Math.ceil(a / BLOCK_ROWS) * BLOCK_ROWS;
    const last = Math.min(Math.floor(e / BLOCK_ROWS) * BLOCK_ROWS, immutableEnd);
    if (blocks && last - first >= BLOCK_ROWS) {
      scanRows(col, capacity, a, first);
      mergeBlocks(col, capacity, blocks.sums, first / BLOCK_ROWS, last / BLOCK_ROWS);
      scanRows(col, capacity, last, e);
    } else scanRows(col, capacity, a, e);
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

function reset(): void {
  minV = Infinity;
  maxV = -Infinity;
  minI = maxI = nanI = -1;
}

/** Continues the bucket over absolute rows [a, e): at most two contiguous slices, as the ring may wrap. */
function scanRows(col: ArrayLike<number>, capacity: number, a: number, e: number): void {
  if (e <= a) return;
  const p = a % capacity;
  const n = e - a;
  const end1 = Math.min(capacity, p + n);
  scanMore(col, p, end1);
  if (end1 - p < n) scanMore(col, 0, n - (end1 - p));
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
 * Continues the bucket over absolute blocks [b0, b1) from their summaries (found now where a slot holds
 * another block): strict compares keep the first lowest and highest, as a row-by-row scan would.
 */
function mergeBlocks(
  col: ArrayLike<number>,
  capacity: number,
  sums: BlockSummaries,
  b0: number,
  b1: number,
): void {
  const slots = sums.block.length;
  let slot = b0 % slots;
  // Physical index of the block's first row, stepped rather than divided.
  let p = (b0 * BLOCK_ROWS) % capacity;
  let lo = minV;
  let hi = maxV;
  let loI = minI;
  let hiI = maxI;
  let nan = nanI;
  for (let b = b0; b < b1; b++) {
    if (sums.block[slot] !== b) summarise(col, capacity, sums, b, slot, p);
    let k = sums.lo[slot];
    if (k >= 0) {
      let i = p + k;
      if (i >= capacity) i -= capacity;
      const v = col[i];
      if (v < lo) {
        lo = v;
        loI = i;
      }
    }
    k = sums.hi[slot];
    if (k >= 0) {
      let i = p + k;
      if (i >= capacity) i -= capacity;
      const v = col[i];
      if (v > hi) {
        hi = v;
        hiI = i;
      }
    }
    k = sums.nan[slot];
    if (k >= 0 && nan < 0) {
      nan = p + k;
      if (nan >= capacity) nan -= capacity;
    }
    if (++slot === slots) slot = 0;
    p += BLOCK_ROWS;
    if (p >= capacity) p -= capacity;
  }
  minV = lo;
  maxV = hi;
  minI = loI;
  maxI = hiI;
  nanI = nan;
}

function summarise(
  col: ArrayLike<number>,
  capacity: number,
  sums: BlockSummaries,
  b: number,
  slot: number,
  p: number,
): void {
  let lo = Infinity;
  let hi = -Infinity;
  let loK = -1;
  let hiK = -1;
  let nanK = -1;
  for (let k = 0, i = p; k < BLOCK_ROWS; k++, i = i + 1 === capacity ? 0 : i + 1) {
    const v = col[i];
    if (v < lo) {
      lo = v;
      loK = k;
    }
    if (v > hi) {
      hi = v;
      hiK = k;
    } else if (v !== v && nanK < 0) nanK = k;
  }
  sums.block[slot] = b;
  sums.lo[slot] = loK;
  sums.hi[slot] = hiK;
  sums.nan[slot] = nanK;
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
  const { t, col, start, capacity, base, appended } = ring.raw(key);
  if (!col) return { t: [], v: [] };
  const b = buckets ?? bucketRows(t, start, capacity, lo, hi, maxPoints);
  const sums = b.starts ? ring.blockSummaries(key) : undefined;
  return decimateBuckets(t, col, start, capacity, b, gapMs, sums && { sums, base, appended });
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
