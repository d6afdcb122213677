// Min-max decimation of one column of a ColumnRing over a time range, in core, before anything crosses
// a transport: per time bucket the lowest and the highest value are kept (in time order), so a one-second
// KV spike still shows on a 24 h chart. Gaps survive too: a bucket that holds a NaN, and any stretch
// without rows longer than the gap threshold, come out as null.
import type { ColumnRing } from './column-ring';

export interface DecimatedColumn {
  t: number[];
  v: (number | null)[];
}

/**
 * Rows [lo, hi) of `key`, decimated to about `maxPoints` when there are more. `gapMs`: a time step larger
 * than this between two kept points is drawn as a gap (a null point inserted between them).
 */
export function decimateColumn(
  ring: ColumnRing,
  key: string,
  lo: number,
  hi: number,
  maxPoints: number,
  gapMs: number,
): DecimatedColumn {
  const { col, phys } = ring.columnView(key);
  const out: DecimatedColumn = { t: [], v: [] };
  if (!col || hi <= lo) return out;
  const n = hi - lo;
  if (n <= maxPoints) {
    for (let k = lo; k < hi; k++) push(out, ring.timeAt(k), col[phys(k)]);
    return withGaps(out, gapMs);
  }
  const buckets = Math.max(1, Math.floor(maxPoints / 2));
  const t0 = ring.timeAt(lo);
  const span = ring.timeAt(hi - 1) - t0 + 1;
  const width = span / buckets;
  let bucket = -1;
  let minK = -1;
  let maxK = -1;
  let nanK = -1;
  let minV = Infinity;
  let maxV = -Infinity;
  const flush = (): void => {
    if (bucket < 0) return;
    const picks: number[] = [];
    if (minK >= 0) picks.push(minK);
    if (maxK >= 0 && maxK !== minK) picks.push(maxK);
    if (nanK >= 0) picks.push(nanK);
    picks.sort((a, b) => a - b);
    for (const k of picks) push(out, ring.timeAt(k), col[phys(k)]);
  };
  for (let k = lo; k < hi; k++) {
    const b = Math.min(buckets - 1, Math.floor((ring.timeAt(k) - t0) / width));
    if (b !== bucket) {
      flush();
      bucket = b;
      minK = maxK = nanK = -1;
      minV = Infinity;
      maxV = -Infinity;
    }
    const v = col[phys(k)];
    if (Number.isNaN(v)) {
      if (nanK < 0) nanK = k;
      continue;
    }
    if (v < minV) {
      minV = v;
      minK = k;
    }
    if (v > maxV) {
      maxV = v;
      maxK = k;
    }
  }
  flush();
  return withGaps(out, Math.max(gapMs, 2.5 * width));
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
