// The KV figures of one role as the dashboard shows them, from a row of signal values and the KV source
// that produced them. Live (DashboardService) and review (state-at) build it the same way.
import type { KvDetail } from '@shared/contract';
import type { Role } from '@shared/domain';
import type { KvMeta } from './signals-store';

export function kvDetail(
  role: Role,
  values: Record<string, number | null>,
  meta: Pick<KvMeta, 'source' | 'sourceMetrics' | 'caveat'> | undefined,
): KvDetail {
  const v = (k: string): number | null => values[`${role}.${k}`] ?? null;
  return {
    role,
    usedTokens: v('kv_used'),
    evictableTokens: v('kv_evictable'),
    freeTokens: v('kv_free'),
    capacityTokens: v('kv_capacity'),
    ratio: v('kv_ratio'),
    fullestRankRatio: v('kv_fullest_rank_ratio'),
    timeToFullS: v('kv_ttf_s'),
    source: meta?.source ?? 'none',
    sourceMetrics: meta?.sourceMetrics ?? [],
    ...(meta?.caveat ? { caveat: meta.caveat } : {}),
  };
}
