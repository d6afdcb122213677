// KV-cache usage of one SGLang server from its /metrics, whatever the SGLang version (reference §0.1, §1.3).
//
// Sources, best first:
//   kv_tokens         sglang:kv_{used,evictable,available}_tokens + max_total_num_tokens   (v0.5.11+, PR #22726)
//   full_token_usage  sglang:full_token_usage (× capacity)                                  (PR #19982, 2026-03)
//   num_used_tokens   sglang:num_used_tokens / capacity (gauge, else /server_info)          (all versions)
//   token_usage       sglang:token_usage (× capacity)                                       (all versions, coarse)
// engine_type is never consulted: it read "unified" on PD servers until PR #18552. The caller knows the role.
//
// Across dp ranks token counts are summed and `ratio` is their quotient (sum used / sum capacity), so the
// headline percentage always agrees with the token counts beside it. The fullest rank is reported on its own
// (`fullestRank`, `ranks`) because a request is refused by the rank it lands on, not by the average: alerts
// watch that figure, the headline does not.

import type { KvSource, KvUsage } from '@shared/domain';
import type { Exposition } from '../exposition/types';
import { perDpRank, viewOf, type MetricView } from './series';

export const KV_METRICS = {
  used: 'sglang:kv_used_tokens',
  evictable: 'sglang:kv_evictable_tokens',
  available: 'sglang:kv_available_tokens',
  capacity: 'sglang:max_total_num_tokens',
  fullTokenUsage: 'sglang:full_token_usage',
  numUsedTokens: 'sglang:num_used_tokens',
  tokenUsage: 'sglang:token_usage',
} as const;

/** Where a capacity taken from the server's JSON info is credited in `sourceMetrics`. */
export const SERVER_INFO_CAPACITY = '/server_info max_total_num_tokens';

export const TOKEN_USAGE_CAVEAT =
  'rounded to 2 decimals by SGLang versions before early 2026; excludes evictable radix-cache tokens';
const EXCLUDES_EVICTABLE = 'excludes evictable radix-cache tokens';

export interface KvMissing {
  missing: true;
  /** Why no token figure could be produced, in operator terms. */
  reason: string;
  /** Metric names (or endpoints) that would have answered. */
  expected: string[];
  /** True when fetching max_total_num_tokens from /server_info (or /get_server_info) would complete the figure. */
  needsServerInfo?: boolean;
  /** A usage ratio that is known although token counts are not (capacity still unknown). */
  ratioOnly?: { ratio: number; source: KvSource; sourceMetrics: string[]; caveat?: string };
}

export interface KvOptions {
  /** Total KV capacity in tokens as read by serverInfoCapacity(); used when the gauge is absent. */
  capacityFromServerInfo?: number;
}

export function isKvMissing(r: KvUsage | KvMissing): r is KvMissing {
  return 'missing' in r && r.missing === true;
}

/**
 * Share of the pool physically occupied (locked + evictable), as PR #22726 suggests:
 * 1 − available / (available + evictable + used). Undefined unless the kv_tokens source provided the breakdown.
 */
export function kvPhysicalRatio(kv: KvUsage): number | undefined {
  if (kv.evictableTokens === undefined || kv.availableTokens === undefined) return undefined;
  const total = kv.availableTokens + kv.evictableTokens + kv.usedTokens;
  return total > 0 ? 1 - kv.availableTokens / total : undefined;
}

