// The KV headline's text: the pool's usage as the token counts beside it show it (Σused / Σcapacity), and with
// DP attention the fullest rank next to it, since that rank refuses requests first (and is what alerts watch).
import type { KvUsage } from '@shared/domain';
import { formatPct, formatTokens } from '../format';

export type KvTone = 'ok' | 'warn' | 'bad';

export interface KvHeadline {
  /** "81.4 %" */
  percent: string;
  /** "2.10M / 2.58M tokens" */
  tokens: string;
  /** "fullest dp rank 1 at 93.0 %", only with ≥ 2 dp ranks */
  fullestRank?: string;
  tone: KvTone;
  /** Tone of the fullest rank, which can be bad while the pool as a whole is not. */
  fullestTone?: KvTone;
  /** One line for copying or a tooltip: "81.4 % · fullest dp rank 1 at 93.0 %". */
  text: string;
}

export function kvTone(ratio: number): KvTone {
  return ratio >= 0.9 ? 'bad' : ratio >= 0.75 ? 'warn' : 'ok';
}

export function kvHeadline(kv: KvUsage): KvHeadline {
  const percent = formatPct(kv.ratio);
  const tokens = `${formatTokens(kv.usedTokens)} / ${formatTokens(kv.capacityTokens)} tokens`;
  const f = kv.fullestRank;
  const fullestRank = f ? `fullest dp rank ${f.rank} at ${formatPct(f.ratio)}` : undefined;
  return {
    percent,
    tokens,
    tone: kvTone(kv.ratio),
    ...(f && fullestRank ? { fullestRank, fullestTone: kvTone(f.ratio) } : {}),
    text: fullestRank ? `${percent} · ${fullestRank}` : percent,
  };
}
