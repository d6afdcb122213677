// A bounded history of rows (time + any number of named numeric columns) in typed arrays.
// Columns are created when a key first reports, so a signal an older server never exposes costs nothing.
// 24 h at 1 s is 86,400 rows: one Float64Array for time and a Float32Array per column (≈ 340 KB each;
// float32 keeps token counts exact below 16.7 M and rates to 7 digits, which is all a chart shows).
// The arrays start at GROW_ROWS rows and double up to the capacity as rows arrive: a fresh deployment's
// hundreds of columns would otherwise hold ~100 MB of NaN outside the JS heap, which V8 counts towards
// scheduling its major GCs. Until the ring is full nothing wraps (start stays 0), so a shorter array
// answers the same physical indexes.
// NaN marks a gap. Rows only move forward in time: a clock that jumps back cannot scramble the axis.
import { KeptBuckets, type BucketSegment } from './kept-buckets';

/**
 * Per column, a summary of each block of BLOCK_ROWS rows (where its first lowest, first highest and first NaN
 * are), so a chart bucket of a day's span reads a few summaries instead of every row. Filled lazily by the
 * decimation (`decimate.ts`) and only for blocks that can no longer change: every row of the block is
 * older than the ring's last row (the only row a later write may still merge into). Blocks are numbered by
 * absolute row (rows ever appended), so a summary of rows the ring has since overwritten never matches.
 */
export interface BlockSummaries {
  /** The absolute block number each slot summarises (−1: none yet). Slot = block mod slots. */
  block: Int32Array;
  /** Offsets inside the block of its first lowest, first highest and first NaN value (−1: none). */
  lo: Int8Array;
  hi: Int8Array;
  nan: Int8Array;
}

export const BLOCK_ROWS = 32;

/** Rows the arrays hold at first (an hour at 1 s); they double from there up to the capacity. */
export const GROW_ROWS = 4096;

export class ColumnRing {
  private t: Float64Array;
  private readonly cols: Map<string, Float32Array>;
  private start = 0;
  private count = 0;
  /** Rows ever appended: the absolute number of logical row k is appended − count + k. */
  private appended = 0;
  private readonly summaries = new Map<string, BlockSummaries>();
  private readonly kept = new KeptBuckets();
  /** Rows refused because their time was before the latest row (a clock jump, a replay out of order). */
  droppedBackwards = 0;

  constructor(
    readonly capacity: number,
    full?: { t: Float64Array; cols: ReadonlyMap<string, Float32Array> },
  ) {
    if (full) {
      this.t = full.t;
      this.cols = new Map(full.cols);
      this.count = full.t.length;
      this.appended = this.count;
      return;
    }
    if (!(capacity >= 2)) throw new RangeError(`ColumnRing capacity must be ≥ 2, got ${capacity}`);
    this.t = new Float64Array(Math.min(capacity, GROW_ROWS));
    this.cols = new Map();
  }

  /** Rows the arrays hold now (≤ capacity): what the ring costs in memory. */
  get allocatedRows(): number {
    return this.t.length;
  }

  /**
   * A full ring over columns already built (a recording's table), so the same queries answer both. The
   * arrays are shared, not copied; do not append to it.
   */
  static over(t: Float64Array, cols: ReadonlyMap<string, Float32Array>): ColumnRing {
    return new ColumnRing(t.length, { t, cols });
  }

  get length(): number {
    return this.count;
  }

  keys(): string[] {
    return [...this.cols.keys()];
  }

  has(key: string): boolean {
    return this.cols.has(key);
  }

  firstTime(): number | undefined {
    return this.count ? this.t[this.start] : undefined;
  }

  lastTime(): number | undefined {
    return this.count ? this.t[this.phys(this.count - 1)] : undefined;
  }

  /**
   * Writes values at time `t`: merged into the last row when `t` equals its time (one poll reports in
   * several steps), a new row when later, dropped when earlier. Returns false when dropped.
   */
  set(t: number, values: Record<string, number | null | undefined>): boolean {
    if (!Number.isFinite(t)) return false;
    const last = this.lastTime();
    let i: number;
    if (last !== undefined && t === last) i = this.phys(this.count - 1);
    else if (last !== undefined && t < last) {
      this.droppedBackwards++;
      return false;
    } else {
      i = this.appendRow(t);
    }
    for (const key in values) {
      const v = values[key];
      if (v === undefined) continue;
      this.column(key)[i] = v === null ? NaN : v;
    }
    return true;
  }

