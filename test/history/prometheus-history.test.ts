// History from the real Prometheus (Debian's 2.42), holding two days backfilled through the app's own
// recording → OpenMetrics export → promtool path: a chart's values from Prometheus equal the app's own live
// evaluation of the same scrapes (KV usage, a rate, a quantile); a range older than the live store comes from
// Prometheus and the newest minutes from live, each part labelled, meeting without overlap; and every way
// Prometheus fails is told on the chart in words naming the query, while the live part is still drawn.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryResult, SeriesResult } from '@shared/contract';
import { emptySeriesResult } from '../../src/main/core/signals/series-query';
import type { ScopedKey } from '@shared/signals/scoped-key';
import { PromHttpClient } from '../../src/main/core/prometheus/http-client';
import type { PromHistoryTarget } from '../../src/main/core/prometheus/history-target';
import { HistoryService } from '../../src/main/core/services/history';
import { recordingHistory } from '../../src/main/core/prometheus/history-recordings';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { extractKv } from '../../src/main/core/signals/evaluate/kv-usage';
import { cliCaptured } from '../cli/run-on-app';
import { backfill, syntheticScrapes, type Backfill } from '../support/prometheus-backfill';
import {
  freePort,
  prometheusUnavailableReason,
  startPrometheus,
  type PrometheusServer,
} from '../support/prometheus-server';

const unavailable = prometheusUnavailableReason();
if (unavailable) console.warn(`SKIP test/history/prometheus-history: ${unavailable}`);

const STEP = 15_000;
// Two days ending ten minutes ago, on the 15 s grid.
const END = Math.floor((Date.now() - 600_000) / STEP) * STEP;
const START = END - 2 * 86_400_000;
/** The live store holds the newest 10 minutes of the same scrapes. */
const LIVE_FROM = END - 600_000;

const RATE = 'decode.generation_tokens_per_s' as ScopedKey;
const QUANTILE = 'decode.ttft_p99_s' as ScopedKey;
const KV = 'decode.kv_ratio' as ScopedKey;
const ROUTER_RATE = 'router.router_requests_per_s' as ScopedKey;

const noLive = emptySeriesResult;

