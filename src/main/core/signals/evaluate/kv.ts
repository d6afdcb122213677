// KV-cache usage of one SGLang server at every row of its columns, whatever the SGLang version (reference
// §0.1, §1.3). Sources, best first:
//   kv_tokens         sglang:kv_{used,evictable,available}_tokens + max_total_num_tokens   (E4, PR #22726)
//   full_token_usage  sglang:full_token_usage (× capacity)                                  (E3)
//   num_used_tokens   sglang:num_used_tokens / capacity (gauge, else /server_info)          (all versions)
//   token_usage       sglang:token_usage (× capacity)                                       (all versions, coarse)
// Across dp ranks token counts are summed and the ratio is their quotient (sum used / sum capacity), so the
// headline percentage always agrees with the token counts beside it; the fullest rank is its own figure. Rank
// sets are fixed per series, so rank lookups are precomputed and each row is plain arithmetic.
import type { KvSource } from '@shared/domain';
import {
  EXCLUDES_EVICTABLE,
  KV_METRICS,
  SERVER_INFO_CAPACITY,
  TOKEN_USAGE_CAVEAT,
} from '../../probes/sglang/kv';
import { perRank, type PerRank } from '../rank-math';
import type { TargetColumns } from '../../review/target-columns';

export interface KvMeta {
  source: KvSource;
  sourceMetrics: string[];
  caveat?: string;
}

/** The families any KV source reads, best source first. */
export const KV_SOURCE_METRICS = [
  KV_METRICS.used,
  KV_METRICS.fullTokenUsage,
  KV_METRICS.numUsedTokens,
  KV_METRICS.tokenUsage,
];

/** dp ranks in order: numerically where both are numbers ("2" before "10"), else by text. */
export function compareDpRanks(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  return Number.isFinite(na) && Number.isFinite(nb) && na !== nb ? na - nb : a.localeCompare(b);
}

export interface KvColumns {
  values: Map<string, Float64Array>;
  /** Per row: index into metas of the KV source used, −1 where no KV figure. */
  source: Int8Array;
  metas: KvMeta[];
}

const APPROX_CAPACITY =
  'capacity approximated as used + evictable + available (max_total_num_tokens not exposed); protected tokens are not counted';
const dpCaveat = (ranks: number): string =>
  `${ranks} dp ranks: tokens and % are summed over ranks; the fullest rank is shown beside them`;

/** Index of each rank of `from` among the ranks of `to` (−1 when absent): rank sets are fixed per series. */
function rankMap(from: PerRank, to: PerRank): Int32Array {
  return Int32Array.from(from.ranks.map((r) => to.ranks.indexOf(r)));
}

/** kv.ts rankCapacity: the rank's own capacity gauge when positive, else an equal share of the total. */
function rankCap(
  cap: PerRank,
  map: Int32Array,
  r: number,
  i: number,
  capTotal: number,
  ranks: number,
): number {
  const c = map[r] >= 0 ? cap.values[map[r]][i] : NaN;
  return c > 0 ? c : capTotal / ranks;
}

/** Sum and count of the finite per-rank values at row i. */
function sumAt(p: PerRank, i: number): { sum: number; n: number } {
  let sum = 0;
  let n = 0;
  for (const col of p.values) {
    const v = col[i];
    if (v === v) {
      sum += v;
      n++;
    }
  }
  return { sum, n };
}

export interface KvColumnOptions {
  /** Rows before this one are left NaN (the live push evaluates only the newest row). */
  from?: number;
  /** Total capacity from /server_info, used where no max_total_num_tokens gauge is in the scrape: one number or one per row. */
  capacityFromServerInfo?: number | ArrayLike<number>;
  /** Also write each rank's used and capacity tokens (`kv_rank.<r>.used`, `.capacity`). */
  rankTokens?: boolean;
}

