// The signal history of a review deployment: per group (role) a time column and one float32 column per signal
// key, the layout of the live ColumnRing but filled once and read-only. Charts are served from it decimated the
// way the live store does (min-max per bucket so spikes survive, gaps as nulls), and the cursor reads the row at
// or before a time.
import type { SeriesQuery, SeriesResult, SignalMissing } from '@shared/contract';
import { ColumnRing } from '../signals/column-ring';
import { decimateRows } from '../signals/decimate';
import { answerSeries, growthOf } from '../signals/series-query';

export interface GroupColumns {
  /** Epoch ms, ascending. */
  t: Float64Array;
  /** Signal key (with the role prefix) → value per row; NaN = gap. */
  cols: Map<string, Float32Array>;
}

export class SignalTable {
  private readonly rings = new Map<string, ColumnRing>();
  private readonly gaps = new Map<ColumnRing, number>();

  constructor(readonly groups: Map<string, GroupColumns>) {}

  /** Index of the last row at or before ts in a group, or −1. */
  rowAtOrBefore(group: string, ts: number): number {
    const g = this.groups.get(group);
    if (!g) return -1;
    return upperBound(g.t, ts) - 1;
  }

  /** Every key's value at the last row at or before ts of its group (null = gap there). */
  valuesAt(ts: number): Record<string, number | null> {
    const out: Record<string, number | null> = {};
    for (const [name, g] of this.groups) {
      const k = this.rowAtOrBefore(name, ts);
      if (k < 0) continue;
      for (const [key, col] of g.cols) {
        const v = col[k];
        out[key] = Number.isNaN(v) ? null : v;
      }
    }
    return out;
  }

  value(key: string, ts: number): number | null {
    const group = groupOf(key);
    const col = this.groups.get(group)?.cols.get(key);
    const k = this.rowAtOrBefore(group, ts);
    if (!col || k < 0) return null;
    return Number.isNaN(col[k]) ? null : col[k];
  }

  /** Change of `key` over the `ms` before ts, as SignalsStore.growth reads it at the latest row. */
  growth(key: string, ts: number, ms: number): number | null {
    return growthOf(this.ring(groupOf(key)), key, ms, ts);
  }

  get firstMs(): number | null {
    let first: number | null = null;
    for (const g of this.groups.values())
      if (g.t.length && (first === null || g.t[0] < first)) first = g.t[0];
    return first;
  }

  get lastMs(): number | null {
    let last: number | null = null;
    for (const g of this.groups.values())
      if (g.t.length && (last === null || g.t[g.t.length - 1] > last)) last = g.t[g.t.length - 1];
    return last;
  }

  /** getSeries of the dashboard API, answered from the table by the live store's code. */
  series(
    q: Omit<SeriesQuery, 'deploymentId'>,
    notExposed: Record<string, SignalMissing>,
    expected: (key: string) => string[] | undefined,
  ): SeriesResult {
    return answerSeries(q, {
      ring: (key) => this.ring(groupOf(key)),
      gapMs: (ring) => this.gaps.get(ring) ?? 3000,
      notExposed,
      missing: (key) => {
        const exp = expected(key);
        return exp ? { expected: exp, why: 'not in this recording' } : undefined;
      },
    });
  }

  /** dp ranks with their own KV series, per role (for the catalogue's per-rank keys). */
  kvRanks(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [group, g] of this.groups)
      for (const key of g.cols.keys()) {
        const m = /^[a-z]+\.kv_rank\.(.+)\.ratio$/.exec(key);
        if (m) (out[group] ??= []).push(m[1]);
      }
    for (const ranks of Object.values(out)) ranks.sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    return out;
  }

  /** Each group as a ring over its columns (built once), with its gap threshold. */
  private ring(group: string): ColumnRing | undefined {
    let r = this.rings.get(group);
    if (r) return r;
    const g = this.groups.get(group);
    if (!g) return undefined;
    r = ColumnRing.over(g.t, g.cols);
    this.rings.set(group, r);
    this.gaps.set(r, typicalGap(g.t));
    return r;
  }
}

export function groupOf(key: string): string {
  const i = key.indexOf('.');
  return i < 0 ? key : key.slice(0, i);
}

export function lowerBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function upperBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Three times the median step between rows (at least 3 s): a longer step is drawn as a gap. */
export function typicalGap(t: Float64Array): number {
  const n = t.length;
  if (n < 3) return 3000;
  // Median over a spread sample of the whole session, not only its end: a recording is read as a whole.
  const steps: number[] = [];
  const every = Math.max(1, Math.floor((n - 1) / 256));
  for (let k = 1; k < n; k += every) steps.push(t[k] - t[k - 1]);
  steps.sort((a, b) => a - b);
  return Math.max(3000, 3 * steps[steps.length >> 1]);
}

/** Min-max decimation of flat columns: the same algorithm the live signal store uses on its rings. */
export function decimate(
  t: Float64Array,
  col: Float32Array,
  lo: number,
  hi: number,
  maxPoints: number,
  gapMs: number,
): { t: number[]; v: (number | null)[] } {
  return decimateRows(t, col, 0, t.length, lo, hi, maxPoints, gapMs);
}
