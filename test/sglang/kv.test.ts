import { describe, expect, it } from 'vitest';
import type { KvUsage } from '@shared/domain';
import { extractKv } from '../../src/main/core/signals/evaluate/kv-usage';
import {
  isKvMissing,
  serverInfoCapacity,
  TOKEN_USAGE_CAVEAT,
  type KvMissing,
} from '../../src/main/core/probes/sglang/kv';
import { fixture, prom } from './prom';

function usage(r: KvUsage | KvMissing): KvUsage {
  if (isKvMissing(r)) throw new Error(`expected KV usage, got missing: ${r.reason}`);
  return r;
}
function missing(r: KvUsage | KvMissing): KvMissing {
  if (!isKvMissing(r)) throw new Error(`expected missing, got ${r.source}`);
  return r;
}

describe('extractKv — newest era (kv_*_tokens + max_total_num_tokens)', () => {
  it('prefill §7.1: locked tokens over capacity, evictable/available carried for physical usage', () => {
    const kv = usage(extractKv(fixture('prefill-newest.prom')));
    expect(kv.source).toBe('kv_tokens');
    expect(kv.usedTokens).toBe(18432);
    expect(kv.capacityTokens).toBe(447416);
    // 18432 / 447416 = 0.041196...
    expect(kv.ratio).toBeCloseTo(18432 / 447416, 12);
    expect(kv.evictableTokens).toBe(201344);
    expect(kv.availableTokens).toBe(227640);
    expect(kv.sourceMetrics).toEqual([
      'sglang:kv_used_tokens',
      'sglang:kv_evictable_tokens',
      'sglang:kv_available_tokens',
      'sglang:max_total_num_tokens',
    ]);
    expect(kv.caveat).toBeUndefined();
  });

  it('decode §7.2: the breakdown wins over token_usage/num_used_tokens that are also present', () => {
    const kv = usage(extractKv(fixture('decode-newest.prom')));
    expect(kv.source).toBe('kv_tokens');
    // 236544 / 447416 = 0.528689...
    expect(kv.ratio).toBeCloseTo(0.528689, 6);
    expect(kv.usedTokens).toBe(236544);
  });

  it('DP attention: sums dp ranks, collapses tp-rank replicas of the same pool, names the fullest rank', () => {
    const kv = usage(extractKv(fixture('decode-dp.prom')));
    // dp0: used 100000 of 500000 (tp_rank 0 and 1 report the same pool → counted once)
    // dp1: used 250000 of 500000
    // used = 100000 + 250000 = 350000; capacity = 500000 + 500000 = 1000000
    // ratio = 350000 / 1000000 = 0.35, the headline agrees with the counts; dp1 is the fullest at 0.5
    expect(kv.usedTokens).toBe(350000);
    expect(kv.capacityTokens).toBe(1_000_000);
    expect(kv.ratio).toBe(0.35);
    expect(kv.fullestRank).toEqual({ rank: '1', ratio: 0.5 });
    expect(kv.ranks).toEqual([
      { rank: '0', used: 100000, capacity: 500000, ratio: 0.2 },
      { rank: '1', used: 250000, capacity: 500000, ratio: 0.5 },
    ]);
    expect(kv.evictableTokens).toBe(20000);
    expect(kv.availableTokens).toBe(380000 + 250000);
    expect(kv.caveat).toContain('2 dp ranks');
    expect(kv.caveat).not.toContain('fullest of');
  });

  it('4 unequal dp ranks: ratio = Σused / Σcapacity exactly, fullest rank by its own pool', () => {
    // Unequal pools too: rank 3 holds fewer tokens than rank 2 but is fuller.
    const used = [120_000, 40_000, 300_000, 190_000];
    const cap = [500_000, 500_000, 600_000, 200_000];
    const lines = [
      '# TYPE sglang:kv_used_tokens gauge',
      ...used.map((u, r) => `sglang:kv_used_tokens{dp_rank="${r}",tp_rank="0"} ${u}`),
      '# TYPE sglang:max_total_num_tokens gauge',
      ...cap.map((c, r) => `sglang:max_total_num_tokens{dp_rank="${r}",tp_rank="0"} ${c}`),
    ];
    const kv = usage(extractKv(prom(lines.join('\n') + '\n')));
    expect(kv.usedTokens).toBe(650_000);
    expect(kv.capacityTokens).toBe(1_800_000);
    expect(kv.ratio).toBe(650_000 / 1_800_000);
    expect(kv.fullestRank).toEqual({ rank: '3', ratio: 0.95 });
    expect(kv.ranks?.map((r) => r.rank)).toEqual(['0', '1', '2', '3']);
    expect(kv.ranks?.map((r) => r.ratio)).toEqual([0.24, 0.08, 0.5, 0.95]);
  });

  it('2 dp ranks of token_usage with a capacity gauge: tokens per rank, headline from the sums', () => {
    const kv = usage(
      extractKv(
        prom(`
# TYPE sglang:token_usage gauge
sglang:token_usage{dp_rank="0"} 0.93
sglang:token_usage{dp_rank="1"} 0.7
# TYPE sglang:max_total_num_tokens gauge
sglang:max_total_num_tokens{dp_rank="0"} 1290240
sglang:max_total_num_tokens{dp_rank="1"} 1290240
`),
      ),
    );
    expect(kv.usedTokens).toBe(Math.round(0.93 * 1290240 + 0.7 * 1290240));
    expect(kv.capacityTokens).toBe(2_580_480);
    expect(kv.ratio).toBeCloseTo((0.93 + 0.7) / 2, 12);
    expect(kv.fullestRank).toEqual({ rank: '0', ratio: 0.93 });
  });

  it('one rank has no ranks/fullestRank: the headline is the only figure', () => {
    const kv = usage(extractKv(fixture('decode-newest.prom')));
    expect(kv.ranks).toBeUndefined();
    expect(kv.fullestRank).toBeUndefined();
  });

  it('drops the pid label instead of treating each pid as another pool', () => {
    const exp = prom(`
# TYPE sglang:kv_used_tokens gauge
sglang:kv_used_tokens{pid="100",tp_rank="0"} 10
sglang:kv_used_tokens{pid="101",tp_rank="0"} 10
# TYPE sglang:max_total_num_tokens gauge
sglang:max_total_num_tokens{tp_rank="0"} 100
`);
    const kv = usage(extractKv(exp));
    expect(kv.usedTokens).toBe(10);
    expect(kv.ratio).toBe(0.1);
  });

  it('without max_total_num_tokens, prefers /server_info capacity over the used+evictable+available estimate', () => {
    const text = `
sglang:kv_used_tokens 100
sglang:kv_evictable_tokens 300
sglang:kv_available_tokens 500
`;
    const withInfo = usage(extractKv(prom(text), { capacityFromServerInfo: 1000 }));
    expect(withInfo.capacityTokens).toBe(1000);
    expect(withInfo.ratio).toBe(0.1);
    expect(withInfo.sourceMetrics).toContain('/server_info max_total_num_tokens');

    const estimated = usage(extractKv(prom(text)));
    // capacity ≈ 100 + 300 + 500 = 900; ratio = 100/900
    expect(estimated.capacityTokens).toBe(900);
    expect(estimated.ratio).toBeCloseTo(100 / 900, 12);
    expect(estimated.caveat).toMatch(/approximated/);
  });
});