/** The KV figures at every row from `from` on. */
export function kvColumns(cols: TargetColumns, opts: KvColumnOptions = {}): KvColumns {
  const n = cols.rows;
  const keys = [
    'kv_ratio',
    'kv_used',
    'kv_evictable',
    'kv_free',
    'kv_capacity',
    'kv_fullest_rank_ratio',
  ] as const;
  const out = new Map(keys.map((k) => [k as string, new Float64Array(n).fill(NaN)]));
  const [ratioCol, usedCol, evCol, freeCol, capCol, fullestCol] = keys.map((k) => out.get(k)!);
  /**
   * The fullest rank's ratio, and each rank's own with ≥ 2 ranks (`kv_rank.<r>.ratio`; with `rankTokens` also
   * `.used` and `.capacity`, for the KvUsage of one scrape).
   */
  const putRanks = (i: number, labels: string[], ratios: number[], used: number[], caps: number[]): void => {
    if (labels.length < 2) {
      fullestCol[i] = ratioCol[i];
      return;
    }
    fullestCol[i] = Math.max(...ratios);
    const put = (key: string, v: number): void => {
      let col = out.get(key);
      if (!col) out.set(key, (col = new Float64Array(n).fill(NaN)));
      col[i] = v;
    };
    labels.forEach((rank, k) => {
      put(`kv_rank.${rank}.ratio`, ratios[k]);
      if (opts.rankTokens) {
        put(`kv_rank.${rank}.used`, used[k]);
        put(`kv_rank.${rank}.capacity`, caps[k]);
      }
    });
  };
  const source = new Int8Array(n).fill(-1);
  const metas: KvMeta[] = [];
  const metaIndex = new Map<string, number>();
  const present = [
    KV_METRICS.used,
    KV_METRICS.fullTokenUsage,
    KV_METRICS.numUsedTokens,
    KV_METRICS.tokenUsage,
  ].some((m) => cols.has(m));
  if (!present) return { values: out, source, metas };
  const cap = perRank(cols, KV_METRICS.capacity);
  const used = perRank(cols, KV_METRICS.used);
  const ev = perRank(cols, KV_METRICS.evictable);
  const av = perRank(cols, KV_METRICS.available);
  const full = perRank(cols, KV_METRICS.fullTokenUsage);
  const numUsed = perRank(cols, KV_METRICS.numUsedTokens);
  const tokenUsage = perRank(cols, KV_METRICS.tokenUsage);
  const usedToCap = rankMap(used, cap);
  const usedToEv = rankMap(used, ev);
  const usedToAv = rankMap(used, av);
  const fullToCap = rankMap(full, cap);
  const numToCap = rankMap(numUsed, cap);
  const tuToCap = rankMap(tokenUsage, cap);
  const metaOf = (key: string, make: () => KvMeta): number => {
    let idx = metaIndex.get(key);
    if (idx === undefined) {
      idx = metas.length;
      metas.push(make());
      metaIndex.set(key, idx);
    }
    return idx;
  };
  /** A ratio gauge (full_token_usage, token_usage) × capacity, at row i with a known capacity. */
  const fromRatio = (
    i: number,
    capTotal: number,
    p: PerRank,
    map: Int32Array,
    src: KvSource,
    metric: string,
    caveat: string,
  ): void => {
    let tokens = 0;
    let ranks = 0;
    const labels: string[] = [];
    const ratios: number[] = [];
    const usedBy: number[] = [];
    const caps: number[] = [];
    for (const col of p.values) if (col[i] === col[i]) ranks++;
    for (let r = 0; r < p.values.length; r++) {
      const v = p.values[r][i];
      if (v !== v) continue;
      const c = rankCap(cap, map, r, i, capTotal, ranks);
      labels.push(p.ranks[r]);
      ratios.push(v);
      usedBy.push(Math.round(v * c));
      caps.push(c);
      tokens += v * c;
    }
    ratioCol[i] = ranks === 1 ? ratios[0] : tokens / capTotal;
    putRanks(i, labels, ratios, usedBy, caps);
    usedCol[i] = Math.round(tokens);
    freeCol[i] = Math.max(0, capTotal - Math.round(tokens));
    capCol[i] = capTotal;
    source[i] = metaOf(`${src}|${ranks}|${capName}`, () => ({
      source: src,
      sourceMetrics: [metric, capName],
      caveat: [caveat, ...(ranks > 1 ? [dpCaveat(ranks)] : [])].join('; '),
    }));
  };
  const infoCapacity = opts.capacityFromServerInfo;
  let capName: string = KV_METRICS.capacity;
  for (let i = opts.from ?? 0; i < n; i++) {
    // Capacity per rank (positive values only) and in total; else the server's JSON info.
    let capTotal = 0;
    let capN = 0;
    for (const col of cap.values) {
      const v = col[i];
      if (v > 0) {
        capTotal += v;
        capN++;
      }
    }
    capName = KV_METRICS.capacity;
    const info = typeof infoCapacity === 'number' ? infoCapacity : infoCapacity?.[i];
    if (capN === 0 && info !== undefined && Number.isFinite(info) && info > 0) {
      capTotal = info;
      capN = 1;
      capName = SERVER_INFO_CAPACITY;
    }
    const u = sumAt(used, i);
    if (u.n > 0) {
      const e = sumAt(ev, i);
      const a = sumAt(av, i);
      let capacity = capTotal;
      let approx = false;
      if (capN === 0 && e.n > 0 && a.n > 0) {
        approx = true;
        capacity = 0;
      }
      if (capN > 0 || approx) {
        const labels: string[] = [];
        const ratios: number[] = [];
        const usedBy: number[] = [];
        const caps: number[] = [];
        for (let r = 0; r < used.values.length; r++) {
          const uv = used.values[r][i];
          if (uv !== uv) continue;
          let c: number;
          if (approx) {
            const ev0 = usedToEv[r] >= 0 ? ev.values[usedToEv[r]][i] : NaN;
            const av0 = usedToAv[r] >= 0 ? av.values[usedToAv[r]][i] : NaN;
            c = uv + (ev0 === ev0 ? ev0 : 0) + (av0 === av0 ? av0 : 0);
            capacity += c;
          } else c = rankCap(cap, usedToCap, r, i, capTotal, u.n);
          labels.push(used.ranks[r]);
          ratios.push(c > 0 ? uv / c : 0);
          usedBy.push(uv);
          caps.push(c);
        }
        ratioCol[i] = capacity > 0 ? u.sum / capacity : 0;
        putRanks(i, labels, ratios, usedBy, caps);
        usedCol[i] = u.sum;
        evCol[i] = e.n > 0 ? e.sum : NaN;
        freeCol[i] = a.n > 0 ? a.sum : Math.max(0, capacity - u.sum - (e.n > 0 ? e.sum : 0));
        capCol[i] = capacity;
        source[i] = metaOf(`kv|${e.n > 0}|${a.n > 0}|${approx}|${u.n}|${capName}`, () => {
          const caveats = [...(approx ? [APPROX_CAPACITY] : []), ...(u.n > 1 ? [dpCaveat(u.n)] : [])];
          return {
            source: 'kv_tokens',
            sourceMetrics: [
              KV_METRICS.used,
              ...(e.n > 0 ? [KV_METRICS.evictable] : []),
              ...(a.n > 0 ? [KV_METRICS.available] : []),
              approx ? `${KV_METRICS.used}+evictable+available` : capName,
            ],
            ...(caveats.length ? { caveat: caveats.join('; ') } : {}),
          };
        });
        continue;
      }
    }
    if (sumAt(full, i).n > 0) {
      if (capN > 0)
        fromRatio(
          i,
          capTotal,
          full,
          fullToCap,
          'full_token_usage',
          KV_METRICS.fullTokenUsage,
          `full-attention pool; ${EXCLUDES_EVICTABLE}`,
        );
      continue;
    }
    const nu = sumAt(numUsed, i);
    if (nu.n > 0) {
      if (capN > 0) {
        const labels: string[] = [];
        const ratios: number[] = [];
        const usedBy: number[] = [];
        const caps: number[] = [];
        for (let r = 0; r < numUsed.values.length; r++) {
          const v = numUsed.values[r][i];
          if (v !== v) continue;
          const c = rankCap(cap, numToCap, r, i, capTotal, nu.n);
          labels.push(numUsed.ranks[r]);
          ratios.push(c > 0 ? v / c : 0);
          usedBy.push(v);
          caps.push(c);
        }
        ratioCol[i] = capTotal > 0 ? nu.sum / capTotal : 0;
        putRanks(i, labels, ratios, usedBy, caps);
        usedCol[i] = nu.sum;
        freeCol[i] = Math.max(0, capTotal - nu.sum);
        capCol[i] = capTotal;
        source[i] = metaOf(`num_used|${nu.n}|${capName}`, () => ({
          source: 'num_used_tokens',
          sourceMetrics: [KV_METRICS.numUsedTokens, capName],
          caveat: [EXCLUDES_EVICTABLE, ...(nu.n > 1 ? [dpCaveat(nu.n)] : [])].join('; '),
        }));
      }
      continue;
    }
    if (sumAt(tokenUsage, i).n > 0 && capN > 0)
      fromRatio(i, capTotal, tokenUsage, tuToCap, 'token_usage', KV_METRICS.tokenUsage, TOKEN_USAGE_CAVEAT);
  }
  return { values: out, source, metas };
}