describe.skipIf(unavailable !== null)('history from the real Prometheus', () => {
  let data: Backfill;
  let prom: PrometheusServer;
  let client: PromHttpClient;
  let store: SignalsStore;
  /** The live path's values at each scrape of the last hour: the store's evaluator and the monitor's KV. */
  const livePath = new Map<string, Map<number, number | null>>();

  const targetOf = (
    api: PromHttpClient,
    selector = (t: string): string | null => data.selector(t as never),
  ) =>
    ({
      api,
      scrapeIntervalS: 15,
      selector: (role) => selector(role),
    }) satisfies PromHistoryTarget;

  beforeAll(async () => {
    data = await backfill(START, END, STEP);
    prom = await startPrometheus({
      configYaml: 'global:\n  scrape_interval: 15s\nscrape_configs: []\n',
      blocksDir: data.blocksDir,
      retention: '15d',
    });
    client = new PromHttpClient({ baseUrl: prom.url, label: 'prometheus.service on gpu-a' });
    store = new SignalsStore();
    store.open('demo', ['decode', 'router']);
    const cmpFrom = END - 3_600_000;
    for (const key of [RATE, QUANTILE, KV, ROUTER_RATE]) livePath.set(key, new Map());
    for (const s of syntheticScrapes(START, END, STEP)) {
      if (s.ts < cmpFrom - 120_000) continue;
      // The live store's own evaluator over the same scrapes (it keeps every row; the charts' path).
      const values = store.ingest('demo', s.ts, s.target, s.exp);
      if (s.ts < cmpFrom) continue;
      if (s.target === 'decode') {
        livePath.get(RATE)!.set(s.ts, values[RATE] ?? null);
        livePath.get(QUANTILE)!.set(s.ts, values[QUANTILE] ?? null);
        const kv = extractKv(s.exp);
        livePath.get(KV)!.set(s.ts, 'ratio' in kv ? kv.ratio : null);
      } else livePath.get(ROUTER_RATE)!.set(s.ts, values[ROUTER_RATE] ?? null);
    }
  }, 300_000);

  afterAll(async () => {
    client?.dispose();
    await prom?.stop();
    await data?.cleanup();
  });

  it('gives, from Prometheus, the values the live path computes from the same scrapes', async () => {
    const history = new HistoryService({ live: noLive, prometheus: async () => targetOf(client) });
    const fromMs = END - 3_600_000;
    // 240 points over an hour: the 15 s grid of the scrapes themselves.
    const r = await history.history({
      deploymentId: 'demo',
      keys: [KV, RATE, QUANTILE, ROUTER_RATE],
      fromMs,
      toMs: END,
      points: 240,
    });
    for (const s of r.series) {
      expect(s.problems, s.key).toEqual([]);
      expect(s.parts).toHaveLength(1);
      const part = s.parts[0];
      expect(part).toMatchObject({ source: 'prometheus', label: 'prometheus.service on gpu-a', stepS: 15 });
      const live = livePath.get(s.key)!;
      let compared = 0;
      for (const [t, v] of part.points) {
        const want = live.get(t);
        if (want === undefined || want === null || v === null) continue;
        expect(v, `${s.key} at ${new Date(t).toISOString()}`).toBeCloseTo(want, 9);
        compared++;
      }
      // Every scrape of the hour but the first window's worth, where the live store had no rate yet.
      expect(compared, s.key).toBeGreaterThan(230);
    }
    expect(r.promBytes).toBeGreaterThan(0);
  });

  it('draws a week-old range from Prometheus and the newest minutes from live, labelled, without overlap', async () => {
    const live = (q: Parameters<SignalsStore['getSeries']>[0]): SeriesResult => {
      // The store holds the last hour; as the app does after ten minutes open, keep only its newest ten.
      const res = store.getSeries({ ...q, fromMs: Math.max(q.fromMs ?? -Infinity, LIVE_FROM) });
      return { ...res, firstMs: LIVE_FROM };
    };
    const history = new HistoryService({ live, prometheus: async () => targetOf(client) });
    const r: HistoryResult = await history.history({
      deploymentId: 'demo',
      keys: [RATE, QUANTILE],
      fromMs: START,
      toMs: END,
      points: 800,
    });
    expect(r.liveFromMs).toBe(LIVE_FROM);
    for (const s of r.series) {
      expect(
        s.parts.map((p) => p.source),
        s.key,
      ).toEqual(['prometheus', 'live']);
      const [older, newest] = s.parts;
      expect(older.label).toBe('prometheus.service on gpu-a');
      expect(newest.label).toBe('this app (live)');
      // About a point per pixel of the older share, on a step no finer than the scrape interval.
      expect(older.stepS).toBe(300);
      expect(older.points.length).toBeGreaterThan(500);
      expect(older.points[0][0]).toBeLessThanOrEqual(START + 300_000);
      // The parts meet: the last Prometheus point is one step or less before the first live one.
      const lastOld = older.points[older.points.length - 1][0];
      const firstNew = newest.points[0][0];
      expect(lastOld).toBeLessThan(firstNew);
      expect(firstNew - lastOld).toBeLessThanOrEqual(300_000);
      expect(firstNew).toBeGreaterThanOrEqual(LIVE_FROM);
      expect(older.points.every(([, v]) => v !== null)).toBe(true);
    }
  });

  it("answers a page's charts in one getHistoryBatch exactly as one getHistory per chart", async () => {
    const live = (q: Parameters<SignalsStore['getSeries']>[0]): SeriesResult => ({
      ...store.getSeries({ ...q, fromMs: Math.max(q.fromMs ?? -Infinity, LIVE_FROM) }),
      firstMs: LIVE_FROM,
    });
    let looks = 0;
    const handlers = new HistoryService({
      live,
      prometheus: async () => {
        looks++;
        return targetOf(client);
      },
    }).handlers();
    const groups = [
      { keys: [RATE], points: 800 },
      { keys: [QUANTILE, RATE], points: 300 },
    ];
    const batch = await handlers.getHistoryBatch({ deploymentId: 'demo', fromMs: START, toMs: END, groups });
    const one = await Promise.all(
      groups.map((g) =>
        handlers.getHistory({
          deploymentId: 'demo',
          fromMs: START,
          toMs: END,
          keys: g.keys,
          points: g.points,
        }),
      ),
    );
    expect(batch.results).toEqual(one);
    // The batch looked for the deployment's Prometheus once; each getHistory looked for itself.
    expect(looks).toBe(1 + groups.length);
    expect(batch.results[1].series.map((x) => x.parts.map((p) => p.source))).toEqual([
      ['prometheus', 'live'],
      ['prometheus', 'live'],
    ]);
  });

  describe('failures, each told on the chart while live goes on', () => {
    const liveOnly = (q: Parameters<SignalsStore['getSeries']>[0]): SeriesResult => ({
      ...store.getSeries({ ...q, fromMs: LIVE_FROM }),
      firstMs: LIVE_FROM,
    });
    const ask = (history: HistoryService, keys: ScopedKey[] = [RATE]) =>
      history.history({ deploymentId: 'demo', keys, fromMs: END - 86_400_000, toMs: END, points: 600 });

    it('Prometheus down: names it, the query and the cause; the live part is still there', async () => {
      const port = await freePort();
      const down = new PromHttpClient({
        baseUrl: `http://127.0.0.1:${port}`,
        label: 'prometheus.service on gpu-b',
      });
      const r = await ask(new HistoryService({ live: liveOnly, prometheus: async () => targetOf(down) }));
      const s = r.series[0];
      expect(s.parts.map((p) => p.source)).toEqual(['live']);
      expect(s.problems).toHaveLength(1);
      expect(s.problems[0]).toMatchObject({ source: 'prometheus', code: 'unreachable' });
      expect(s.problems[0].message).toContain('prometheus.service on gpu-b');
      expect(s.problems[0].message).toContain(RATE);
      expect(s.problems[0].query).toContain('sglang:generation_tokens_total');
      down.dispose();
    });

    it('Prometheus down: the recordings of that range fill it, each part named', async () => {
      const port = await freePort();
      const down = new PromHttpClient({
        baseUrl: `http://127.0.0.1:${port}`,
        label: 'prometheus.service on gpu-b',
      });
      const recordings = recordingHistory({
        list: async () => [
          {
            id: 'backfill',
            path: data.recordingPath,
            name: 'backfilled history',
            hostId: 'demo',
            hostLabel: 'Demo GPU host',
            deploymentId: 'demo',
            deploymentName: 'Demo PD',
            startedAt: START,
            endedAt: END - STEP,
            durationMs: END - STEP - START,
            sizeBytes: 1,
            state: 'complete',
            annotations: 0,
            warnings: [],
          },
        ],
      });
      const r = await ask(
        new HistoryService({ live: liveOnly, prometheus: async () => targetOf(down), recordings }),
      );
      const s = r.series[0];
      expect(s.parts.map((p) => [p.source, p.label])).toEqual([
        ['recording', 'recording “backfilled history”'],
        ['live', 'this app (live)'],
      ]);
      const [older, newest] = s.parts;
      expect(older.points.length).toBeGreaterThan(300);
      expect(older.points[older.points.length - 1][0]).toBeLessThan(newest.points[0][0]);
      // The recording's rate is the live evaluator's over the same scrapes (review keeps 32-bit floats).
      const live = livePath.get(RATE)!;
      const shared = older.points.filter(([t, v]) => v !== null && live.get(t) != null);
      expect(shared.length).toBeGreaterThan(5);
      for (const [t, v] of shared) expect(v).toBeCloseTo(live.get(t)!, 3);
      expect(s.problems[0]).toMatchObject({ code: 'unreachable' });
      down.dispose();
    });

    it('Prometheus slow: gives up after the timeout and says so', async () => {
      const sockets: Socket[] = [];
      const silent: Server = createServer((sock) => sockets.push(sock));
      await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
      const port = (silent.address() as { port: number }).port;
      const slow = new PromHttpClient({
        baseUrl: `http://127.0.0.1:${port}`,
        label: 'slow prometheus',
        timeoutMs: 300,
      });
      const r = await ask(new HistoryService({ live: liveOnly, prometheus: async () => targetOf(slow) }));
      expect(r.series[0].parts.map((p) => p.source)).toEqual(['live']);
      expect(r.series[0].problems[0]).toMatchObject({ code: 'timeout' });
      expect(r.series[0].problems[0].message).toContain('slow prometheus');
      slow.dispose();
      for (const s of sockets) s.destroy();
      await new Promise((ok) => silent.close(ok));
    });

    it('a series Prometheus does not hold: "no data", with the query to check', async () => {
      const key = 'decode.kv_transfer_latency_p99_ms' as ScopedKey;
      const r = await ask(new HistoryService({ live: liveOnly, prometheus: async () => targetOf(client) }), [
        key,
        RATE,
      ]);
      expect(r.series[0].problems[0]).toMatchObject({ source: 'prometheus', code: 'missing' });
      expect(r.series[0].problems[0].message).toContain(`has no data for ${key}`);
      expect(r.series[0].problems[0].query).toContain('sglang:kv_transfer_latency_ms_bucket');
      // The other chart is unaffected.
      expect(r.series[1].problems).toEqual([]);
      expect(r.series[1].parts.map((p) => p.source)).toEqual(['prometheus', 'live']);
    });

    it('a range longer than the retention: says how much Prometheus keeps and what to change', async () => {
      const history = new HistoryService({ live: liveOnly, prometheus: async () => targetOf(client) });
      const r = await history.history({
        deploymentId: 'demo',
        keys: [RATE],
        fromMs: END - 30 * 86_400_000,
        toMs: END,
        points: 600,
      });
      const s = r.series[0];
      expect(s.parts.map((p) => p.source)).toEqual(['prometheus', 'live']);
      const note = s.problems.find((p) => p.code === 'retention');
      expect(note?.message).toMatch(/keeps 15 d of history; this range starts 30(\.\d)? d ago/);
      expect(note?.fix).toContain('--storage.tsdb.retention.time');
    });

    it('a worker Prometheus does not scrape, and no Prometheus at all', async () => {
      const r = await ask(
        new HistoryService({
          live: liveOnly,
          prometheus: async () =>
            targetOf(client, (role) => (role === 'decode' ? null : data.selector('router'))),
        }),
      );
      expect(r.series[0].problems[0]).toMatchObject({ code: 'not-scraped' });
      expect(r.series[0].problems[0].message).toContain('not scraped by prometheus.service on gpu-a');
      expect(r.series[0].problems[0].fix).toContain('pd-console export prometheus-config');
      const none = await ask(new HistoryService({ live: liveOnly }));
      expect(none.series[0].problems[0]).toMatchObject({ code: 'no-prometheus' });
      expect(none.series[0].parts.map((p) => p.source)).toEqual(['live']);
    });
  });

  describe('pd-console history', () => {
    const argv = (...more: string[]): string[] => [
      'history',
      'decode.kv_ratio',
      '--host',
      'demo',
      '--since',
      '2d',
      '--prometheus',
      prom.url,
      '--direct',
      '--match',
      data.selector('decode'),
      ...more,
    ];

    it('--json gives [time, value] pairs per part, each naming its source', async () => {
      const r = await cliCaptured(argv('--step', '10m', '--json'));
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.out) as {
        key: string;
        parts: {
          source: string;
          label: string;
          stepS?: number;
          query?: string;
          points: [number, number | null][];
        }[];
      };
      expect(out.key).toBe('decode.kv_ratio');
      const prom0 = out.parts.find((p) => p.source === 'prometheus')!;
      expect(prom0).toMatchObject({ label: `Prometheus at ${prom.url}`, stepS: 600 });
      expect(prom0.query).toContain('sglang:kv_used_tokens{target="decode"');
      // Two days at 10 min, less the last ten minutes the backfill leaves empty.
      expect(prom0.points.length).toBeGreaterThan(280);
      const [t, v] = prom0.points[10];
      expect(t % 600_000).toBe(0);
      expect(v).toBeGreaterThan(0);
      expect(v).toBeLessThan(1);
    });

    it('prints each part under its source, and says what to do with a bad step', async () => {
      const r = await cliCaptured(argv('--step', '1h'));
      expect(r.code).toBe(0);
      // The first line names the host it answers for, here the simulated one.
      expect(r.out).toMatch(/^demo GPU host \(simulated\): decode\.kv_ratio — KV usage \(ratio\)/);
      expect(r.out).toContain(`from prometheus: Prometheus at ${prom.url}, one point every 3600 s`);
      expect(r.out).toMatch(/\n {2}\d{4}-\d\d-\d\dT\d\d:00:00Z {2}0\.\d+/);
      const bad = await cliCaptured(argv('--step', '1s'));
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('use a step of at least 16s');
    });
  });
});