  /** Logical index range [lo, hi) of rows with from ≤ t ≤ to (binary search: rows are time-ordered). */
  range(fromMs = -Infinity, toMs = Infinity): [number, number] {
    return [this.lowerBound(fromMs), this.upperBound(toMs)];
  }

  timeAt(k: number): number {
    return this.t[this.phys(k)];
  }

  /** Value of `key` at logical row k; NaN when absent. */
  valueAt(key: string, k: number): number {
    const c = this.cols.get(key);
    return c ? c[this.phys(k)] : NaN;
  }

  /** Every key with its value at logical row k (NaN when absent), in keys() order, without listing the keys. */
  forEachAt(k: number, fn: (key: string, v: number) => void): void {
    const i = this.phys(k);
    this.cols.forEach((c, key) => fn(key, c[i]));
  }

  /**
   * The raw arrays for tight loops: logical row k lives at physical index (start + k) % capacity, and is
   * absolute row `base + k`, whose physical index is also (base + k) % capacity. Read-only by contract; the
   * arrays are the ring's own.
   */
  raw(key: string): {
    t: Float64Array;
    col: Float32Array | undefined;
    start: number;
    capacity: number;
    base: number;
    appended: number;
  } {
    return {
      t: this.t,
      col: this.cols.get(key),
      start: this.start,
      capacity: this.capacity,
      base: this.appended - this.count,
      appended: this.appended,
    };
  }

  /** The block summaries of `key` (created empty on first use); see BlockSummaries. */
  blockSummaries(key: string): BlockSummaries | undefined {
    if (!this.cols.has(key)) return undefined;
    let s = this.summaries.get(key);
    if (!s) {
      // Live rows span at most this many blocks, so live blocks never share a slot.
      const slots = Math.ceil(this.capacity / BLOCK_ROWS) + 1;
      s = {
        block: new Int32Array(slots).fill(-1),
        lo: new Int8Array(slots),
        hi: new Int8Array(slots),
        nan: new Int8Array(slots),
      };
      this.summaries.set(key, s);
    }
    return s;
  }

  /** The decimated buckets kept for bucket width `widthMs`, per key (kept-buckets.ts). */
  keptBuckets(widthMs: number): Map<string, BucketSegment> {
    return this.kept.forWidth(widthMs);
  }

  /** Forgets every kept bucket (benchmarks time a first request this way). */
  forgetKeptBuckets(): void {
    this.kept.clear();
  }

  /** Latest non-NaN value of `key` within the last `maxRows` rows. */
  latest(key: string, maxRows = 1): number | null {
    const c = this.cols.get(key);
    if (!c) return null;
    for (let k = this.count - 1; k >= Math.max(0, this.count - maxRows); k--) {
      const v = c[this.phys(k)];
      if (!Number.isNaN(v)) return v;
    }
    return null;
  }

  private appendRow(t: number): number {
    if (this.count === this.t.length && this.count < this.capacity) this.grow();
    const i = this.phys(this.count);
    this.appended++;
    if (this.count < this.capacity) this.count++;
    else this.start = (this.start + 1) % this.capacity;
    this.t[i] = t;
    // The slot may hold an overwritten row's values: clear every column so absent keys read as gaps.
    this.cols.forEach((c) => {
      c[i] = NaN;
    });
    return i;
  }

  /** Doubles every array (up to the capacity); only called while start is 0, so rows keep their indexes. */
  private grow(): void {
    const rows = Math.min(this.capacity, this.t.length * 2);
    const t = new Float64Array(rows);
    t.set(this.t);
    this.t = t;
    for (const [key, c] of this.cols) {
      const n = new Float32Array(rows).fill(NaN);
      n.set(c);
      this.cols.set(key, n);
    }
  }

  private column(key: string): Float32Array {
    let c = this.cols.get(key);
    if (!c) {
      c = new Float32Array(this.t.length).fill(NaN);
      this.cols.set(key, c);
    }
    return c;
  }

  private phys(k: number): number {
    return (this.start + k) % this.capacity;
  }

  private lowerBound(t: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.t[this.phys(mid)] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private upperBound(t: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.t[this.phys(mid)] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
