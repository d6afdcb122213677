// The KV usage of one scrape (what the monitor reports per poll) read by the one KV evaluator (kv.ts), or why
// there is none: which families are there, and whether /server_info's capacity would complete the figure.
import type { KvUsage } from '@shared/domain';
import { SGLANG } from '@shared/signals/metric-names';
import type { Exposition } from '../../probes/exposition/types';
import {
  EXCLUDES_EVICTABLE,
  TOKEN_USAGE_CAVEAT,
  type KvMissing,
  type KvOptions,
} from '../../probes/sglang/kv';
import { perDpRank, viewOf } from '../../probes/sglang/series';
import { scrapeColumns } from '../scrape-columns';
import { compareDpRanks, kvColumns } from './kv';

const KV_INPUTS = new Set<string>([
  SGLANG.kvUsedTokens,
  SGLANG.kvEvictableTokens,
  SGLANG.kvAvailableTokens,
  SGLANG.maxTotalNumTokens,
  SGLANG.fullTokenUsage,
  SGLANG.numUsedTokens,
  SGLANG.tokenUsage,
]);

const isKvInput = (name: string): boolean => KV_INPUTS.has(name);

type KvRank = NonNullable<KvUsage['ranks']>[number];

export function extractKv(exp: Exposition, opts: KvOptions = {}): KvUsage | KvMissing {
  const kv = kvColumns(scrapeColumns('kv', exp, isKvInput), {
    capacityFromServerInfo: opts.capacityFromServerInfo,
    rankTokens: true,
  });
  const src = kv.source[0];
  if (src < 0) return missing(exp);
  const meta = kv.metas[src];
  const at = (key: string): number | undefined => {
    const v = kv.values.get(key)?.[0];
    return v === undefined || v !== v ? undefined : v;
  };
  const ranks: KvRank[] = [];
  for (const key of kv.values.keys()) {
    const m = /^kv_rank\.(.*)\.ratio$/.exec(key);
    const ratio = m ? at(key) : undefined;
    if (!m || ratio === undefined) continue;
    ranks.push({
      rank: m[1],
      used: at(`kv_rank.${m[1]}.used`) ?? 0,
      capacity: at(`kv_rank.${m[1]}.capacity`) ?? 0,
      ratio,
    });
  }
  ranks.sort((a, b) => compareDpRanks(a.rank, b.rank));
  // The first of equally full ranks, so the named rank does not flip between polls.
  let fullest = ranks[0];
  for (const r of ranks) if (r.ratio > fullest.ratio) fullest = r;
  const evictable = at('kv_evictable');
  return {
    usedTokens: at('kv_used') ?? 0,
    capacityTokens: at('kv_capacity') ?? 0,
    ratio: at('kv_ratio') ?? 0,
    ...(ranks.length > 1 ? { ranks, fullestRank: { rank: fullest.rank, ratio: fullest.ratio } } : {}),
    ...(evictable !== undefined ? { evictableTokens: evictable } : {}),
    ...(meta.sourceMetrics.includes(SGLANG.kvAvailableTokens) ? { availableTokens: at('kv_free') ?? 0 } : {}),
    source: meta.source,
    sourceMetrics: meta.sourceMetrics,
    ...(meta.caveat ? { caveat: meta.caveat } : {}),
  };
}

const NEEDS_CAPACITY = [SGLANG.maxTotalNumTokens, '/server_info', '/get_server_info'];

/** Why a scrape gives no KV figure, best source first, as the evaluator tried them. */
function missing(exp: Exposition): KvMissing {
  const view = viewOf(exp);
  const ratios = (name: string): Map<string, number> => perDpRank(view.samples(name));
  const ratioOnly = (name: string, source: 'full_token_usage' | 'token_usage', caveat: string) => {
    const r = ratios(name);
    // Without capacities the ranks cannot be weighted: the fullest rank is the one safe figure.
    return r.size > 0
      ? { ratioOnly: { ratio: Math.max(...r.values()), source, sourceMetrics: [name], caveat } }
      : {};
  };
  const ratioWithoutCapacity = (
    name: string,
    source: 'full_token_usage' | 'token_usage',
    caveat: string,
  ): KvMissing => ({
    missing: true,
    reason:
      `${name} gives a ratio but the KV capacity is unknown (no ${SGLANG.maxTotalNumTokens} gauge); ` +
      'read max_total_num_tokens from /server_info (or /get_server_info) to get token counts',
    expected: NEEDS_CAPACITY,
    needsServerInfo: true,
    ...ratioOnly(name, source, caveat),
  });
  if (ratios(SGLANG.fullTokenUsage).size > 0)
    return ratioWithoutCapacity(
      SGLANG.fullTokenUsage,
      'full_token_usage',
      `full-attention pool; ${EXCLUDES_EVICTABLE}`,
    );
  if (ratios(SGLANG.numUsedTokens).size > 0)
    return {
      missing: true,
      reason:
        `${SGLANG.numUsedTokens} is exposed but the KV capacity is not: this SGLang version has no ` +
        `${SGLANG.maxTotalNumTokens} gauge; read max_total_num_tokens from /server_info (or /get_server_info)`,
      expected: NEEDS_CAPACITY,
      needsServerInfo: true,
      ...ratioOnly(SGLANG.tokenUsage, 'token_usage', TOKEN_USAGE_CAVEAT),
    };
  if (ratios(SGLANG.tokenUsage).size > 0)
    return ratioWithoutCapacity(SGLANG.tokenUsage, 'token_usage', TOKEN_USAGE_CAVEAT);
  return {
    missing: true,
    reason:
      `no KV-cache metric in this /metrics output: none of ${SGLANG.kvUsedTokens}, ${SGLANG.fullTokenUsage}, ` +
      `${SGLANG.numUsedTokens}, ${SGLANG.tokenUsage}. Is this an SGLang server started with --enable-metrics, ` +
      'and has its scheduler logged stats yet (gauges appear after the first batch or idle check)?',
    expected: [
      SGLANG.kvUsedTokens,
      SGLANG.fullTokenUsage,
      SGLANG.numUsedTokens,
      SGLANG.tokenUsage,
      SGLANG.maxTotalNumTokens,
    ],
  };
}