describe('extractKv — older eras', () => {
  it('2026-03: full_token_usage × max_total_num_tokens', () => {
    const kv = usage(extractKv(fixture('decode-2026-03.prom')));
    expect(kv.source).toBe('full_token_usage');
    // 0.5814 × 2580000 = 1500012
    expect(kv.usedTokens).toBe(1500012);
    expect(kv.capacityTokens).toBe(2580000);
    expect(kv.ratio).toBe(0.5814);
    expect(kv.sourceMetrics).toEqual(['sglang:full_token_usage', 'sglang:max_total_num_tokens']);
    expect(kv.caveat).toMatch(/excludes evictable/);
  });

  it('autumn 2025 (no capacity gauge): asks for /server_info and still offers the coarse ratio', () => {
    const m = missing(extractKv(fixture('decode-2025-10.prom')));
    expect(m.needsServerInfo).toBe(true);
    expect(m.expected).toContain('sglang:max_total_num_tokens');
    expect(m.reason).toMatch(/server_info/);
    expect(m.ratioOnly).toEqual({
      ratio: 0.5,
      source: 'token_usage',
      sourceMetrics: ['sglang:token_usage'],
      caveat: TOKEN_USAGE_CAVEAT,
    });
  });

  it('autumn 2025 with /server_info capacity: num_used_tokens / capacity', () => {
    const cap = serverInfoCapacity({ max_total_num_tokens: 2580480, dp_size: 1, version: '0.5.3' });
    const kv = usage(extractKv(fixture('decode-2025-10.prom'), { capacityFromServerInfo: cap }));
    expect(kv.source).toBe('num_used_tokens');
    // 1290240 / 2580480 = 0.5
    expect(kv.ratio).toBe(0.5);
    expect(kv.usedTokens).toBe(1290240);
    expect(kv.capacityTokens).toBe(2580480);
    expect(kv.sourceMetrics).toEqual(['sglang:num_used_tokens', '/server_info max_total_num_tokens']);
  });

  it('Dec 2024 (model_name label only) works the same way', () => {
    const m = missing(extractKv(fixture('decode-2024-12.prom')));
    expect(m.needsServerInfo).toBe(true);
    expect(m.ratioOnly?.ratio).toBe(0.3);
    const kv = usage(extractKv(fixture('decode-2024-12.prom'), { capacityFromServerInfo: 204800 }));
    // 61440 / 204800 = 0.3
    expect(kv.ratio).toBeCloseTo(0.3, 12);
  });

  it('token_usage alone (with capacity) carries the rounding/evictable caveat', () => {
    const exp = prom(`
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="m"} 0.53
# TYPE sglang:max_total_num_tokens gauge
sglang:max_total_num_tokens{model_name="m"} 447416
`);
    const kv = usage(extractKv(exp));
    expect(kv.source).toBe('token_usage');
    // round(0.53 × 447416) = round(237130.48) = 237130
    expect(kv.usedTokens).toBe(237130);
    expect(kv.caveat).toBe(TOKEN_USAGE_CAVEAT);
  });

  it('token_usage alone without any capacity: ratio only, needs /server_info', () => {
    const m = missing(extractKv(prom('sglang:token_usage 0.07\n')));
    expect(m.needsServerInfo).toBe(true);
    expect(m.ratioOnly?.source).toBe('token_usage');
    expect(m.ratioOnly?.caveat).toBe(TOKEN_USAGE_CAVEAT);
  });

  it('ignores NaN samples rather than reporting NaN usage', () => {
    const exp = prom(
      'sglang:num_used_tokens NaN\nsglang:token_usage 0.2\nsglang:max_total_num_tokens 1000\n',
    );
    const kv = usage(extractKv(exp));
    expect(kv.source).toBe('token_usage');
    expect(kv.usedTokens).toBe(200);
  });
});

