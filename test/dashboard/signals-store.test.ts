import { describe, expect, it } from 'vitest';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { catalogFor } from '../../src/main/core/signals/catalog';
import type { Observation, Role } from '../../src/shared/domain';
import { fixture, fixtureText, prom } from '../sglang/prom';
import { ingestPoll } from '../signals/helpers/poll';

const T0 = 1_800_000_000_000;
const ROLES: Role[] = ['router', 'prefill', 'decode'];

/** The fixture with every counter line scaled up by `k` seconds of traffic, so rates are non-zero. */
function advanced(text: string, k: number): string {
  return text
    .split('\n')
    .map((l) =>
      /^sglang:(generation_tokens_total|prompt_tokens_total)/.test(l)
        ? l.replace(/ ([0-9.e+]+)$/, (_, v: string) => ` ${Number(v) + k * 1000}`)
        : l,
    )
    .join('\n');
}

describe('SignalsStore', () => {
  it('with 2 dp ranks stores the summed KV ratio, the fullest rank and each rank, and catalogues the ranks', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    ingestPoll(store, 'd', T0, 'decode', fixture('decode-dp.prom'));
    const latest = store.latest('d');
    // dp0 100000 / 500000, dp1 250000 / 500000
    expect(latest['decode.kv_ratio']).toBeCloseTo(0.35, 6); // the ring stores float32
    expect(latest['decode.kv_fullest_rank_ratio']).toBeCloseTo(0.5, 6);
    expect(latest['decode.kv_rank.0.ratio']).toBeCloseTo(0.2, 6);
    expect(latest['decode.kv_rank.1.ratio']).toBeCloseTo(0.5, 6);
    // The worker's ranks, and its role's: a role of one worker carries them under its own keys.
    expect(store.kvRanks('d')).toEqual({ 'decode@decode-0': ['0', '1'], decode: ['0', '1'] });
    expect(latest['decode.kv_rank.0.ratio@decode-0']).toBeCloseTo(0.2, 6);
    expect(latest['decode.kv_rank.1.ratio@decode-0']).toBeCloseTo(0.5, 6);
    const keys = catalogFor(ROLES, [], store.kvRanks('d')).map((c) => c.key);
    expect(keys).toContain('decode.kv_rank.0.ratio');
    expect(keys).toContain('decode.kv_rank.1.ratio');
    expect(keys).toContain('decode.kv_fullest_rank_ratio');
  });

  it('with one rank the fullest-rank key equals the usage and no per-rank keys are written', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    ingestPoll(store, 'd', T0, 'decode', fixture('decode-newest.prom'));
    const latest = store.latest('d');
    // 236544 used of 447416 (the ring stores float32)
    expect(latest['decode.kv_ratio']).toBeCloseTo(236544 / 447416, 6);
    expect(latest['decode.kv_fullest_rank_ratio']).toBe(latest['decode.kv_ratio']);
    expect(Object.keys(latest).filter((k) => k.includes('kv_rank.'))).toEqual([]);
    expect(store.kvRanks('d')).toEqual({});
  });

  it('takes KV usage from the poll’s observation, not from the scrape: one KV evaluation per scrape', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    const fromScrape = store.ingest('d', T0, 'decode', fixture('decode-dp.prom'));
    // The scrape's own signals are there; its KV figures are the monitor's to read.
    expect(fromScrape['decode.running']).toBe(35);
    expect(
      Object.keys(fromScrape).filter((k) => /\.kv_(ratio|used|free|capacity|rank\.|fullest)/.test(k)),
    ).toEqual([]);
    expect(store.latest('d')['decode.kv_ratio']).toBeUndefined();
    const observed = ingestPoll(store, 'd', T0 + 1000, 'decode', fixture('decode-dp.prom'));
    expect(observed['decode.kv_ratio']).toBeCloseTo(0.35, 12);
    expect(store.latest('d')['decode.kv_ratio']).toBeCloseTo(0.35, 6);
  });

  it('turns the retraction counter into retractions per minute, and leaves it null where it is absent', () => {
    const store = new SignalsStore({ capacity: 100, rateWindowMs: 60_000 });
    store.open('d', ROLES);
    const scrape = (total: number | null, gauge: number) =>
      prom(
        `# TYPE sglang:num_retracted_reqs gauge
sglang:num_retracted_reqs{pid="7",tp_rank="0"} ${gauge}
` +
          (total === null
            ? ''
            : `# TYPE sglang:num_retracted_requests_total counter
sglang:num_retracted_requests_total{tp_rank="0"} ${total}
`),
      );
    // 3 retractions every 10 s = 18 per minute; the gauge is only the last interval's count.
    for (let s = 0; s <= 60; s += 10)
      ingestPoll(store, 'd', T0 + s * 1000, 'decode', scrape(100 + (s / 10) * 3, 3));
    const latest = store.latest('d');
    expect(latest['decode.retracted_per_min@decode-0']).toBeCloseTo(18, 6);
    expect(latest['decode.retracted@decode-0']).toBe(3);
    ingestPoll(store, 'd', T0, 'prefill', scrape(null, 0));
    expect(store.latest('d')['prefill.retracted_per_min@prefill-0']).toBeNull();
  });

  it('turns successive scrapes into point-in-time and windowed signals under stable keys', () => {
    const store = new SignalsStore({ capacity: 1000 });
    store.open('d', ROLES);
    const text = fixtureText('decode-newest.prom');
    for (let s = 0; s <= 10; s++) ingestPoll(store, 'd', T0 + s * 1000, 'decode', prom(advanced(text, s)));
    const latest = store.latest('d');
    expect(latest['decode.kv_used']).toBe(236544);
    expect(latest['decode.decode_prealloc_queue@decode-0']).toBe(1);
    // 1000 generation tokens per second were added to the counter.
    expect(latest['decode.generation_tokens_per_s@decode-0']).toBeCloseTo(1000, 6);
    expect(latest['decode.kv_ratio']).toBeGreaterThan(0);
    const series = store.getSeries({ deploymentId: 'd', keys: ['decode.kv_used'], maxPoints: 100 });
    expect(series.series[0].t).toHaveLength(11);
    expect(series.decimated).toBe(false);
  });

  it('says which metric an older server lacks instead of returning an empty series silently', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    for (let s = 0; s < 3; s++)
      ingestPoll(store, 'd', T0 + s * 1000, 'decode', fixture('decode-2024-12.prom'));
    const r = store.getSeries({
      deploymentId: 'd',
      keys: ['decode.kv_evictable', 'decode.decode_prealloc_queue', 'decode.kv_used'],
      maxPoints: 100,
    });
    expect(r.series[0].v).toEqual([]);
    expect(r.missing['decode.kv_evictable'].expected).toEqual(['sglang:kv_evictable_tokens']);
    expect(r.missing['decode.decode_prealloc_queue'].expected).toEqual([
      'sglang:num_decode_prealloc_queue_reqs',
    ]);
    // The 2024 server still has a KV figure (num_used_tokens / capacity).
    expect(r.missing['decode.kv_used']).toBeUndefined();
    expect(r.series[2].v.every((v) => v !== null)).toBe(true);
  });

  it('keeps a one-second KV spike in a day decimated to 1,000 points, and keeps outages as gaps', () => {
    const store = new SignalsStore();
    store.open('d', ROLES);
    const spikeAt = 50_000;
    for (let s = 0; s < 86_400; s++) {
      const down = s >= 70_000 && s < 70_120;
      store.writeRow('d', 'decode', T0 + s * 1000, {
        'decode.kv_ratio': down ? null : s === spikeAt ? 0.99 : 0.4 + 0.001 * (s % 7),
      });
    }
    const r = store.getSeries({ deploymentId: 'd', keys: ['decode.kv_ratio'], maxPoints: 1000 });
    const col = r.series[0];
    expect(r.rawPoints).toBe(86_400);
    expect(r.decimated).toBe(true);
    expect(col.t.length).toBeLessThanOrEqual(1600);
    expect(Math.max(...col.v.filter((v): v is number => v !== null))).toBeCloseTo(0.99, 5);
    const gapIdx = col.v.findIndex((v) => v === null);
    expect(col.t[gapIdx]).toBeGreaterThanOrEqual(T0 + 69_000 * 1000);
    expect(col.t[gapIdx]).toBeLessThanOrEqual(T0 + 70_200 * 1000);
    for (let i = 1; i < col.t.length; i++) expect(col.t[i]).toBeGreaterThan(col.t[i - 1]);
  });

  it('serves a zoomed range at full resolution', () => {
    const store = new SignalsStore();
    store.open('d', ROLES);
    for (let s = 0; s < 10_000; s++)
      store.writeRow('d', 'prefill', T0 + s * 1000, { 'prefill.queued': s % 13 });
    const r = store.getSeries({
      deploymentId: 'd',
      keys: ['prefill.queued'],
      fromMs: T0 + 5000 * 1000,
      toMs: T0 + 5299 * 1000,
      maxPoints: 1000,
    });
    expect(r.decimated).toBe(false);
    expect(r.series[0].t).toHaveLength(300);
    expect(r.series[0].v[0]).toBe(5000 % 13);
  });

  it('does not let a clock jumping backwards scramble the time axis', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    store.writeRow('d', 'decode', T0 + 10_000, { 'decode.queued': 1 });
    expect(store.writeRow('d', 'decode', T0 + 5_000, { 'decode.queued': 2 })).toBe(false);
    store.writeRow('d', 'decode', T0 + 11_000, { 'decode.queued': 3 });
    const r = store.getSeries({ deploymentId: 'd', keys: ['decode.queued'], maxPoints: 100 });
    expect(r.series[0].t).toEqual([T0 + 10_000, T0 + 11_000]);
    expect(r.series[0].v).toEqual([1, 3]);
  });

  it('is bounded: the oldest rows go when the ring is full', () => {
    const store = new SignalsStore({ capacity: 50 });
    store.open('d', ROLES);
    for (let s = 0; s < 120; s++) store.writeRow('d', 'decode', T0 + s * 1000, { 'decode.queued': s });
    const r = store.getSeries({ deploymentId: 'd', keys: ['decode.queued'], maxPoints: 1000 });
    expect(r.series[0].v).toHaveLength(50);
    expect(r.series[0].v[0]).toBe(70);
    expect(r.firstMs).toBe(T0 + 70_000);
  });

  it('merges the observation of a poll into the scrape row and draws a failed scrape as a gap', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    const obs = (ts: number, ok: boolean): Observation => ({
      deploymentId: 'd',
      hostId: 'h',
      ts,
      services: [
        {
          role: 'decode',
          id: 'decode-0',
          unit: 'sglang-decode.service',
          systemd: {
            unit: 'sglang-decode.service',
            loadState: 'loaded',
            activeState: ok ? 'active' : 'failed',
            subState: ok ? 'running' : 'failed',
            mainPid: 10,
            nRestarts: ok ? 0 : 1,
            activeEnterTimestamp: T0,
            result: 'success',
          },
          metrics: ok
            ? { ok: true, scrapedAt: ts, durationMs: 12, families: 40, samples: 300 }
            : { ok: false, at: ts, error: 'connection refused' },
          ...(ok
            ? {
                kv: {
                  usedTokens: 1_290_000,
                  capacityTokens: 2_580_000,
                  ratio: 0.5,
                  source: 'kv_tokens' as const,
                  sourceMetrics: ['sglang:kv_used_tokens'],
                },
              }
            : {}),
        },
      ],
    });
    store.ingest('d', T0, 'decode', fixture('decode-newest.prom'), 'decode-0');
    const merged = store.ingestObservation(obs(T0, true));
    expect(merged['decode.active']).toBe(1);
    expect(merged['decode.kv_ratio']).toBe(0.5);
    store.ingestObservation(obs(T0 + 1000, false));
    store.ingest('d', T0 + 2000, 'decode', fixture('decode-newest.prom'), 'decode-0');
    store.ingestObservation(obs(T0 + 2000, true));
    const r = store.getSeries({
      deploymentId: 'd',
      keys: ['decode.kv_ratio', 'decode.active', 'decode.queued'],
      maxPoints: 100,
    });
    expect(r.series[0].v).toEqual([0.5, null, 0.5]);
    expect(r.series[1].v).toEqual([1, 0, 1]);
    expect(r.series[2].v).toEqual([0, null, 0]);
    expect(store.kvMeta('d', 'decode')?.sourceMetrics).toEqual(['sglang:kv_used_tokens']);
    expect(store.kvMeta('d', 'decode@decode-0')?.sourceMetrics).toEqual(['sglang:kv_used_tokens']);
  });

  it('keeps each worker’s KV source: workers of one role on different versions name their own', () => {
    const store = new SignalsStore({ capacity: 100 });
    store.open('d', ROLES);
    const worker = (id: string, ratio: number, ranks: boolean, caveat?: string) => ({
      role: 'decode' as const,
      id,
      unit: `sglang-${id}.service`,
      metrics: { ok: true as const, scrapedAt: T0, durationMs: 1, families: 1, samples: 1 },
      kv: {
        usedTokens: ratio * 1e6,
        capacityTokens: 1e6,
        ratio,
        ...(ranks
          ? {
              ranks: [
                { rank: '0', ratio: ratio / 2, used: 0, capacity: 5e5 },
                { rank: '1', ratio: ratio * 1.5, used: 0, capacity: 5e5 },
              ],
            }
          : {}),
        source: caveat ? ('token_usage' as const) : ('kv_tokens' as const),
        sourceMetrics: caveat ? ['sglang:token_usage'] : ['sglang:kv_used_tokens'],
        ...(caveat ? { caveat } : {}),
      },
    });
    const values = store.ingestObservation({
      deploymentId: 'd',
      hostId: 'h',
      ts: T0,
      services: [worker('decode-0', 0.4, true), worker('decode-1', 0.2, false, 'an older server: rounded')],
    });
    expect(store.kvMeta('d', 'decode@decode-0')).toEqual({
      source: 'kv_tokens',
      sourceMetrics: ['sglang:kv_used_tokens'],
      caveat: undefined,
    });
    expect(store.kvMeta('d', 'decode@decode-1')?.caveat).toBe('an older server: rounded');
    expect(store.kvMeta('d', 'decode@decode-1')?.sourceMetrics).toEqual(['sglang:token_usage']);
    // The role's figure is the sum of both: named by its first worker's source.
    expect(values['decode.kv_ratio']).toBeCloseTo(0.3, 12);
    expect(store.kvMeta('d', 'decode')?.source).toBe('kv_tokens');
    // dp rank 0 of which worker? A role of several workers has no ranks of its own; each worker keeps its own.
    expect(values['decode.kv_rank.0.ratio@decode-0']).toBeCloseTo(0.2, 12);
    expect(Object.keys(values).filter((k) => /^decode\.kv_rank\.[^@]+$/.test(k))).toEqual([]);
    expect(store.kvRanks('d')).toEqual({ 'decode@decode-0': ['0', '1'] });
  });

  it('forecasts time to full from a rising KV usage', () => {
    const store = new SignalsStore({ capacity: 1000 });
    store.open('d', ['decode']);
    let last: Record<string, number | null> = {};
    for (let s = 0; s <= 120; s++) {
      const ratio = 0.5 + s * 0.002;
      last = store.ingestObservation({
        deploymentId: 'd',
        hostId: 'h',
        ts: T0 + s * 1000,
        services: [
          {
            role: 'decode',
            id: 'decode-0',
            unit: 'u',
            metrics: { ok: true, scrapedAt: T0, durationMs: 1, families: 1, samples: 1 },
            kv: {
              usedTokens: ratio * 1e6,
              capacityTokens: 1e6,
              ratio,
              source: 'kv_tokens',
              sourceMetrics: [],
            },
          },
        ],
      });
    }
    // 0.74 now, +0.002/s → 130 s to full.
    expect(last['decode.kv_ttf_s']).toBeCloseTo(130, 0);
  });
});
