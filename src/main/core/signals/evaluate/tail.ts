// The rows of a target from `from` on, as columns of their own. Point-in-time figures (gauges, KV, the router's
// workers) need no window, so the live push reads them over its newest row only instead of the whole rate
// window it keeps for rates and quantiles: one row of work per scrape, not sixty.
import { TargetColumns, type AlignedSeries } from '../../review/target-columns';
import { f64 } from '../scratch-arrays';

export function tailColumns(cols: TargetColumns, from: number): TargetColumns {
  if (from <= 0) return cols;
  if (cols.newest && from === cols.rows - 1) return cols.newest;
  const out = new TargetColumns(cols.target, cols.t.subarray(from));
  out.families = cols.families;
  for (const name of cols.names())
    for (const s of cols.series(name)) {
      const t = tailSeries(s, from);
      if (t) out.add(t);
    }
  return out;
}

function tailSeries(s: AlignedSeries, from: number): AlignedSeries | null {
  if (!s.rows) {
    const skip = Math.max(0, from - s.row0);
    if (skip >= s.v.length) return null;
    return { name: s.name, labels: s.labels, rows: null, row0: s.row0 + skip - from, v: s.v.subarray(skip) };
  }
  let lo = 0;
  let hi = s.rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s.rows[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= s.rows.length) return null;
  const rows = s.rows.slice(lo);
  for (let k = 0; k < rows.length; k++) rows[k] -= from;
  return { name: s.name, labels: s.labels, rows, row0: 0, v: s.v.subarray(lo) };
}

/** A column of the tail's rows placed back at rows `from`… of an `n`-row target (NaN before). */
export function widen(col: Float64Array, n: number, from: number): Float64Array {
  if (from <= 0) return col;
  const out = f64(n, NaN);
  out.set(col, from);
  return out;
}
