// Every dashboard signal of one recorded target, computed over whole columns: the same keys, rank rules and
// window semantics as the live path (SignalsStore.ingest → server-signals.ts, kv.ts, derived.ts, router.ts),
// at every recorded scrape at once. Replaying the scrapes through the live code costs ~3.5 ms per scrape on the
// build machine (15 minutes for 24 h); this costs well under a second. test/review/signal-columns.test.ts holds
// the two side by side on a recorded session.
import type { SignalMissing } from '@shared/contract';
import type { KvSource, Role } from '@shared/domain';
import { isDerivedInput, isControlPath } from '../probes/sglang/derived';
import { KV_METRICS } from '../probes/sglang/kv';
import { normalizeWorkerUrl } from '../probes/sglang/router';
import { defsFor } from '../signals/catalog';
import { aggregate, histogramMean, perRank, presence, type PerRank, type RankAgg } from './rank-math';
import { rowAt, type TargetColumns } from './target-columns';
import { anyInWindow, latestInWindow, windowQuantiles, windowSum, type LabelFilter } from './window-math';

export interface KvMeta {
  source: KvSource;
  sourceMetrics: string[];
  caveat?: string;
}

export interface TargetSignals {
  role: Role;
  /** Signal key without the role prefix → value at every row of the target (NaN = null). */
  values: Map<string, Float64Array>;
  /** Per row: index into kvMetas of the KV source used, −1 where no KV figure. */
  kvSource: Int8Array;
  kvMetas: KvMeta[];
  /** Keys (with role prefix) the target never exposed, with the metric names that would provide them. */
  notExposed: Record<string, SignalMissing>;
}

const TTFT = 'sglang:time_to_first_token_seconds';
const ITL = 'sglang:inter_token_latency_seconds';
const TPOT_LEGACY = 'sglang:time_per_output_token_seconds';
const E2E = 'sglang:e2e_request_latency_seconds';
const KV_LAT = 'sglang:kv_transfer_latency_ms';
const KV_SPEED = 'sglang:kv_transfer_speed_gb_s';
const KV_TOTAL_MB = 'sglang:kv_transfer_total_mb';
const PROMPT = 'sglang:prompt_tokens_total';
const GENERATION = 'sglang:generation_tokens_total';
const CACHED = 'sglang:cached_tokens_total';
const REQUESTS = 'sglang:num_requests_total';
const TRANSFER_FAILED = 'sglang:num_transfer_failed_reqs_total';
const BOOTSTRAP_FAILED = 'sglang:num_bootstrap_failed_reqs_total';
const RETRACTED = 'sglang:num_retracted_requests_total';

/** server-signals.ts SPECS: key, metric names (newest first), rank aggregation, histogram-era capable. */
const POINT_SPECS: [string, string[], RankAgg, boolean?][] = [
  ['running', ['sglang:num_running_reqs'], 'sum'],
  ['queued', ['sglang:num_queue_reqs'], 'sum'],
  [
    'prefill_bootstrap_queue',
    ['sglang:num_prefill_bootstrap_queue_reqs', 'sglang:num_prefill_prealloc_queue_reqs'],
    'sum',
  ],
  ['prefill_inflight_queue', ['sglang:num_prefill_inflight_queue_reqs'], 'sum'],
  ['decode_prealloc_queue', ['sglang:num_decode_prealloc_queue_reqs'], 'sum'],
  ['decode_transfer_queue', ['sglang:num_decode_transfer_queue_reqs'], 'sum'],
  ['gen_throughput', ['sglang:gen_throughput'], 'sum'],
  ['cache_hit_rate', ['sglang:cache_hit_rate'], 'mean'],
  ['pending_prealloc_token_usage', ['sglang:pending_prealloc_token_usage'], 'max'],
  ['retracted', ['sglang:num_retracted_reqs'], 'sum'],
  ['kv_transfer_latency_ms', [KV_LAT], 'max', true],
  ['kv_transfer_speed_gb_s', [KV_SPEED], 'min', true],
  ['kv_transfer_bootstrap_ms', ['sglang:kv_transfer_bootstrap_ms'], 'max', true],
  ['kv_transfer_alloc_ms', ['sglang:kv_transfer_alloc_ms'], 'max', true],
  ['kv_transfer_total_mb', [KV_TOTAL_MB], 'max', true],
  ['bootstrap_failed_total', [BOOTSTRAP_FAILED], 'sum'],
  ['transfer_failed_total', [TRANSFER_FAILED], 'sum'],
];

