// Min-max decimation of the columns of a ColumnRing over a time range, in core, before anything crosses
// a transport: per time bucket the lowest and the highest value are kept (in time order), so a one-second
// KV spike still shows on a 24 h chart. Gaps survive too: a bucket that holds a NaN, and any stretch
// without rows longer than the gap threshold, come out as null.
//
// Buckets lie on a grid of absolute time: bucket b of width W holds the rows with ⌊t / W⌋ = b, and W is the
// window's length over the buckets asked, rounded up to a coarse step (`gridWidth`). So a window asked again
// a little later (a page reloaded, a tab switched back to) falls on the same grid, and the buckets strictly
// inside both windows are read from those kept by the first answer (kept-buckets.ts) instead of the rows.
// Buckets that started at the window's first row would shift with every load, and each load of a 24 h page
// would read the whole day again.
//
// Where each bucket starts depends on the ring's time column only: it is found once per ring and window, by
// a binary search per bucket when a key first needs it (`bucketStart`), and shared by every key of the
// request. Over a ring, a bucket's whole blocks of rows are read from their summaries (column-ring.ts,
// BlockSummaries: kept once found, as a block's rows never change), so a day's bucket of ~120 rows is a few
// summaries and two partial blocks.
import { BLOCK_ROWS, type BlockSummaries, type ColumnRing } from './column-ring';
import type { BucketSegment } from './kept-buckets';

export interface DecimatedColumn {
  t: number[];
  v: (number | null)[];
}

/** The buckets of rows [lo, hi); the same for every column of the ring. */
export interface RowBuckets {
  lo: number;
  hi: number;
  /** Width of one bucket (0 when every row is kept); a step of 2.5 widths is a gap. */
  widthMs: number;
  /** Grid number of the first bucket: that of row lo. */
  first: number;
  /**
   * Logical row at which bucket first + j starts, −1 until a key needs it (`bucketStart`); the last entry is
   * `hi`. Null when the span has no more rows than points asked (every row is kept).
   */
  starts: Float64Array | null;
}

/**
 * The grid's bucket width for about `buckets` buckets over `spanMs`: the exact share rounded up to a multiple
 * of a power of two at most an eighth of it, so windows of nearly the same length share one grid (at most
 * 1/8 fewer buckets than asked).
 */
export function gridWidth(spanMs: number, buckets: number): number {
  const exact = (spanMs + 1) / buckets;
  const step = 2 ** (Math.floor(Math.log2(exact)) - 3);
  return Math.ceil(exact / step) * step;
}

/** The grid number of the bucket of a row at time t. */
export const gridBucket = (t: number, widthMs: number): number => Math.floor(t / widthMs);

/**
 * Buckets for rows [lo, hi) of a ring's time column `t` (logical row k at physical (start + k) mod
 * capacity), about `maxPoints / 2` of them when there are more rows than `maxPoints`.
 */
export function bucketRows(
  t: ArrayLike<number>,
  start: number,
  capacity: number,
  lo: number,
  hi: number,
  maxPoints: number,
): RowBuckets {
  if (hi - lo <= maxPoints) return { lo, hi, widthMs: 0, first: 0, starts: null };
  const t0 = t[phys(start, capacity, lo)];
  const tEnd = t[phys(start, capacity, hi - 1)];
  const widthMs = gridWidth(tEnd - t0, Math.max(1, Math.floor(maxPoints / 2)));
  const first = gridBucket(t0, widthMs);
  const last = gridBucket(tEnd, widthMs);
  const starts = new Float64Array(last - first + 2).fill(-1);
  starts[0] = lo;
  starts[starts.length - 1] = hi;
  return { lo, hi, widthMs, first, starts };
}

