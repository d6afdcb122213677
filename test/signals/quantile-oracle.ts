// A reference histogram_quantile for tests: Prometheus' bucketQuantile (promql/quantile.go) written plainly,
// against which the evaluator's column implementation (window-math.ts quantileOfSorted) is checked.

export interface Bucket {
  /** Upper bound; Infinity for the +Inf bucket. */
  le: number;
  /** Cumulative count. */
  count: number;
}

/**
 * histogram_quantile(q, …) as Prometheus computes it (promql/quantile.go bucketQuantile):
 * buckets sorted by bound and merged when equal; the highest must be +Inf, else NaN; cumulative counts forced
 * monotonic; fewer than 2 buckets or no observations → NaN; q < 0 → −Inf, q > 1 → +Inf; a rank falling in the
 * +Inf bucket returns the highest finite bound; the first bucket's lower bound is 0 unless its upper bound is
 * ≤ 0 (then that bound is returned); otherwise linear interpolation inside the bucket.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const sorted = [...buckets].filter((b) => !Number.isNaN(b.le)).sort((a, b) => a.le - b.le);
  const merged: Bucket[] = [];
  for (const b of sorted) {
    const last = merged[merged.length - 1];
    if (last && last.le === b.le) last.count += b.count;
    else merged.push({ le: b.le, count: b.count });
  }
  if (merged.length === 0 || merged[merged.length - 1].le !== Infinity) return NaN;
  for (let i = 1; i < merged.length; i++) {
    if (merged[i].count < merged[i - 1].count) merged[i].count = merged[i - 1].count;
  }
  if (merged.length < 2) return NaN;
  const observations = merged[merged.length - 1].count;
  if (!(observations > 0)) return NaN;
  let rank = q * observations;
  let b = merged.findIndex((x, i) => i < merged.length - 1 && x.count >= rank);
  if (b === -1) b = merged.length - 1;
  if (b === merged.length - 1) return merged[merged.length - 2].le;
  if (b === 0 && merged[0].le <= 0) return merged[0].le;
  let bucketStart = 0;
  const bucketEnd = merged[b].le;
  let count = merged[b].count;
  if (b > 0) {
    bucketStart = merged[b - 1].le;
    count -= merged[b - 1].count;
    rank -= merged[b - 1].count;
  }
  return bucketStart + (bucketEnd - bucketStart) * (rank / count);
}