const ROUTER_HEALTH = { smg: 'smg_worker_health', sgl_router: 'sgl_router_worker_health' } as const;
const ROUTER_CB = { smg: 'smg_worker_cb_state', sgl_router: 'sgl_router_cb_state' } as const;
const ROUTER_ACTIVE = {
  smg: 'smg_worker_requests_active',
  sgl_router: 'sgl_router_running_requests',
} as const;

const INPUTS = new Set<string>([
  ...POINT_SPECS.flatMap(([, names, , hist]) =>
    names.flatMap((n) => (hist ? [n, `${n}_sum`, `${n}_count`, `${n}_bucket`] : [n])),
  ),
  ...Object.values(KV_METRICS),
  RETRACTED,
  ...Object.values(ROUTER_HEALTH),
  ...Object.values(ROUTER_CB),
  ...Object.values(ROUTER_ACTIVE),
  'sgl_router_pd_prefill_requests_total',
  'sgl_router_pd_decode_requests_total',
  // Every metric the catalogue names as a signal's source, so "not exposed" is judged on what was recorded.
  ...(['prefill', 'decode', 'router'] as const).flatMap((r) =>
    Object.values(defsFor(r)).flatMap((d) => d.metrics ?? []),
  ),
]);

/** The sample names review mode decodes from a recording (everything else is skipped when reading). */
export function isReviewInput(name: string): boolean {
  return INPUTS.has(name) || isDerivedInput(name) || name.startsWith('smg_engine_');
}

function put(out: Map<string, Float64Array>, key: string, col: Float64Array): void {
  out.set(key, col);
}

/** First metric name present in each scrape wins (a renamed gauge), as server-signals.ts reads it. */
function pointSpec(cols: TargetColumns, names: string[], agg: RankAgg, hist: boolean): Float64Array {
  const n = cols.rows;
  const out = new Float64Array(n).fill(NaN);
  const decided = new Uint8Array(n);
  for (const name of names) {
    // A histogram scrape has its _count (one series) whenever it has buckets (many): test the cheap one.
    const histForm = !hist
      ? null
      : cols.has(`${name}_count`)
        ? presence(cols, `${name}_count`)
        : cols.has(`${name}_bucket`)
          ? presence(cols, `${name}_bucket`)
          : null;
    const gaugeHere = cols.has(name) ? presence(cols, name) : null;
    if (!histForm && !gaugeHere) continue;
    const hv = histForm ? histogramMean(cols, name, agg) : null;
    const gv = gaugeHere ? aggregate(cols, name, agg) : null;
    for (let i = 0; i < n; i++) {
      if (decided[i]) continue;
      if (histForm && histForm[i]) {
        out[i] = hv![i];
        decided[i] = 1;
      } else if (gaugeHere && gaugeHere[i]) {
        out[i] = gv![i];
        decided[i] = 1;
      }
    }
  }
  return out;
}

function or(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] | b[i];
  return out;
}

function orNull(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] === a[i] ? a[i] : b[i];
  return out;
}

