// What PD Console knows of KV usage outside the evaluator: the families (metric-names.ts), the missing-figure
// shape, and the capacity in /server_info's JSON. The figure itself is computed by the one KV evaluator
// (core/signals/evaluate/kv.ts) — for a scrape by extractKv (evaluate/kv-usage.ts), for a window or a recording
// over columns.
import type { KvSource, KvUsage } from '@shared/domain';
import { SGLANG } from '@shared/signals/metric-names';

export const KV_METRICS = {
  used: SGLANG.kvUsedTokens,
  evictable: SGLANG.kvEvictableTokens,
  available: SGLANG.kvAvailableTokens,
  capacity: SGLANG.maxTotalNumTokens,
  fullTokenUsage: SGLANG.fullTokenUsage,
  numUsedTokens: SGLANG.numUsedTokens,
  tokenUsage: SGLANG.tokenUsage,
} as const;

/** Where a capacity taken from the server's JSON info is credited in `sourceMetrics`. */
export const SERVER_INFO_CAPACITY = '/server_info max_total_num_tokens';

export const TOKEN_USAGE_CAVEAT =
  'rounded to 2 decimals by SGLang versions before early 2026; excludes evictable radix-cache tokens';
export const EXCLUDES_EVICTABLE = 'excludes evictable radix-cache tokens';

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
