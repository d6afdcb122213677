// The signal history of a review deployment: per group (role, worker, host's GPUs) a time column and one
// float32 column per signal key, the layout of the live store's rings but filled once. It is read by the live
// store's reader (signals/signal-history.ts) over rings built on its finished columns, so charts, the cursor's
// values and growth are answered by the same code live and in review; the columns stay at hand for what reads
// a recording row by row (the cursor's observation, CSV export, the review cache).
import { ColumnRing } from '../signals/column-ring';
import { SignalHistory } from '../signals/signal-history';
import { compareDpRanks } from '../signals/evaluate/kv';

export interface GroupColumns {
  /** Epoch ms, ascending. */
  t: Float64Array;
  /** Signal key (with the role prefix) → value per row; NaN = gap. */
  cols: Map<string, Float32Array>;
}

export class SignalTable extends SignalHistory {
  constructor(readonly groups: Map<string, GroupColumns>) {
    const rings = new Map<string, ColumnRing>();
    const gaps = new Map<ColumnRing, number>();
    for (const [name, g] of groups) {
      const ring = ColumnRing.over(g.t, g.cols);
      rings.set(name, ring);
      gaps.set(ring, typicalGap(g.t));
    }
    super(rings, { gapMs: (ring) => gaps.get(ring) ?? 3000, absentWhy: 'not in this recording' });
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
