// With DP attention the KV figures are per-rank arithmetic (Σused / Σcapacity, the fullest rank, each rank's
// ratio): review mode recomputes them from recorded columns, and must agree with the live code at every scrape
// of a 2-rank demo decode server, in each metric era, including the retraction rate and the cache-hit gauge. The
// server is a 1P1D's decode recorded before services carried ids: both read it as the worker `decode-0`, whose
// keys (`decode.kv_ratio@decode-0`) are compared; its role, of one worker, carries the same dp ranks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DemoSimulation } from '../../src/main/demo';
import { renderServerMetrics } from '../../src/main/demo/sglang-metrics';
import { DEMO_ERAS, type DemoEra } from '../../src/main/demo/eras';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { RecordingWriter, readRecording } from '../../src/main/core/recording';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { observationAt } from '../../src/main/core/review/state-at';
import { header, manualClock, tempDir } from '../recording/helpers';
import { ingestPoll } from '../signals/helpers/poll';

const START = Date.UTC(2026, 0, 5, 8, 0, 0);
const DP = 2;
const compared = (key: string): boolean =>
  /^decode\.(kv_|retracted|cache_hit_rate@)/.test(key) &&
  key.endsWith('@decode-0') &&
  !key.startsWith('decode.kv_ttf_s');

const DEPLOYMENT = {
  id: 'demo',
  name: 'Demo PD',
  services: [
    { role: 'decode' as const, hostId: 'demo', unit: 'sglang-decode.service', apiUrl: 'http://127.0.0.1:1' },
  ],
};

const runs = new Map<
  DemoEra,
  { live: Map<number, Record<string, number | null>>; data: ReturnType<typeof buildReviewData> }
>();
let dir: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  dir = await tempDir('pdc-review-kv-dp-');
  for (const era of DEMO_ERAS) {
    const clock = manualClock(START);
    const sim = new DemoSimulation({ clock, era, dpRanks: DP, historyMs: 10 * 60_000 });
    const path = join(dir.dir, `${era}.pdrec.jsonl.gz`);
    const w = await RecordingWriter.open(path, header({ deployment: DEPLOYMENT }), { clock });
    const store = new SignalsStore();
    store.open('d', ['decode']);
    const live = new Map<number, Record<string, number | null>>();
    for (let i = 0; i < 180; i++) {
      clock.set(START + i * 5000);
      const p = sim.units.decode.server;
      if (!p || p.stage !== 'ready') continue;
      const exp = parseExposition(renderServerMetrics(p, era, DP), 'prometheus');
      w.appendScrape(clock.now(), 'decode', exp);
      live.set(clock.now(), ingestPoll(store, 'd', clock.now(), 'decode', exp));
    }
    await w.close();
    runs.set(era, { live, data: buildReviewData(await readRecording(path)) });
  }
}, 120_000);

afterAll(async () => {
  await dir?.cleanup();
});

describe('KV with 2 dp ranks, live and review', () => {
  it.each(DEMO_ERAS)(
    '%s: review computes the same KV, per-rank and retraction values at every scrape',
    (era) => {
      const { live, data } = runs.get(era)!;
      expect(live.size).toBeGreaterThan(100);
      const g = data.table.groups.get('decode@decode-0');
      if (!g) throw new Error('no decode@decode-0 group in the review table');
      const mismatches: string[] = [];
      let n = 0;
      let figures = 0;
      for (const [ts, values] of live) {
        const k = data.table.rowAtOrBefore('decode@decode-0', ts);
        for (const [key, want] of Object.entries(values)) {
          if (!compared(key)) continue;
          const got = g.cols.get(key)?.[k] ?? NaN;
          const expected = want === null || !Number.isFinite(want) ? NaN : Math.fround(want);
          const same = Number.isNaN(expected)
            ? Number.isNaN(got)
            : Math.abs(got - expected) <= 1e-6 * Math.max(1, Math.abs(expected));
          if (!same && mismatches.length < 20) mismatches.push(`${ts} ${key}: live ${want}, review ${got}`);
          n++;
          if (!Number.isNaN(expected)) figures++;
        }
      }
      expect(mismatches).toEqual([]);
      expect(n).toBeGreaterThan(live.size * 3);
      // Two missing figures also compare equal, so say which figures there were. E1 has no capacity gauge: its
      // KV ratio needs /get_server_info, which these scrapes lack, and only the retraction gauge is compared.
      const kvRatios = [...live.values()].map((v) => v['decode.kv_ratio@decode-0']);
      if (era === 'E1') expect(kvRatios.every((r) => r === undefined || r === null)).toBe(true);
      else expect(kvRatios.every((r) => typeof r === 'number')).toBe(true);
      expect([...live.values()].every((v) => typeof v['decode.retracted@decode-0'] === 'number')).toBe(true);
      expect(figures).toBeGreaterThanOrEqual(era === 'E1' ? live.size : live.size * 7);
    },
  );

  it('the eras with token counts per rank write both ranks and a summed ratio below the fullest rank', () => {
    const last = [...runs.get('E4')!.live.values()].at(-1)!;
    // not.toBeNull() would pass on a key that was never written
    expect(last['decode.kv_rank.0.ratio@decode-0']).toBeGreaterThan(0);
    expect(last['decode.kv_rank.1.ratio@decode-0']).toBeGreaterThan(0);
    expect(last['decode.kv_fullest_rank_ratio@decode-0']).toBeGreaterThanOrEqual(
      last['decode.kv_ratio@decode-0']!,
    );
    expect(last['decode.kv_ratio@decode-0']).toBeCloseTo(
      last['decode.kv_used@decode-0']! / last['decode.kv_capacity@decode-0']!,
      12,
    );
    // Decode never reads the cache-hit gauge.
    expect(last['decode.cache_hit_rate@decode-0']).toBeNull();
  });

  it('a role of one worker carries its dp ranks under the role’s keys, live and in review alike', () => {
    const { live, data } = runs.get('E4')!;
    const g = data.table.groups.get('decode')!;
    let n = 0;
    for (const [ts, values] of live) {
      const k = data.table.rowAtOrBefore('decode', ts);
      for (const rank of ['0', '1']) {
        const want = values[`decode.kv_rank.${rank}.ratio`];
        // The role's ranks are the worker's: a screen of a 1P1D draws them by the role's keys.
        expect(want).toBe(values[`decode.kv_rank.${rank}.ratio@decode-0`]);
        expect(g.cols.get(`decode.kv_rank.${rank}.ratio`)?.[k]).toBeCloseTo(Math.fround(want!), 6);
        n++;
      }
    }
    expect(n).toBe(live.size * 2);
    expect(data.table.kvRanks().decode).toEqual(['0', '1']);
  });

  it('a review observation names the fullest dp rank like the live one', () => {
    const { live, data } = runs.get('E4')!;
    const [ts, last] = [...live.entries()].at(-1)!;
    const obs = observationAt(data, 'd', 'h', ts);
    const kv = obs.services.find((s) => s.role === 'decode')?.kv;
    expect(kv?.fullestRank?.ratio).toBeCloseTo(last['decode.kv_fullest_rank_ratio']!, 6);
    const rank = kv!.fullestRank!.rank;
    expect(last[`decode.kv_rank.${rank}.ratio`]).toBe(last['decode.kv_fullest_rank_ratio']);
  });
});
