// The answer to a chart's history request, for the live store's rings and a recording's table alike: per key
// the rows in the asked span, min-max decimated to the asked width, and for a key without data why it has
// none (the specification's "not exposed" reason where known).
import type { SeriesQuery, SeriesResult, SignalMissing } from '@shared/contract';
import type { ColumnRing } from './column-ring';
import { bucketRows, decimateColumn, type RowBuckets } from './decimate';

export interface SeriesSource {
  /** The ring holding `key`'s column, if any. */
  ring(key: string): ColumnRing | undefined;
  /** A time step longer than this is drawn as a gap, for the ring of `key`. */
  gapMs(ring: ColumnRing): number;
  /** Why `key` has no column at all (never written), when something can be said. */
  missing(key: string): SignalMissing | undefined;
  /** Reasons known for keys, whether or not they have data ("not exposed" hints). */
  notExposed: Record<string, SignalMissing>;
}

/** An answer with no series yet: what answerSeries fills, and what a source without live rows answers. */
export function emptySeriesResult(): SeriesResult {
  return { series: [], firstMs: null, lastMs: null, rawPoints: 0, decimated: false, missing: {} };
}

export function answerSeries(q: Omit<SeriesQuery, 'deploymentId'>, src: SeriesSource): SeriesResult {
  const result = emptySeriesResult();
  // What every key of one ring shares for this window: its row range, where its buckets start, its gap
  // threshold. Found once per ring, not once per key.
  const spans = new Map<ColumnRing, { buckets: RowBuckets; gapMs: number }>();
  for (const key of q.keys) {
    if (src.notExposed[key]) result.missing[key] = src.notExposed[key];
    const ring = src.ring(key);
    if (!ring || !ring.has(key)) {
      result.series.push({ key, t: [], v: [] });
      const why = result.missing[key] ?? src.missing(key);
      if (why) result.missing[key] = why;
      continue;
    }
    const first = ring.firstTime();
    const last = ring.lastTime();
    if (first !== undefined)
      result.firstMs = result.firstMs === null ? first : Math.min(result.firstMs, first);
    if (last !== undefined) result.lastMs = result.lastMs === null ? last : Math.max(result.lastMs, last);
    let span = spans.get(ring);
    if (!span) {
      const [lo, hi] = ring.range(q.fromMs, q.toMs);
      const { t, start, capacity } = ring.raw(key);
      span = { buckets: bucketRows(t, start, capacity, lo, hi, q.maxPoints), gapMs: src.gapMs(ring) };
      spans.set(ring, span);
    }
    const { lo, hi } = span.buckets;
    result.rawPoints += hi - lo;
    if (hi - lo > q.maxPoints) result.decimated = true;
    const col = decimateColumn(ring, key, lo, hi, q.maxPoints, span.gapMs, span.buckets);
    result.series.push({ key, t: col.t, v: col.v });
  }
  return result;
}

/** Change of `key` over the `ms` ending at the last row at or before `endTs` (default: the latest row). */
export function growthOf(
  ring: ColumnRing | undefined,
  key: string,
  ms: number,
  endTs = Infinity,
): number | null {
  if (!ring || ring.length === 0) return null;
  const [, hiAll] = ring.range(-Infinity, endTs);
  if (hiAll === 0) return null;
  const end = ring.timeAt(hiAll - 1);
  const [lo, hi] = ring.range(end - ms, end);
  if (hi - lo < 2 || end - ring.timeAt(lo) < ms * 0.8) return null;
  const a = ring.valueAt(key, lo);
  const b = ring.valueAt(key, hi - 1);
  return Number.isNaN(a) || Number.isNaN(b) ? null : b - a;
}