/** Signals of an SGLang server (prefill or decode) at every recorded scrape. */
export function serverSignalColumns(
  cols: TargetColumns,
  role: Role,
  opts: { rateWindowMs?: number } = {},
): TargetSignals {
  const w = opts.rateWindowMs ?? 60_000;
  const n = cols.rows;
  const values = new Map<string, Float64Array>();
  for (const [key, names, agg, hist] of POINT_SPECS) put(values, key, pointSpec(cols, names, agg, !!hist));
  // server-signals.ts notOn: the gauge is zeroed at every decode log, so decode never reads it.
  if (role === 'decode') put(values, 'cache_hit_rate', new Float64Array(n).fill(NaN));

  const Q = [0.5, 0.9, 0.99];
  const P = ['p50', 'p90', 'p99'];
  const itlHere = anyInWindow(cols, `${ITL}_bucket`, w);
  const itl = windowQuantiles(cols, ITL, Q, w);
  const tpot = windowQuantiles(cols, TPOT_LEGACY, Q, w);
  const quant: [string, Float64Array[]][] = [
    ['ttft', windowQuantiles(cols, TTFT, Q, w)],
    ['e2e', windowQuantiles(cols, E2E, Q, w)],
  ];
  for (const [base, qs] of quant) P.forEach((p, k) => put(values, `${base}_${p}_s`, qs[k]));
  P.forEach((p, k) => {
    const col = new Float64Array(n);
    for (let i = 0; i < n; i++) col[i] = itlHere[i] ? itl[k][i] : tpot[k][i];
    put(values, `itl_${p}_s`, col);
  });
  const lat = windowQuantiles(cols, KV_LAT, Q, w);
  P.forEach((p, k) => put(values, `kv_transfer_latency_${p}_ms`, lat[k]));

  put(values, 'prompt_tokens_per_s', windowSum(cols, PROMPT, w, { rate: true }));
  put(values, 'generation_tokens_per_s', windowSum(cols, GENERATION, w, { rate: true }));
  put(
    values,
    'requests_per_s',
    orNull(windowSum(cols, REQUESTS, w, { rate: true }), windowSum(cols, `${E2E}_count`, w, { rate: true })),
  );
  put(values, 'cache_hit_rate_window', cacheHitRate(cols, w));
  put(values, 'kv_transfer_gb_s', kvTransferGbps(cols, w));
  for (const [key, name] of [
    ['transfer_failed_per_min', TRANSFER_FAILED],
    ['bootstrap_failed_per_min', BOOTSTRAP_FAILED],
    ['retracted_per_min', RETRACTED],
  ] as const) {
    const rate = windowSum(cols, name, w, { rate: true });
    const here = presence(cols, name);
    const col = new Float64Array(n);
    for (let i = 0; i < n; i++) col[i] = rate[i] === rate[i] ? rate[i] * 60 : here[i] ? 0 : NaN;
    put(values, key, col);
  }
  const kv = kvColumns(cols);
  for (const [k, col] of kv.values) put(values, k, col);
  const missing = notExposed(cols, role);
  if (kv.metas.length === 0)
    missing[`${role}.kv_ratio`] = {
      expected: [KV_METRICS.used, KV_METRICS.fullTokenUsage, KV_METRICS.numUsedTokens, KV_METRICS.tokenUsage],
      why: 'no KV-cache figure in this recording: the server exposed none of these with a known capacity (a capacity read from /server_info is not recorded)',
    };
  return { role, values, kvSource: kv.source, kvMetas: kv.metas, notExposed: missing };
}

function cacheHitRate(cols: TargetColumns, w: number): Float64Array {
  const n = cols.rows;
  const prompt = windowSum(cols, PROMPT, w);
  const hasTotal = anyInWindow(cols, CACHED, w, (l) => l.cache_source === 'total');
  const cachedTotal = windowSum(cols, CACHED, w, { filter: (l) => l.cache_source === 'total' });
  const cachedAll = windowSum(cols, CACHED, w);
  const out = new Float64Array(n).fill(NaN);
  for (let i = 0; i < n; i++) {
    const p = prompt[i];
    if (!(p > 0)) continue;
    const c = hasTotal[i] ? cachedTotal[i] : cachedAll[i];
    if (c === c) out[i] = Math.min(1, c / p);
  }
  return out;
}

function kvTransferGbps(cols: TargetColumns, w: number): Float64Array {
  const n = cols.rows;
  const out = new Float64Array(n).fill(NaN);
  // Gauge era: the slowest rank's last reported speed in the window.
  latestInWindow(cols, KV_SPEED, w, (i, latest) => {
    const priorityTotals = latest.some((s) => s.labels.priority === '');
    const byRank = new Map<string, number>();
    for (const s of latest) {
      if (priorityTotals && s.labels.priority) continue;
      const r = s.labels.dp_rank ?? '';
      const prev = byRank.get(r);
      byRank.set(r, prev === undefined ? s.value : Math.max(prev, s.value));
    }
    if (byRank.size > 0) out[i] = Math.min(...byRank.values());
  });
  const dSum = windowSum(cols, `${KV_SPEED}_sum`, w);
  const dCount = windowSum(cols, `${KV_SPEED}_count`, w);
  const mbPerS = windowSum(cols, `${KV_TOTAL_MB}_sum`, w, { rate: true });
  for (let i = 0; i < n; i++) {
    if (out[i] === out[i]) continue;
    if (dSum[i] === dSum[i] && dCount[i] > 0) out[i] = dSum[i] / dCount[i];
    else if (mbPerS[i] === mbPerS[i]) out[i] = mbPerS[i] / 1000;
  }
  return out;
}

