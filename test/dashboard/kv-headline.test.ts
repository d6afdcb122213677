// The KV panel's headline text, as the renderer shows it: with DP attention the percentage must agree with the
// token counts beside it (issue 13.4: "2.10M / 2.58M tokens — 93.0 %" read as a bug), the fullest rank beside it.
import { describe, expect, it } from 'vitest';
import { isKvMissing } from '../../src/main/core/probes/sglang/kv';
import { extractKv } from '../../src/main/core/signals/evaluate/kv-usage';
import { kvHeadline } from '../../src/renderer/src/components/kv-headline';
import { prom } from '../sglang/prom';

function dpDecode(used: number[], cap: number[]) {
  const lines = [
    '# TYPE sglang:kv_used_tokens gauge',
    ...used.map((u, r) => `sglang:kv_used_tokens{dp_rank="${r}",tp_rank="${r}"} ${u}`),
    '# TYPE sglang:max_total_num_tokens gauge',
    ...cap.map((c, r) => `sglang:max_total_num_tokens{dp_rank="${r}",tp_rank="${r}"} ${c}`),
  ];
  const kv = extractKv(prom(lines.join('\n') + '\n'));
  if (isKvMissing(kv)) throw new Error(kv.reason);
  return kv;
}

describe('KV headline', () => {
  it('2 dp ranks: the percentage is Σused / Σcapacity and the fullest rank is named beside it', () => {
    // rank 0: 900,000 of 1,290,240 (69.8 %), rank 1: 1,200,000 of 1,290,240 (93.0 %)
    const h = kvHeadline(dpDecode([900_000, 1_200_000], [1_290_240, 1_290_240]));
    expect(h.tokens).toBe('2.10M / 2.58M tokens');
    expect(h.percent).toBe('81.4 %');
    expect(h.fullestRank).toBe('fullest dp rank 1 at 93.0 %');
    expect(h.text).toBe('81.4 % · fullest dp rank 1 at 93.0 %');
    // The pool as a whole is only getting full; the rank is already at the alert threshold.
    expect(h.tone).toBe('warn');
    expect(h.fullestTone).toBe('bad');
  });

  it('one rank: the percentage alone, no rank text', () => {
    const h = kvHeadline({
      usedTokens: 1_290_240,
      capacityTokens: 2_580_480,
      ratio: 0.5,
      source: 'kv_tokens',
      sourceMetrics: ['sglang:kv_used_tokens', 'sglang:max_total_num_tokens'],
    });
    expect(h.text).toBe('50.0 %');
    expect(h.fullestRank).toBeUndefined();
    expect(h.tokens).toBe('1.29M / 2.58M tokens');
  });
});
