// The signal history of a review deployment: per group (role) a time column and one float32 column per signal
// key, the layout of the live ColumnRing but filled once and read-only. Charts are served from it decimated the
// way the live store does (min-max per bucket so spikes survive, gaps as nulls), and the cursor reads the row at
// or before a time.
import type { SeriesQuery, SeriesResult, SignalMissing } from '@shared/contract';
import { ColumnRing } from '../signals/column-ring';
import { answerSeries, growthOf } from '../signals/series-query';
import { groupOf } from '../signals/signals-store';
import { compareDpRanks } from '../signals/evaluate/kv';

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
    const ring = this.ring(group);
    return ring ? ring.range(-Infinity, ts)[1] - 1 : -1;
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
    for (const ranks of Object.values(out)) ranks.sort(compareDpRanks);
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

/** Three times the median step between rows (at least 3 s): a longer step is drawn as a gap. */
function typicalGap(t: Float64Array): number {
  const n = t.length;
  if (n < 3) return 3000;
  // Median over a spread sample of the whole session, not only its end: a recording is read as a whole.
  const steps: number[] = [];
  const every = Math.max(1, Math.floor((n - 1) / 256));
  for (let k = 1; k < n; k += every) steps.push(t[k] - t[k - 1]);
  steps.sort((a, b) => a - b);
  return Math.max(3000, 3 * steps[steps.length >> 1]);
}