describe('extractKv — nothing to go on', () => {
  it('a router or non-SGLang exposition yields a reason naming every expected metric', () => {
    const m = missing(extractKv(fixture('router-smg.prom')));
    expect(m.needsServerInfo).toBeUndefined();
    expect(m.ratioOnly).toBeUndefined();
    expect(m.expected).toEqual(
      expect.arrayContaining(['sglang:kv_used_tokens', 'sglang:token_usage', 'sglang:num_used_tokens']),
    );
    expect(m.reason).toMatch(/--enable-metrics/);
  });

  it('capacity alone is not usage', () => {
    expect(isKvMissing(extractKv(prom('sglang:max_total_num_tokens 1000\n')))).toBe(true);
  });
});

describe('serverInfoCapacity', () => {
  it('reads the top-level field that /server_info merges from scheduler_info', () => {
    expect(serverInfoCapacity({ max_total_num_tokens: 447416, tp_size: 4, dp_size: 1 })).toBe(447416);
  });
  it('reads scheduler_info.max_total_num_tokens', () => {
    expect(serverInfoCapacity({ scheduler_info: { max_total_num_tokens: 1000 } })).toBe(1000);
  });
  it('scales a single value by dp_size (scheduler_info is dp rank 0’s pool)', () => {
    // 500000 per rank × 4 ranks = 2000000
    expect(serverInfoCapacity({ max_total_num_tokens: 500000, dp_size: 4, enable_dp_attention: true })).toBe(
      2_000_000,
    );
  });
  it('sums per-dp lists', () => {
    expect(serverInfoCapacity({ max_total_num_tokens: [100, 200] })).toBe(300);
    expect(
      serverInfoCapacity({ scheduler_info: [{ max_total_num_tokens: 100 }, { max_total_num_tokens: 250 }] }),
    ).toBe(350);
  });
  it('returns undefined for anything else', () => {
    for (const bad of [
      null,
      'x',
      42,
      [],
      {},
      { max_total_num_tokens: '1000' },
      { max_total_num_tokens: 0 },
    ]) {
      expect(serverInfoCapacity(bad)).toBeUndefined();
    }
    expect(serverInfoCapacity({ scheduler_info: [{ max_total_num_tokens: 1 }, {}] })).toBeUndefined();
  });
});