export function extractKv(exp: Exposition, opts: KvOptions = {}): KvUsage | KvMissing {
  const view = viewOf(exp);
  const cap = capacity(view, opts);

  const used = perDpRank(view.samples(KV_METRICS.used));
  if (used.size > 0) {
    const evictable = perDpRank(view.samples(KV_METRICS.evictable));
    const available = perDpRank(view.samples(KV_METRICS.available));
    const evictableTokens = evictable.size > 0 ? sum(evictable) : undefined;
    const availableTokens = available.size > 0 ? sum(available) : undefined;
    const sourceMetrics: string[] = [KV_METRICS.used];
    if (evictableTokens !== undefined) sourceMetrics.push(KV_METRICS.evictable);
    if (availableTokens !== undefined) sourceMetrics.push(KV_METRICS.available);
    const caveats: string[] = [];
    let capUse = cap;
    if (!capUse && evictableTokens !== undefined && availableTokens !== undefined) {
      // The invariant used + evictable + available <= capacity makes the sum a slight underestimate
      // (protected / session-held tokens are missing), still far better than the rounded token_usage.
      const byRank = new Map<string, number>();
      for (const [rank, u] of used)
        byRank.set(rank, u + (evictable.get(rank) ?? 0) + (available.get(rank) ?? 0));
      capUse = { byRank, total: sum(byRank), metric: `${KV_METRICS.used}+evictable+available` };
      caveats.push(
        'capacity approximated as used + evictable + available (max_total_num_tokens not exposed); protected tokens are not counted',
      );
    }
    if (capUse) {
      const r = combineCounts(used, capUse);
      if (r.ranks) caveats.push(dpCaveat(r.ranks.length));
      return {
        usedTokens: r.used,
        capacityTokens: r.capacity,
        ratio: r.ratio,
        ...rankFields(r.ranks),
        ...(evictableTokens !== undefined ? { evictableTokens } : {}),
        ...(availableTokens !== undefined ? { availableTokens } : {}),
        source: 'kv_tokens',
        sourceMetrics: [...sourceMetrics, capUse.metric],
        ...(caveats.length > 0 ? { caveat: caveats.join('; ') } : {}),
      };
    }
    // kv_used alone without capacity: fall through; older gauges or /server_info can still answer.
  }

  const full = perDpRank(view.samples(KV_METRICS.fullTokenUsage));
  if (full.size > 0) {
    return fromRatio(
      full,
      'full_token_usage',
      KV_METRICS.fullTokenUsage,
      `full-attention pool; ${EXCLUDES_EVICTABLE}`,
      cap,
    );
  }

  const numUsed = perDpRank(view.samples(KV_METRICS.numUsedTokens));
  if (numUsed.size > 0) {
    if (cap) {
      const r = combineCounts(numUsed, cap);
      const caveats = [EXCLUDES_EVICTABLE];
      if (r.ranks) caveats.push(dpCaveat(r.ranks.length));
      return {
        usedTokens: r.used,
        capacityTokens: r.capacity,
        ratio: r.ratio,
        ...rankFields(r.ranks),
        source: 'num_used_tokens',
        sourceMetrics: [KV_METRICS.numUsedTokens, cap.metric],
        caveat: caveats.join('; '),
      };
    }
    const tu = perDpRank(view.samples(KV_METRICS.tokenUsage));
    return {
      missing: true,
      reason:
        'sglang:num_used_tokens is exposed but the KV capacity is not: this SGLang version has no ' +
        'sglang:max_total_num_tokens gauge; read max_total_num_tokens from /server_info (or /get_server_info)',
      expected: [KV_METRICS.capacity, '/server_info', '/get_server_info'],
      needsServerInfo: true,
      ...(tu.size > 0
        ? {
            ratioOnly: {
              ratio: Math.max(...tu.values()),
              source: 'token_usage' as const,
              sourceMetrics: [KV_METRICS.tokenUsage],
              caveat: TOKEN_USAGE_CAVEAT,
            },
          }
        : {}),
    };
  }

  const tokenUsage = perDpRank(view.samples(KV_METRICS.tokenUsage));
  if (tokenUsage.size > 0) {
    return fromRatio(tokenUsage, 'token_usage', KV_METRICS.tokenUsage, TOKEN_USAGE_CAVEAT, cap);
  }

  return {
    missing: true,
    reason:
      'no KV-cache metric in this /metrics output: none of sglang:kv_used_tokens, sglang:full_token_usage, ' +
      'sglang:num_used_tokens, sglang:token_usage. Is this an SGLang server started with --enable-metrics, ' +
      'and has its scheduler logged stats yet (gauges appear after the first batch or idle check)?',
    expected: [
      KV_METRICS.used,
      KV_METRICS.fullTokenUsage,
      KV_METRICS.numUsedTokens,
      KV_METRICS.tokenUsage,
      KV_METRICS.capacity,
    ],
  };
}

interface Capacity {
  /** Per dp rank when the gauge carries them; empty when only a total is known. */
  byRank: Map<string, number>;
  total: number;
  metric: string;
}

function capacity(view: MetricView, opts: KvOptions): Capacity | undefined {
  const byRank = perDpRank(view.samples(KV_METRICS.capacity));
  for (const [k, v] of byRank) if (!(v > 0)) byRank.delete(k);
  if (byRank.size > 0) return { byRank, total: sum(byRank), metric: KV_METRICS.capacity };
  const fromInfo = opts.capacityFromServerInfo;
  if (fromInfo !== undefined && Number.isFinite(fromInfo) && fromInfo > 0) {
    return { byRank: new Map(), total: fromInfo, metric: SERVER_INFO_CAPACITY };
  }
  return undefined;
}

/** Capacity of one rank: the gauge when its ranks line up, otherwise an equal share of the total. */
function rankCapacity(cap: Capacity, rank: string, ranks: number): number {
  return cap.byRank.get(rank) ?? cap.total / ranks;
}

type KvRank = NonNullable<KvUsage['ranks']>[number];

