// Point-in-time figures of one scrape over whole recorded columns, with the rank semantics of
// probes/sglang/series.ts: per dp rank the replicas (tp/pp/ep ranks, pid) collapse with max, then ranks combine
// (sum, max, min or mean); when totals under priority="" exist, per-priority series are left out.
import { rowAt, type AlignedSeries, type TargetColumns } from '../review/target-columns';
import { f64 } from './scratch-arrays';

export type RankAgg = 'sum' | 'max' | 'min' | 'mean';

/** Per dp rank, the value of `name` at every row (NaN where that rank has no sample in the scrape). */
export interface PerRank {
  /** Shared between calls over the same series list: read-only. */
  ranks: string[];
  values: Float64Array[];
}

export function perRank(cols: TargetColumns, name: string): PerRank {
  const { ranks, byRank } = rankGroups(cols.series(name), cols.keptLists);
  const values = byRank.map((list) => {
    const out = f64(cols.rows, NaN);
    for (const s of list)
      for (let k = 0; k < s.v.length; k++) {
        const row = rowAt(s, k);
        const cur = out[row];
        out[row] = cur !== cur ? s.v[k] : Math.max(cur, s.v[k]);
      }
    return out;
  });
  return { ranks, values };
}

interface RankGroups {
  /** Length of the list when grouped: lists only grow while their columns are built. */
  length: number;
  ranks: string[];
  byRank: AlignedSeries[][];
}

/**
 * The groupings by series list, for columns whose lists are kept (TargetColumns.keptLists). The live columns
 * hand out the same lists scrape after scrape while no series comes or goes (and a series' labels never
 * change), so the ranks are grouped once per list, not per gauge per scrape (a Map and lists per call were a
 * good part of the live push's allocation in a fleet).
 */
const rankGroupsMemo = new WeakMap<readonly AlignedSeries[], RankGroups>();

/** The series of one name by dp rank (ranks as first met), without per-priority series when totals exist. */
function rankGroups(all: readonly AlignedSeries[], kept: boolean): RankGroups {
  // Lists made for one evaluation (a scrape's own columns, a tail) would only fill the memo.
  const known = kept ? rankGroupsMemo.get(all) : undefined;
  if (known && known.length === all.length) return known;
  let series = all;
  if (series.some((s) => s.labels.priority === '')) series = series.filter((s) => !s.labels.priority);
  const byRank = new Map<string, AlignedSeries[]>();
  for (const s of series) {
    const r = s.labels.dp_rank ?? '';
    const list = byRank.get(r);
    if (list) list.push(s);
    else byRank.set(r, [s]);
  }
  const groups: RankGroups = { length: all.length, ranks: [...byRank.keys()], byRank: [...byRank.values()] };
  // The empty list of a name the columns lack is a new array every call: not worth keeping.
  if (kept && all.length > 0) rankGroupsMemo.set(all, groups);
  return groups;
}

/** Ranks combined per row; NaN where no rank has a value (the live code's undefined). */
export function combineRanks(p: PerRank, agg: RankAgg, rows: number): Float64Array {
  const out = f64(rows, NaN);
  if (p.values.length === 1 && agg !== 'mean') {
    out.set(p.values[0]);
    return out;
  }
  for (let i = 0; i < rows; i++) {
    let acc = NaN;
    let n = 0;
    for (const col of p.values) {
      const v = col[i];
      if (v !== v) continue;
      if (n === 0) acc = v;
      else if (agg === 'sum' || agg === 'mean') acc += v;
      else if (agg === 'max') acc = Math.max(acc, v);
      else acc = Math.min(acc, v);
      n++;
    }
    out[i] = n > 0 && agg === 'mean' ? acc / n : acc;
  }
  return out;
}

export function aggregate(cols: TargetColumns, name: string, agg: RankAgg): Float64Array {
  return combineRanks(perRank(cols, name), agg, cols.rows);
}

/**
 * A histogram-era kv_transfer_* figure: per rank _sum / _count (mean since server start), then the worst rank
 * (min for speeds, max otherwise); NaN before the first observation.
 */
export function histogramMean(cols: TargetColumns, name: string, agg: RankAgg): Float64Array {
  const sums = perRank(cols, `${name}_sum`);
  const counts = perRank(cols, `${name}_count`);
  const out = f64(cols.rows, NaN);
  for (let c = 0; c < counts.ranks.length; c++) {
    const s = sums.ranks.indexOf(counts.ranks[c]);
    if (s < 0) continue;
    const sc = sums.values[s];
    const cc = counts.values[c];
    for (let i = 0; i < cols.rows; i++) {
      const count = cc[i];
      const sum = sc[i];
      if (!(count > 0) || sum !== sum) continue;
      const mean = sum / count;
      const cur = out[i];
      out[i] = cur !== cur ? mean : agg === 'min' ? Math.min(cur, mean) : Math.max(cur, mean);
    }
  }
  return out;
}

const presenceMemo = new WeakMap<TargetColumns, Map<string, Uint8Array>>();

/** 1 at rows where the scrape had at least one (finite) sample of `name`. Shared: do not modify. */
export function presence(cols: TargetColumns, name: string): Uint8Array {
  let memo = presenceMemo.get(cols);
  if (!memo) presenceMemo.set(cols, (memo = new Map()));
  let out = memo.get(name);
  if (out) return out;
  out = new Uint8Array(cols.rows);
  for (const s of cols.series(name)) for (let k = 0; k < s.v.length; k++) out[rowAt(s, k)] = 1;
  memo.set(name, out);
  return out;
}
