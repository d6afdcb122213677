// Decimated points of whole buckets, kept between chart requests. Buckets lie on a grid of absolute time
// (bucket b of width W is [b·W, (b+1)·W), decimate.ts), so a page that asks for "the last 24 h" again a
// minute later — a reload, a tab switched back — asks for the same buckets but one or two at the end, and
// only those are read from the rows again. Query frontends in front of Prometheus (Thanos, Cortex) align
// query steps to absolute time for the same reason: results cache.
//
// Only a bucket strictly inside a request's window is kept: the window covers all of its rows, and a later
// row exists, so none of its rows can still change (only a ring's last row takes merges, and new rows come
// after it). A later request that has the bucket strictly inside its own window therefore holds exactly the
// same rows in it: a kept bucket is never stale, and needs no check beyond its number.

/** The points of buckets first … first + off.length − 2 of one key at one width, in time order. */
export interface BucketSegment {
  first: number;
  /** Where each bucket's points start in t and v; the last entry is the number of points. */
  off: Int32Array;
  t: Float64Array;
  /** NaN where the point is a gap (null in the answer). */
  v: Float64Array;
}

/** A ring's kept segments, per bucket width and key; the widths used least recently are dropped first. */
export class KeptBuckets {
  private readonly byWidth = new Map<number, Map<string, BucketSegment>>();

  /**
   * @param widths how many bucket widths to keep. A width is a chart's width in pixels and the window's
   *   length, so one is kept per page and range an operator goes back to; a zoom makes a new one.
   */
  constructor(private readonly widths = 4) {}

  /** The segments of width `widthMs` (made empty if new), now the most recently used width. */
  forWidth(widthMs: number): Map<string, BucketSegment> {
    let m = this.byWidth.get(widthMs);
    if (m) this.byWidth.delete(widthMs);
    else {
      m = new Map();
      // A Map iterates in insertion order: the first width is the one used least recently.
      if (this.byWidth.size >= this.widths) this.byWidth.delete(this.byWidth.keys().next().value!);
    }
    this.byWidth.set(widthMs, m);
    return m;
  }

  clear(): void {
    this.byWidth.clear();
  }
}