/** Sums per-rank usage; `ranks` (sorted by rank) only when there are at least two dp ranks. */
function combineCounts(used: Map<string, number>, cap: Capacity) {
  const total = sum(used);
  const ranks: KvRank[] = [];
  for (const [rank, u] of used) {
    const c = rankCapacity(cap, rank, used.size);
    ranks.push({ rank, used: u, capacity: c, ratio: c > 0 ? u / c : 0 });
  }
  ranks.sort(byRank);
  return {
    used: total,
    capacity: cap.total,
    ratio: cap.total > 0 ? total / cap.total : 0,
    ranks: ranks.length > 1 ? ranks : undefined,
  };
}

function byRank(a: KvRank, b: KvRank): number {
  const na = Number(a.rank);
  const nb = Number(b.rank);
  return Number.isFinite(na) && Number.isFinite(nb) && na !== nb ? na - nb : a.rank.localeCompare(b.rank);
}

function rankFields(ranks: KvRank[] | undefined): Pick<KvUsage, 'ranks' | 'fullestRank'> {
  if (!ranks) return {};
  // The first of equally full ranks, so the named rank does not flip between polls.
  let fullest = ranks[0];
  for (const r of ranks) if (r.ratio > fullest.ratio) fullest = r;
  return { ranks, fullestRank: { rank: fullest.rank, ratio: fullest.ratio } };
}

function fromRatio(
  ratios: Map<string, number>,
  source: KvSource,
  metric: string,
  caveat: string,
  cap: Capacity | undefined,
): KvUsage | KvMissing {
  if (!cap) {
    // Without capacities the ranks cannot be weighted: the fullest rank is the one safe figure.
    const ratio = Math.max(...ratios.values());
    return {
      missing: true,
      reason:
        `${metric} gives a ratio but the KV capacity is unknown (no sglang:max_total_num_tokens gauge); ` +
        'read max_total_num_tokens from /server_info (or /get_server_info) to get token counts',
      expected: [KV_METRICS.capacity, '/server_info', '/get_server_info'],
      needsServerInfo: true,
      ratioOnly: { ratio, source, sourceMetrics: [metric], caveat },
    };
  }
  const usedByRank = new Map<string, number>();
  for (const [rank, r] of ratios) usedByRank.set(rank, r * rankCapacity(cap, rank, ratios.size));
  const c = combineCounts(usedByRank, cap);
  const caveats = [caveat];
  if (c.ranks) caveats.push(dpCaveat(c.ranks.length));
  // The gauge is the rank's ratio; recomputing it from rounded tokens would only add float noise.
  const ranks = c.ranks?.map((r) => ({
    ...r,
    used: Math.round(r.used),
    ratio: ratios.get(r.rank) ?? r.ratio,
  }));
  return {
    usedTokens: Math.round(c.used),
    capacityTokens: cap.total,
    // One rank: the gauge itself, not the gauge × capacity / capacity round trip.
    ratio: ratios.size === 1 ? [...ratios.values()][0] : c.ratio,
    ...rankFields(ranks),
    source,
    sourceMetrics: [metric, cap.metric],
    caveat: caveats.join('; '),
  };
}

function dpCaveat(ranks: number): string {
  return `${ranks} dp ranks: tokens and % are summed over ranks; the fullest rank is shown beside them`;
}

function sum(m: Map<string, number>): number {
  let t = 0;
  for (const v of m.values()) t += v;
  return t;
}

/**
 * KV capacity in tokens from the JSON of /server_info or /get_server_info (reference §2.6). Accepts
 * max_total_num_tokens at the top level (scheduler_info is merged there) or under `scheduler_info`, as a number
 * or a per-dp list. A single number is the first scheduler's pool (DataParallelController keeps
 * scheduler_info[0]), so with dp_size > 1 every dp rank has a pool of that size and the total is × dp_size.
 * Returns undefined when no positive capacity is present.
 */
export function serverInfoCapacity(json: unknown): number | undefined {
  if (!isRecord(json)) return undefined;
  const dpSize = typeof json.dp_size === 'number' && json.dp_size > 1 ? Math.floor(json.dp_size) : 1;
  const direct = capacityValue(json.max_total_num_tokens, dpSize);
  if (direct !== undefined) return direct;
  const si = json.scheduler_info;
  if (isRecord(si)) return capacityValue(si.max_total_num_tokens, dpSize);
  if (Array.isArray(si)) {
    // One scheduler_info per dp rank: each names its own pool.
    let total = 0;
    for (const entry of si) {
      const v = isRecord(entry) ? capacityValue(entry.max_total_num_tokens, 1) : undefined;
      if (v === undefined) return undefined;
      total += v;
    }
    return total > 0 ? total : undefined;
  }
  return undefined;
}

function capacityValue(v: unknown, dpSize: number): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? v * dpSize : undefined;
  if (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0)
  ) {
    return (v as number[]).reduce((a, b) => a + b, 0);
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
