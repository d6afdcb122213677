// A PD-mode sglang-router 0.2.4 records only sgl_router_pd_*: the live router signals and review mode's
// columns both read them (requests/s, error share, latency), and agree at every scrape of a demo session
// that includes a decode outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DemoSimulation } from '../../src/main/demo';
import { renderRouterMetrics } from '../../src/main/demo/router-metrics';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { RecordingWriter, readRecording } from '../../src/main/core/recording';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { header, manualClock, tempDir, oneHostByRole } from '../recording/helpers';

const START = Date.UTC(2026, 0, 5, 8, 0, 0);
const KEYS = ['requests_per_s', 'error_share', 'latency_p50_s', 'latency_p99_s'].map(
  (k) => `router.router_${k}`,
);
const live = new Map<number, Record<string, number | null>>();
let dir: { dir: string; cleanup: () => Promise<void> };
let data: ReturnType<typeof buildReviewData>;

beforeAll(async () => {
  dir = await tempDir('pdc-review-pd-');
  const clock = manualClock(START);
  const sim = new DemoSimulation({ clock, routerEra: 'sglang-router-0.2.4', historyMs: 10 * 60_000 });
  const path = join(dir.dir, 's.pdrec.jsonl.gz');
  const w = await RecordingWriter.open(path, header({ deployment: oneHostByRole() }), { clock });
  const store = new SignalsStore();
  store.open('d', ['router']);
  for (let i = 0; i < 240; i++) {
    if (i === 60) sim.stopUnit('decode');
    if (i === 120) sim.startUnit('decode');
    clock.set(START + i * 5000);
    const r = sim.units.router.router;
    if (!r) continue;
    const exp = parseExposition(renderRouterMetrics(r, sim.routerEra), 'prometheus');
    w.appendScrape(clock.now(), 'router', exp);
    live.set(clock.now(), store.ingest('d', clock.now(), 'router', exp, 'router'));
  }
  await w.close();
  data = buildReviewData(await readRecording(path));
}, 60_000);

afterAll(async () => {
  await dir?.cleanup();
});

describe('PD-mode sglang-router 0.2.4 router signals', () => {
  it('are known live (not null) from the sgl_router_pd_* families', () => {
    const last = [...live.values()].at(-1);
    expect(last?.['router.router_requests_per_s']).toBeGreaterThan(0);
    expect(last?.['router.router_latency_p50_s']).toBeGreaterThan(0);
    // The outage produced server-selection and upstream errors: some scrape shows a non-zero share.
    expect([...live.values()].some((v) => (v['router.router_error_share'] ?? 0) > 0)).toBe(true);
  });

  it('review mode computes the same values at every scrape', () => {
    const g = data.table.groups.get('router');
    if (!g) throw new Error('no router group in the review table');
    const mismatches: string[] = [];
    const figures = new Map<string, number>(KEYS.map((key) => [key, 0]));
    for (const [ts, values] of live) {
      const k = data.table.rowAtOrBefore('router', ts);
      for (const key of KEYS) {
        const want = values[key];
        const got = g.cols.get(key)?.[k] ?? NaN;
        const expected =
          want === null || want === undefined || !Number.isFinite(want) ? NaN : Math.fround(want);
        const same = Number.isNaN(expected)
          ? Number.isNaN(got)
          : Math.abs(got - expected) <= 1e-6 * Math.max(1, Math.abs(expected));
        if (!same && mismatches.length < 20) mismatches.push(`${ts} ${key}: live ${want}, review ${got}`);
        if (!Number.isNaN(expected)) figures.set(key, figures.get(key)! + 1);
      }
    }
    expect(mismatches).toEqual([]);
    // Two missing figures also compare equal: each signal must have been a number at most scrapes.
    expect(live.size).toBeGreaterThan(200);
    for (const [key, n] of figures) expect(n, key).toBeGreaterThan(live.size / 2);
  });
});