const TOKEN_USAGE_CAVEAT =
  'rounded to 2 decimals by SGLang versions before early 2026; excludes evictable radix-cache tokens';
const EXCLUDES_EVICTABLE = 'excludes evictable radix-cache tokens';
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

/**
 * kv.ts extractKv at every row (no /server_info capacity: a recording holds only what /metrics said). Rank sets
 * are fixed per series, so rank lookups are precomputed and each row is plain arithmetic.
 */
function kvColumns(cols: TargetColumns): {
  values: Map<string, Float64Array>;
  source: Int8Array;
  metas: KvMeta[];
} {
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
  /** kv.ts rankFields + signals-store kvValues: the fullest rank's ratio, and each rank's with ≥ 2 ranks. */
  const putRanks = (i: number, labels: string[], ratios: number[]): void => {
    if (labels.length < 2) {
      fullestCol[i] = ratioCol[i];
      return;
    }
    fullestCol[i] = Math.max(...ratios);
    labels.forEach((rank, k) => {
      const key = `kv_rank.${rank}.ratio`;
      let col = out.get(key);
      if (!col) out.set(key, (col = new Float64Array(n).fill(NaN)));
      col[i] = ratios[k];
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
    for (const col of p.values) if (col[i] === col[i]) ranks++;
    for (let r = 0; r < p.values.length; r++) {
      const v = p.values[r][i];
      if (v !== v) continue;
      labels.push(p.ranks[r]);
      ratios.push(v);
      tokens += v * rankCap(cap, map, r, i, capTotal, ranks);
    }
    ratioCol[i] = ranks === 1 ? ratios[0] : tokens / capTotal;
    putRanks(i, labels, ratios);
    usedCol[i] = Math.round(tokens);
    freeCol[i] = Math.max(0, capTotal - Math.round(tokens));
    capCol[i] = capTotal;
    source[i] = metaOf(`${src}|${ranks}`, () => ({
      source: src,
      sourceMetrics: [metric, KV_METRICS.capacity],
      caveat: [caveat, ...(ranks > 1 ? [dpCaveat(ranks)] : [])].join('; '),
    }));
  };
  for (let i = 0; i < n; i++) {
    // Capacity per rank (positive values only) and in total.
    let capTotal = 0;
    let capN = 0;
    for (const col of cap.values) {
      const v = col[i];
      if (v > 0) {
        capTotal += v;
        capN++;
      }
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
        }
        ratioCol[i] = capacity > 0 ? u.sum / capacity : 0;
        putRanks(i, labels, ratios);
        usedCol[i] = u.sum;
        evCol[i] = e.n > 0 ? e.sum : NaN;
        freeCol[i] = a.n > 0 ? a.sum : Math.max(0, capacity - u.sum - (e.n > 0 ? e.sum : 0));
        capCol[i] = capacity;
        source[i] = metaOf(`kv|${e.n > 0}|${a.n > 0}|${approx}|${u.n}`, () => {
          const caveats = [...(approx ? [APPROX_CAPACITY] : []), ...(u.n > 1 ? [dpCaveat(u.n)] : [])];
          return {
            source: 'kv_tokens',
            sourceMetrics: [
              KV_METRICS.used,
              ...(e.n > 0 ? [KV_METRICS.evictable] : []),
              ...(a.n > 0 ? [KV_METRICS.available] : []),
              approx ? `${KV_METRICS.used}+evictable+available` : KV_METRICS.capacity,
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
        for (let r = 0; r < numUsed.values.length; r++) {
          const v = numUsed.values[r][i];
          if (v !== v) continue;
          const c = rankCap(cap, numToCap, r, i, capTotal, nu.n);
          labels.push(numUsed.ranks[r]);
          ratios.push(c > 0 ? v / c : 0);
        }
        ratioCol[i] = capTotal > 0 ? nu.sum / capTotal : 0;
        putRanks(i, labels, ratios);
        usedCol[i] = nu.sum;
        freeCol[i] = Math.max(0, capTotal - nu.sum);
        capCol[i] = capTotal;
        source[i] = metaOf(`num_used|${nu.n}`, () => ({
          source: 'num_used_tokens',
          sourceMetrics: [KV_METRICS.numUsedTokens, KV_METRICS.capacity],
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

const trafficOnly: LabelFilter = (l) => !isControlPath(l.path ?? l.route);
const is5xx = (l: Record<string, string>): boolean => /^5\d\d$/.test(l.status_code ?? '');

/** Signals of the router (smg or sglang-router) at every recorded scrape. */
export function routerSignalColumns(
  cols: TargetColumns,
  opts: { rateWindowMs?: number } = {},
): TargetSignals {
  const w = opts.rateWindowMs ?? 60_000;
  const n = cols.rows;
  const values = new Map<string, Float64Array>();
  const smgHere = or(
    anyInWindow(cols, 'smg_router_requests_total', w),
    anyInWindow(cols, 'smg_http_responses_total', w),
  );
  const pickCol = (a: Float64Array, b: Float64Array): Float64Array => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = smgHere[i] ? a[i] : b[i];
    return out;
  };
  const rate = (name: string, filter?: LabelFilter): Float64Array =>
    windowSum(cols, name, w, { rate: true, filter });
  const inc = (name: string, filter?: LabelFilter): Float64Array => windowSum(cols, name, w, { filter });
  const share = (part: Float64Array, whole: Float64Array): Float64Array => {
    const out = new Float64Array(n).fill(NaN);
    for (let i = 0; i < n; i++)
      if (whole[i] > 0) out[i] = Math.min(1, (part[i] === part[i] ? part[i] : 0) / whole[i]);
    return out;
  };
  const smgRequests = orNull(rate('smg_router_requests_total'), rate('smg_http_requests_total', trafficOnly));
  const smgShare = share(
    inc('smg_http_responses_total', (l) => trafficOnly(l) && is5xx(l)),
    inc('smg_http_responses_total', trafficOnly),
  );
  // As deriveRouterSignals: a PD-mode sglang-router (≤ 0.2.4) records only sgl_router_pd_*.
  const pdHere = anyInWindow(cols, 'sgl_router_pd_requests_total', w);
  const pickPd = (pd: Float64Array, regular: Float64Array): Float64Array => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = pdHere[i] ? pd[i] : regular[i];
    return out;
  };
  const pdErrors = new Float64Array(n).fill(NaN);
  for (const name of [
    'sgl_router_pd_errors_total',
    'sgl_router_pd_prefill_errors_total',
    'sgl_router_pd_decode_errors_total',
  ]) {
    const col = inc(name);
    for (let i = 0; i < n; i++)
      if (col[i] === col[i]) pdErrors[i] = (pdErrors[i] === pdErrors[i] ? pdErrors[i] : 0) + col[i];
  }
  const oldRequests = pickPd(
    rate('sgl_router_pd_requests_total'),
    rate('sgl_router_requests_total', trafficOnly),
  );
  const upstreamAll = inc('sgl_router_upstream_http_responses_total', trafficOnly);
  const oldShare = share(
    inc('sgl_router_upstream_http_responses_total', (l) => trafficOnly(l) && is5xx(l)),
    upstreamAll,
  );
  const oldErrShare = pickPd(
    share(pdErrors, inc('sgl_router_pd_requests_total')),
    share(inc('sgl_router_request_errors_total', trafficOnly), inc('sgl_router_requests_total', trafficOnly)),
  );
  const oldShareAll = new Float64Array(n);
  for (let i = 0; i < n; i++)
    oldShareAll[i] = upstreamAll[i] === upstreamAll[i] ? oldShare[i] : oldErrShare[i];
  const requests = pickCol(smgRequests, oldRequests);
  const errorShare = pickCol(smgShare, oldShareAll);
  const [smgP50, smgP99] = windowQuantiles(cols, 'smg_router_request_duration_seconds', [0.5, 0.99], w);
  const [regP50, regP99] = windowQuantiles(cols, 'sgl_router_request_duration_seconds', [0.5, 0.99], w);
  const [pdP50, pdP99] = windowQuantiles(cols, 'sgl_router_pd_request_duration_seconds', [0.5, 0.99], w);
  const oldP50 = pickPd(pdP50, regP50);
  const oldP99 = pickPd(pdP99, regP99);
  values.set('router_requests_per_s', requests);
  values.set('router_error_share', errorShare);
  values.set('router_latency_p50_s', pickCol(smgP50, oldP50));
  values.set('router_latency_p99_s', pickCol(smgP99, oldP99));
  const errors = new Float64Array(n);
  for (let i = 0; i < n; i++) errors[i] = requests[i] * errorShare[i];
  values.set('router_errors_per_s', errors);
  const workers = workerColumns(cols);
  if (workers) {
    values.set('workers_total', workers.total);
    values.set('workers_healthy', workers.healthy);
  }
  return {
    role: 'router',
    values,
    kvSource: new Int8Array(n).fill(-1),
    kvMetas: [],
    notExposed: notExposed(cols, 'router'),
  };
}

/** router.ts routerHealthFromMetrics → workers_total / workers_healthy at every row. */
function workerColumns(cols: TargetColumns): { total: Float64Array; healthy: Float64Array } | null {
  const names = cols.names();
  const era = names.some((x) => x.startsWith('smg_'))
    ? 'smg'
    : names.some((x) => x.startsWith('sgl_router_'))
      ? 'sgl_router'
      : null;
  if (!era) return null;
  const n = cols.rows;
  const urls = new Map<string, number>();
  const idOf = (labels: Record<string, string>): number => {
    const raw = labels.worker ?? labels.worker_url;
    if (!raw) return -1;
    const url = normalizeWorkerUrl(raw);
    let id = urls.get(url);
    if (id === undefined) urls.set(url, (id = urls.size));
    return id;
  };
  // Per worker and row: seen (any gauge), health (NaN = unknown), removed.
  const seen: Uint8Array[] = [];
  const health: Float64Array[] = [];
  const removed: Uint8Array[] = [];
  const slot = (id: number): void => {
    while (seen.length <= id) {
      seen.push(new Uint8Array(n));
      health.push(new Float64Array(n).fill(NaN));
      removed.push(new Uint8Array(n));
    }
  };
  const each = (name: string, f: (id: number, row: number, v: number) => void): void => {
    for (const s of cols.series(name)) {
      const id = idOf(s.labels);
      if (id < 0) continue;
      slot(id);
      for (let k = 0; k < s.v.length; k++) f(id, rowAt(s, k), s.v[k]);
    }
  };
  each(ROUTER_HEALTH[era], (id, r, v) => {
    seen[id][r] = 1;
    if (v < 0) {
      removed[id][r] = 1;
      health[id][r] = 0;
    } else health[id][r] = v >= 1 ? 1 : 0;
  });
  each(ROUTER_CB[era], (id, r, v) => {
    seen[id][r] = 1;
    if (v === -1) {
      removed[id][r] = 1;
      health[id][r] = 0;
    }
  });
  each(ROUTER_ACTIVE[era], (id, r) => (seen[id][r] = 1));
  const roleNames =
    era === 'smg'
      ? names.filter((x) => x.startsWith('smg_engine_'))
      : ['sgl_router_pd_prefill_requests_total', 'sgl_router_pd_decode_requests_total'];
  for (const name of roleNames)
    for (const s of cols.series(name)) {
      if (era === 'smg' && !s.labels.role) continue;
      const id = idOf(s.labels);
      if (id < 0) continue;
      slot(id);
      for (let k = 0; k < s.v.length; k++) seen[id][rowAt(s, k)] = 1;
    }
  const totalCol = new Float64Array(n);
  const healthyCol = new Float64Array(n);
  for (let id = 0; id < seen.length; id++)
    for (let i = 0; i < n; i++) {
      if (!seen[id][i] || removed[id][i]) continue;
      totalCol[i]++;
      if (health[id][i] === 1) healthyCol[i]++;
    }
  return { total: totalCol, healthy: healthyCol };
}

function notExposed(cols: TargetColumns, role: Role): Record<string, SignalMissing> {
  const out: Record<string, SignalMissing> = {};
  for (const [name, def] of Object.entries(defsFor(role))) {
    if (!def.metrics) continue;
    if (def.metrics.some((m) => cols.has(m) || cols.has(`${m}_count`))) continue;
    out[`${role}.${name}`] = {
      expected: def.metrics,
      why: 'not in this recording: the server did not expose it while the session was recorded (an older SGLang version, or no request of its kind)',
    };
  }
  return out;
}
