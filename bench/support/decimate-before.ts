// The chart decimation as it was before a ring's buckets were shared by every key of a request (commit
// e1788f1): every key divided every row's time again to find its bucket. Kept for the dashboard benchmark
// only, so the core's time per request prints before / after side by side in one run. Its buckets are
// today's grid (absolute time, decimate.ts `gridWidth`; until 2026-12-05 they started at the window's first
// row), so that both answer with the same points and the figures compare the same work.
import type { SeriesQuery, SeriesResult } from '../../src/shared/api/dashboard';
import type { ColumnRing } from '../../src/main/core/signals/column-ring';
import { gridBucket, gridWidth } from '../../src/main/core/signals/decimate';

/** answerSeries of that commit, without the "missing" bookkeeping (the benchmark asks for stored keys). */
export function answerSeriesBefore(
  q: Omit<SeriesQuery, 'deploymentId'>,
  ringOf: (key: string) => ColumnRing | undefined,
  gapMs: (ring: ColumnRing) => number,
): SeriesResult {
  const result: SeriesResult = {
    series: [],
    firstMs: null,
    lastMs: null,
    rawPoints: 0,
    decimated: false,
    missing: {},
  };
  for (const key of q.keys) {
    const ring = ringOf(key);
    if (!ring || !ring.has(key)) {
      result.series.push({ key, t: [], v: [] });
      continue;
    }
    const [lo, hi] = ring.range(q.fromMs, q.toMs);
    result.rawPoints += hi - lo;
    if (hi - lo > q.maxPoints) result.decimated = true;
    const { t, col, start, capacity } = ring.raw(key);
    const c = decimateRows(t, col!, start, capacity, lo, hi, q.maxPoints, gapMs(ring));
    result.series.push({ key, t: c.t, v: c.v });
  }
  return result;
}

interface Decimated {
  t: number[];
  v: (number | null)[];
}

function decimateRows(
  t: ArrayLike<number>,
  col: ArrayLike<number>,
  start: number,
  capacity: number,
  lo: number,
  hi: number,
  maxPoints: number,
  gapMs: number,
): Decimated {
  const out: Decimated = { t: [], v: [] };
  if (hi <= lo) return out;
  // Physical index of logical row k, without a modulo per row (a day is 86,400 rows per key).
  const at = (k: number): number => {
    const i = start + k;
    return i >= capacity ? i - capacity : i;
  };
  const n = hi - lo;
  if (n <= maxPoints) {
    for (let k = lo; k < hi; k++) {
      const i = at(k);
      push(out, t[i], col[i]);
    }
    return withGaps(out, gapMs);
  }
  const buckets = Math.max(1, Math.floor(maxPoints / 2));
  const t0 = t[at(lo)];
  const width = gridWidth(t[at(hi - 1)] - t0, buckets);
  let bucket = -1;
  let minI = -1;
  let maxI = -1;
  let nanI = -1;
  let minV = Infinity;
  let maxV = -Infinity;
  const flush = (): void => {
    if (bucket < 0) return;
    const picks: number[] = [];
    if (minI >= 0) picks.push(minI);
    if (maxI >= 0 && maxI !== minI) picks.push(maxI);
    if (nanI >= 0) picks.push(nanI);
    // Emitted in time order: the lowest and highest of a bucket come in whichever order they happened.
    picks.sort((x, y) => t[x] - t[y]);
    for (const i of picks) push(out, t[i], col[i]);
  };
  for (let k = lo, i = at(lo); k < hi; k++, i = i + 1 === capacity ? 0 : i + 1) {
    const b = gridBucket(t[i], width);
    if (b !== bucket) {
      flush();
      bucket = b;
      minI = maxI = nanI = -1;
      minV = Infinity;
      maxV = -Infinity;
    }
    const v = col[i];
    if (v !== v) {
      if (nanI < 0) nanI = i;
      continue;
    }
    if (v < minV) {
      minV = v;
      minI = i;
    }
    if (v > maxV) {
      maxV = v;
      maxI = i;
    }
  }
  flush();
  return withGaps(out, Math.max(gapMs, 2.5 * width));
}

function push(out: Decimated, t: number, v: number): void {
  out.t.push(t);
  out.v.push(Number.isFinite(v) ? v : null);
}

/** Inserts a null between two points further apart than gapMs, so the chart breaks the line there. */
function withGaps(c: Decimated, gapMs: number): Decimated {
  let needs = false;
  for (let i = 1; i < c.t.length; i++) if (c.t[i] - c.t[i - 1] > gapMs) needs = true;
  if (!needs) return c;
  const out: Decimated = { t: [], v: [] };
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