/** The logical row at which bucket first + j of `b` starts (its first row, or the next bucket's if empty). */
export function bucketStart(
  b: RowBuckets,
  t: ArrayLike<number>,
  start: number,
  capacity: number,
  j: number,
): number {
  const starts = b.starts!;
  if (starts[j] >= 0) return starts[j];
  // ⌊t / W⌋ is monotone in t, and t in k: the first row at or past the bucket is a binary search, narrowed
  // by a neighbour's start when known (a key's pass finds them in order).
  let a = j > 0 && starts[j - 1] >= 0 ? starts[j - 1] : b.lo;
  let z = starts[j + 1] >= 0 ? starts[j + 1] : b.hi;
  const bucket = b.first + j;
  while (a < z) {
    const mid = (a + z) >>> 1;
    if (gridBucket(t[phys(start, capacity, mid)], b.widthMs) >= bucket) z = mid;
    else a = mid + 1;
  }
  starts[j] = a;
  return a;
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
  kept?: { segments: Map<string, BucketSegment>; key: string },
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
  const n = starts.length - 1;
  // Buckets 1 … n − 2 lie strictly inside the window: whole, and kept for the next request (kept-buckets.ts).
  const seg = kept?.segments.get(kept.key);
  const segFrom = seg ? seg.first - buckets.first : 0;
  const segTo = seg ? segFrom + seg.off.length - 1 : 0;
  // Where each bucket's points start in out.
  const off = new Int32Array(n + 1);
  const picks = [0, 0, 0];
  for (let j = 0; j < n; j++) {
    off[j] = out.t.length;
    if (seg && j >= 1 && j < n - 1 && j >= segFrom && j < segTo) {
      for (let p = seg.off[j - segFrom], e = seg.off[j - segFrom + 1]; p < e; p++) {
        out.t.push(seg.t[p]);
        const v = seg.v[p];
        out.v.push(v === v ? v : null);
      }
      continue;
    }
    const a = base + bucketStart(buckets, t, start, capacity, j);
    const e = base + bucketStart(buckets, t, start, capacity, j + 1);
    if (e <= a) continue;
    reset();
    const firstBlock = Math.ceil(a / BLOCK_ROWS) * BLOCK_ROWS;
    const lastBlock = Math.min(Math.floor(e / BLOCK_ROWS) * BLOCK_ROWS, immutableEnd);
    if (blocks && lastBlock - firstBlock >= BLOCK_ROWS) {
      scanRows(col, capacity, a, firstBlock);
      mergeBlocks(col, capacity, blocks.sums, firstBlock / BLOCK_ROWS, lastBlock / BLOCK_ROWS);
      scanRows(col, capacity, lastBlock, e);
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
  off[n] = out.t.length;
  if (kept && n > 2 && !(seg && segFrom === 1 && segTo === n - 1))
    kept.segments.set(kept.key, segmentOf(out, off, buckets.first + 1, 1, n - 1));
  return withGaps(out, Math.max(gapMs, 2.5 * buckets.widthMs));
}

/** Buckets j0 … j1 − 1 of `out` (whose points start at off[j]) as a kept segment starting at grid bucket `first`. */
function segmentOf(
  out: DecimatedColumn,
  off: Int32Array,
  first: number,
  j0: number,
  j1: number,
): BucketSegment {
  const p0 = off[j0];
  const count = off[j1] - p0;
  const seg: BucketSegment = {
    first,
    off: new Int32Array(j1 - j0 + 1),
    t: new Float64Array(count),
    v: new Float64Array(count),
  };
  for (let j = j0; j <= j1; j++) seg.off[j - j0] = off[j] - p0;
  for (let p = 0; p < count; p++) {
    seg.t[p] = out.t[p0 + p];
    seg.v[p] = out.v[p0 + p] ?? NaN;
  }
  return seg;
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
  if (!b.starts) return decimateBuckets(t, col, start, capacity, b, gapMs);
  const sums = ring.blockSummaries(key)!;
  const kept = { segments: ring.keptBuckets(b.widthMs), key };
  return decimateBuckets(t, col, start, capacity, b, gapMs, { sums, base, appended }, kept);
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
