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
  const { t, col, start, capacity } = ring.raw(key);
  if (!col) return { t: [], v: [] };
  return decimateRows(t, col, start, capacity, lo, hi, maxPoints, gapMs);
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
  const out: DecimatedColumn = { t: [], v: [] };
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
  const width = (t[at(hi - 1)] - t0 + 1) / buckets;
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
    let b = Math.floor((t[i] - t0) / width);
    if (b >= buckets) b = buckets - 1;
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
