// Dashboard chart benchmark in real Chromium against the real renderer and core (browser mode, demo host):
// 24 h of 1 s history per series (filled into the signal store at start by the benchmarks' own composition,
// bench/support/bench-web.ts), then, per chart of the KV page (6 charts) and the Metrics page (19) on the 24 h
// range:
//   requests      history requests (getSeries / getSeriesBatch frames on the WebSocket) per page load and zoom
//   first paint   page opened in a booted app → the chart's first frame drawn with data (includes fetching)
//   zoom          drag-zoom → every chart redrawn on the new window, then refined with that window's data
//   live update   one pushed point + chart.update('none'), timed in the page (KV page): the demo's own updates,
//                 then thousands of `signals` events pushed by the backend over the same WebSocket
//   memory        JS heap after GC along those updates (CDP HeapProfiler.collectGarbage, Runtime.getHeapUsage)
// Side by side in the same run: the page batch (one request per page and window, the product's path), the
// per-chart path (`?batch=0`: every chart asks for its own keys, as before) and no decimation (`?decimate=0`:
// every stored point fetched and drawn; KV page only). Then the core's side alone, in this process: the
// page loads' and zooms' getSeriesBatch requests as the pages sent them, answered from the same synthetic day
// by the decimation of the commit before the buckets were shared and by today's, and the JSON the WebSocket
// carries (CPU time, which the machine's load inflates far less than the page timings). Run: npx tsx --tsconfig tsconfig.node.json
// bench/dashboard.ts (needs `npm run build` first, and Chromium: /usr/bin/chromium or PD_CHROMIUM).
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp, type WebApp } from '../e2e/support/web-app';
import { BENCH_WEB_ENTRY, BENCH_WEB_ENV, pushSignals } from './support/bench-client';
import { chartsOnScreen, collectPerfScript, type ChartPerfRecord } from '../e2e/support/chart-perf';
import type { SeriesBatchQuery, SeriesResult } from '../src/shared/api/dashboard';
import { groupOf } from '../src/main/core/signals/signal-history';
import { ColumnRing } from '../src/main/core/signals/column-ring';
import { typicalGapMs } from '../src/main/core/signals/decimate';
import { answerSeries } from '../src/main/core/signals/series-query';
import { fillSyntheticHistory } from './support/synthetic-history';
import { answerSeriesBefore } from './support/decimate-before';
import { encodeServerFrame } from '../src/shared/wire-frame';

interface PerfRecord extends ChartPerfRecord {
  kind: 'first-paint' | 'scroll-in' | 'fetch' | 'live-update' | 'zoom' | 'zoom-refined';
}

type ModeName = 'batched' | 'per-chart' | 'raw';

interface ChartFigures {
  /** One per page load (rounds alternate the paths, so load on the machine hits both alike). */
  firstPaintMs: number[];
  /** Of which: the history request's round trip (core decimation, JSON, WebSocket). */
  firstFetchMs: number[];
  /** Out of sight at load: drawn when the page is idle, after those on screen. */
  outOfSight?: boolean;
  points: number;
  /** Updates pushed through the dispatcher (?bench=1). */
  liveMs: number[];
  /** The demo's own live updates. */
  realLiveMs: number[];
  /** Redraw of every chart on the zoomed window with the points at hand. */
  zoomMs: number[];
  /** The same chart after its data for the zoomed window arrived. */
  zoomRefinedMs: number[];
  zoomPoints: number;
}

interface PageFigures {
  charts: Record<string, ChartFigures>;
  /** History requests of each page load. */
  loadRequests: number[];
  /** Per load: Playwright's click on the page's tab → the last chart on screen drawn with its data. */
  pageFirstPaintMs: number[];
  /** Per load: the pointerdown on the tab (the page's own clock) → the last chart on screen drawn. */
  pressFirstPaintMs: number[];
  /** Per load: the pointerdown → the animation frame that shows the last chart on screen (its task ended). */
  pressFrameMs: number[];
  /** Per load: the charts on screen (drawn at load) and out of sight (drawn when scrolled to). */
  inSight: number[];
  outOfSight: number[];
  /** Per load: the tab click → the last chart out of sight drawn (when the page was idle). */
  laterPaintMs: number[];
  /** History requests of each zoom. */
  zoomRequests: number[];
  /** Main-thread time of the page per load and per zoom (until its last chart drew), from Chromium's metrics. */
  loadCpu: MainThread[];
  zoomCpu: MainThread[];
  /** The getSeriesBatch requests of the first load and the first zoom, for the core's own figures. */
  batches: CapturedBatch[];
}

/** Chromium's own main-thread totals over a stretch (CDP Performance.getMetrics), ms. */
interface MainThread {
  task: number;
  script: number;
  layout: number;
  style: number;
}

async function mainThread(page: Page): Promise<() => Promise<MainThread>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const read = async (): Promise<MainThread> => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    const v = (n: string): number => (metrics.find((m) => m.name === n)?.value ?? NaN) * 1000;
    return {
      task: v('TaskDuration'),
      script: v('ScriptDuration'),
      layout: v('LayoutDuration'),
      style: v('RecalcStyleDuration'),
    };
  };
  const start = await read();
  return async () => {
    const end = await read();
    return {
      task: end.task - start.task,
      script: end.script - start.script,
      layout: end.layout - start.layout,
      style: end.style - start.style,
    };
  };
}

interface CapturedBatch {
  what: 'load' | 'zoom';
  query: SeriesBatchQuery;
  /** Date.now() when it was sent: the core's figures shift its window onto their own day. */
  at: number;
}

interface SentRequest {
  method: string;
  payload: string;
  at: number;
}

export interface ModeResult {
  mode: ModeName;
  pages: Record<string, PageFigures>;
  heapMiB: number[];
  heapSampleEvery: number;
  pushes: number;
}

const PAGES = [
  { name: 'KV', nav: 'nav-kv', hash: '#/kv' },
  { name: 'Metrics', nav: 'nav-metrics', hash: '#/metrics' },
] as const;
type PageName = (typeof PAGES)[number]['name'];

interface ModePlan {
  mode: ModeName;
  query: string;
  /** Pushed live updates on the KV page (0: no live stretch). */
  pushes: number;
}

const GOALS = { firstPaintMs: 100, liveMs: 8, zoomMs: 50 };

export async function runDashboardBench(
  opts: { pushes?: number; rawPushes?: number; zooms?: number } = {},
): Promise<ModeResult[]> {
  const root = join(__dirname, '..');
  if (!existsSync(join(root, 'out', 'main', 'web.js')))
    throw new Error('no built app in out/: run `npm run build` first');
  const app = await startWebApp([], { ...BENCH_WEB_ENV, BENCH_HISTORY_HOURS: '24' }, BENCH_WEB_ENTRY);
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const results: ModeResult[] = [];
    // Let the demo open and the 24 h fill land before the first page loads.
    await new Promise((r) => setTimeout(r, 3000));
    const batched: ModePlan = {
      mode: 'batched',
      query: '',
      pushes: opts.pushes ?? 3000,
    };
    const perChart: ModePlan = { mode: 'per-chart', query: '&batch=0', pushes: 0 };
    // A day of raw points for all 19 Metrics charts is ~4 M points in one answer: the KV page tells enough.
    const raw: ModePlan = { mode: 'raw', query: '&decimate=0', pushes: opts.rawPushes ?? 300 };
    // Warm up first (the core's decimation and the page's code run several times slower on their first calls),
    // so the first mode measured is not the only one timed cold.
    console.log('warm-up: both pages, both paths…');
    for (const query of ['', '&batch=0'])
      for (const { nav } of PAGES) {
        const { page } = await open(browser, `${app.url}&range=24h&live=0${query}#/overview`);
        await page.getByTestId('pipeline').waitFor({ timeout: 60_000 });
        await page.getByTestId(nav).click();
        await page.locator('section[data-testid^="chart-"][data-state="ready"]').first().waitFor();
        await page.waitForTimeout(1500);
        await page.close();
      }
    const fresh = (mode: ModeName): ModeResult => ({
      mode,
      pages: {},
      heapMiB: [],
      heapSampleEvery: 1,
      pushes: 0,
    });
    const byMode = { batched: fresh('batched'), 'per-chart': fresh('per-chart'), raw: fresh('raw') };
    // Batched and per-chart in alternating rounds (ABBA…), one zoom each: this machine's load drifts over
    // minutes, and a side-by-side figure must not be one path's quiet minute against the other's busy one.
    const rounds = opts.zooms ?? 3;
    for (let r = 0; r < rounds; r++)
      for (const { name } of PAGES)
        for (const plan of r % 2 === 0 ? [batched, perChart] : [perChart, batched])
          await measurePage(browser, app, plan, name, 1, byMode[plan.mode]);
    await measurePage(browser, app, raw, 'KV', rounds, byMode.raw);
    // The live stretch comes last and takes longest: if it fails, the page-load and zoom figures already
    // measured are still printed (with the failure), not lost with it.
    const failed: string[] = [];
    for (const plan of [batched, raw])
      await measureLive(browser, app, plan, byMode[plan.mode]).catch((err: unknown) => {
        failed.push(
          `[${plan.mode}] live updates failed: ${err instanceof Error ? err.message : String(err)}`,
        );
        console.log(failed[failed.length - 1]);
      });
    results.push(byMode.batched, byMode['per-chart'], byMode.raw);
    print(results);
    printCore(coreFigures(byMode.batched.pages));
    if (failed.length) throw new Error(failed.join('; '));
    return results;
  } finally {
    await browser?.close();
    await app.stop();
  }
}

const emptyChart = (): ChartFigures => ({
  firstPaintMs: [],
  firstFetchMs: [],
  points: 0,
  liveMs: [],
  realLiveMs: [],
  zoomMs: [],
  zoomRefinedMs: [],
  zoomPoints: 0,
});

async function chartIds(page: Page): Promise<string[]> {
  const charts = page.locator('section[data-testid^="chart-"][data-state]');
  await charts.first().waitFor({ timeout: 60_000 });
  const ids = await charts.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.slice(6)));
  return ids;
}

/**
 * Of `charts`, those whose canvas is on the screen, which the page draws first. Until 2026-12-05 this counted
 * the canvases within 100 px below the screen too (the charts' look-ahead margin): at 1440×900 that added the
 * Metrics page's third row, whose titles show and whose canvases do not; the page now builds those when idle.
 */
const onScreen = async (page: Page, charts: string[]): Promise<string[]> => {
  const visible = await chartsOnScreen(page);
  return charts.filter((c) => visible.includes(c));
};

const clear = (page: Page) =>
  page.evaluate(() => ((window as unknown as { __chartPerf: PerfRecord[] }).__chartPerf.length = 0));

/** One load of a page in one mode, then `zooms` zooms; figures appended to `into`. */
async function measurePage(
  browser: Browser,
  app: WebApp,
  plan: ModePlan,
  name: PageName,
  zooms: number,
  into: ModeResult,
): Promise<void> {
  const { mode, query } = plan;
  const url = app.url;
  {
    const spec = PAGES.find((p) => p.name === name)!;
    console.log(`[${mode}] ${name} page: first paint and zoom…`);
    // A: the app booted on the overview, then the page opened on 24 h (live appends off, so the raw charts
    // are timed without their own live updates competing).
    const { page, perf, errors, requests } = await open(browser, `${url}&range=24h&live=0${query}#/overview`);
    await page.getByTestId('pipeline').waitFor({ timeout: 60_000 });
    await page.waitForTimeout(2000);
    await clear(page);
    requests.length = 0;
    const clickAt = await page.evaluate(() => performance.now());
    // The operator's press on the tab, on the page's clock: Playwright's click reaches it after its own checks
    // (the tab stable over two animation frames, a hit test), ≈ 15–30 ms that no operator waits for.
    await page.evaluate(() =>
      document.addEventListener(
        'pointerdown',
        (e) => ((window as unknown as { __benchPressAt: number }).__benchPressAt = e.timeStamp),
        { capture: true, once: true },
      ),
    );
    const loadCpu = await mainThread(page);
    await page.getByTestId(spec.nav).click();
    const pressAt = await page.evaluate(
      () => (window as unknown as { __benchPressAt?: number }).__benchPressAt ?? NaN,
    );
    const charts = await chartIds(page);
    const figures: PageFigures = (into.pages[name] ??= {
      charts: {},
      loadRequests: [],
      pageFirstPaintMs: [],
      pressFirstPaintMs: [],
      pressFrameMs: [],
      inSight: [],
      outOfSight: [],
      laterPaintMs: [],
      zoomRequests: [],
      loadCpu: [],
      zoomCpu: [],
      batches: [],
    });
    for (const c of charts) figures.charts[c] ??= emptyChart();
    // Those on screen (or within the 100 px the page draws ahead) are drawn first, the others when idle.
    const near = await onScreen(page, charts);
    await waitFor(
      page,
      async () => {
        const p = await perf();
        return charts.every((c) => p.some((r) => r.chart === c && r.kind === 'first-paint'));
      },
      300_000,
      `first paint of ${charts.join(', ')} (${mode})`,
    );
    figures.loadCpu.push(await loadCpu());
    // A request made after the last chart painted would still be the page load's: let it show.
    await page.waitForTimeout(1000);
    figures.loadRequests.push(requests.length);
    keepBatches(figures, 'load', requests);
    const fetched = new Set<string>();
    const painted: PerfRecord[] = [];
    for (const r of await perf()) {
      const c = figures.charts[r.chart];
      if (!c) continue;
      if (r.kind === 'first-paint') {
        c.firstPaintMs.push(r.ms);
        c.points = r.points;
        painted.push(r);
      }
      if (r.kind === 'fetch' && !fetched.has(r.chart)) {
        fetched.add(r.chart);
        c.firstFetchMs.push(r.ms);
      }
    }
    const seen = painted.filter((r) => near.includes(r.chart));
    const lastOnScreen = Math.max(...seen.map((r) => r.end));
    figures.pageFirstPaintMs.push(lastOnScreen - clickAt);
    figures.pressFirstPaintMs.push(lastOnScreen - pressAt);
    figures.pressFrameMs.push(Math.max(...seen.map((r) => r.frame)) - pressAt);
    const later = charts.filter((c) => !near.includes(c));
    figures.inSight.push(near.length);
    figures.outOfSight.push(later.length);
    figures.laterPaintMs.push(
      later.length
        ? Math.max(...painted.filter((r) => later.includes(r.chart)).map((r) => r.end - clickAt))
        : NaN,
    );
    for (const c of later) figures.charts[c].outOfSight = true;
    // Zooms: drag across a fifth of the page's first chart; every chart of the page follows the window.
    for (let z = 0; z < zooms; z++) {
      await clear(page);
      requests.length = 0;
      const box = (await page.getByTestId(`canvas-${charts[0]}`).boundingBox())!;
      const y = box.y + box.height / 2;
      const zoomCpu = await mainThread(page);
      await page.mouse.move(box.x + box.width * (0.3 + z * 0.05), y);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * (0.5 + z * 0.05), y, { steps: 4 });
      await page.mouse.up();
      await waitFor(
        page,
        async () => {
          const p = await perf();
          return charts.every((c) => p.some((r) => r.chart === c && r.kind === 'zoom-refined'));
        },
        120_000,
        `zoom ${z + 1} (${mode}, ${name})`,
      );
      figures.zoomCpu.push(await zoomCpu());
      figures.zoomRequests.push(requests.length);
      keepBatches(figures, 'zoom', requests);
      for (const r of await perf()) {
        const c = figures.charts[r.chart];
        if (!c) continue;
        if (r.kind === 'zoom') c.zoomMs.push(r.ms);
        if (r.kind === 'zoom-refined') {
          c.zoomRefinedMs.push(r.ms);
          c.zoomPoints = r.points;
        }
      }
      await clear(page);
      await page.getByTestId('back-to-live').click();
      await waitFor(
        page,
        async () => (await perf()).filter((r) => r.kind === 'fetch').length >= charts.length,
        120_000,
        'back to live',
      );
    }
    if (errors.length) throw new Error(`page errors during the ${mode} run: ${errors.join('; ')}`);
    await page.close();
  }
}

/** Live updates on the KV page: the demo's own for 20 s, then `plan.pushes` pushed, heap along the way. */
async function measureLive(browser: Browser, app: WebApp, plan: ModePlan, into: ModeResult): Promise<void> {
  const { mode, query } = plan;
  const url = app.url;
  const pages = into.pages;
  const heapMiB: number[] = [];
  const pushes = plan.pushes;
  const every = Math.max(1, Math.floor(pushes / 6));
  if (pushes > 0) {
    console.log(
      `[${mode}] live updates: real for 20 s, then ${pushes} through the same path, heap along the way…`,
    );
    // B: live updates on the KV page's 24 h window. First the demo's own (one per second), then many more
    // pushed by the backend over the same WebSocket, so "memory over many updates" takes seconds, not hours.
    // Only the KV charts the pushed rows feed are timed (the retraction charts get no pushed rows).
    const kv = pages.KV.charts;
    const { page, perf, errors } = await open(browser, `${url}&range=24h${query}#/kv`);
    await chartIds(page);
    // Charts out of sight draw nothing until scrolled to, live updates included: only those on screen count.
    const charts = await onScreen(
      page,
      Object.keys(kv).filter((c) => c.startsWith('kv-')),
    );
    const cdp = await page.context().newCDPSession(page);
    const heap = async (): Promise<number> => {
      await cdp.send('HeapProfiler.collectGarbage');
      const u = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
      return u.usedSize / 1024 / 1024;
    };
    await waitFor(
      page,
      async () => {
        const p = await perf();
        return charts.every((c) => p.some((r) => r.chart === c && r.kind === 'first-paint'));
      },
      300_000,
      `first paint (${mode}, live)`,
    );
    await clear(page);
    await page.waitForTimeout(20_000);
    for (const r of await perf()) if (r.kind === 'live-update') kv[r.chart]?.realLiveMs.push(r.ms);
    await clear(page);
    heapMiB.push(await heap());
    const t0 = Date.now() + 60_000;
    for (let done = 0; done < pushes; done += every) {
      const n = Math.min(every, pushes - done);
      await pushSignals(app, n, t0 + done * 1000);
      await waitFor(
        page,
        async () =>
          (await perf()).filter((r) => r.kind === 'live-update' && charts.includes(r.chart)).length >=
          n * charts.length,
        120_000,
        `${n} pushed updates drawn (${mode})`,
      );
      // Take the timings out of the page before measuring the heap: they are the benchmark's, not the app's.
      for (const r of await perf())
        if (r.kind === 'live-update' && charts.includes(r.chart)) kv[r.chart].liveMs.push(r.ms);
      await clear(page);
      heapMiB.push(await heap());
    }
    if (errors.length) throw new Error(`page errors during the ${mode} run: ${errors.join('; ')}`);
    await page.close();
  }
  Object.assign(into, { heapMiB, heapSampleEvery: every, pushes });
}

/** The first getSeriesBatch request of a page load or zoom, kept once per page. */
function keepBatches(figures: PageFigures, what: CapturedBatch['what'], sent: SentRequest[]): void {
  if (figures.batches.some((b) => b.what === what)) return;
  const r = sent.find((x) => x.method === 'getSeriesBatch');
  if (!r) return;
  const frame = JSON.parse(r.payload) as { args: SeriesBatchQuery };
  figures.batches.push({ what, query: frame.args, at: r.at });
}

interface CoreFigures {
  page: string;
  what: CapturedBatch['what'];
  keys: number;
  rows: number;
  points: number;
  /** Core time per request: the decimation of the commit before, today's (live rings) with nothing kept,
   * today's for the same window 5 s later (the buckets the first answer kept, kept-buckets.ts), today's over a
   * recording's flat columns (review's ColumnRing.over, nothing kept), and JSON.stringify of the answer. */
  beforeMs: number[];
  afterMs: number[];
  keptMs: number[];
  reviewMs: number[];
  jsonMs: number[];
  bytes: number;
  /** The answer's frame as browser mode sends it (src/shared/wire-frame.ts): CPU ms and bytes. */
  wireMs: number[];
  wireBytes: number;
}

/**
 * The pages' own requests answered in this process from a synthetic day like the app's (same generator),
 * before and after, alternating, `repeats` times each.
 */
export function coreFigures(pages: Record<string, PageFigures>, repeats = 21): CoreFigures[] {
  const batches = Object.entries(pages).flatMap(([page, f]) => f.batches.map((b) => ({ page, ...b })));
  if (batches.length === 0) return [];
  console.log('core: the pages’ requests answered in this process, before / after…');
  const gpus = [
    ...new Set(
      batches.flatMap((b) =>
        b.query.groups.flatMap((g) => g.keys.flatMap((k) => /^gpu\.(\d+)\./.exec(k)?.[1] ?? [])),
      ),
    ),
  ].map(Number);
  const rings = new Map<string, ColumnRing>();
  const now = Date.now();
  fillSyntheticHistory(
    {
      writeRow: (_d, group, ts, values) => {
        let r = rings.get(group);
        if (!r) rings.set(group, (r = new ColumnRing(86_400)));
        return r.set(ts, values);
      },
    },
    'bench',
    { fromMs: now - 86_400_000, toMs: now - 1000, roles: ['router', 'prefill', 'decode'], gpus },
  );
  // A recording's table: the same rows in flat arrays, as review's SignalTable holds them.
  const flat = new Map<string, ColumnRing>();
  for (const [group, r] of rings) {
    const [lo, hi] = r.range();
    const t = new Float64Array(hi - lo);
    const cols = new Map<string, Float32Array>();
    for (let k = lo; k < hi; k++) t[k - lo] = r.timeAt(k);
    for (const key of r.keys()) {
      const c = new Float32Array(hi - lo);
      for (let k = lo; k < hi; k++) c[k - lo] = r.valueAt(key, k);
      cols.set(key, c);
    }
    flat.set(group, ColumnRing.over(t, cols));
  }
  const source = (m: Map<string, ColumnRing>) => ({
    ring: (key: string) => m.get(groupOf(key)),
    gapMs: typicalGapMs,
    missing: () => undefined,
    notExposed: {},
  });
  const live = source(rings);
  const review = source(flat);
  // CPU time of this thread (user + system), not wall time: on a machine shared with other jobs a wait for
  // the core would otherwise count as work.
  const timed = <T>(fn: () => T): [T, number] => {
    const s = process.cpuUsage();
    const out = fn();
    const d = process.cpuUsage(s);
    return [out, (d.user + d.system) / 1000];
  };
  return batches.map(({ page, what, query, at }) => {
    // The window as the page asked it, moved onto this process's day.
    const shift = now - at;
    const from = query.fromMs === undefined ? undefined : query.fromMs + shift;
    const to = query.toMs === undefined ? undefined : query.toMs + shift;
    const ask = (g: SeriesBatchQuery['groups'][number], laterMs = 0) => ({
      keys: g.keys,
      maxPoints: g.maxPoints,
      fromMs: from === undefined ? undefined : from + laterMs,
      toMs: to === undefined ? undefined : to + laterMs,
    });
    const forget = () => {
      for (const m of [rings, flat]) for (const ring of m.values()) ring.forgetKeptBuckets();
    };
    const fig: CoreFigures = {
      page,
      what,
      keys: query.groups.reduce((n, g) => n + g.keys.length, 0),
      rows: 0,
      points: 0,
      beforeMs: [],
      afterMs: [],
      keptMs: [],
      reviewMs: [],
      jsonMs: [],
      bytes: 0,
      wireMs: [],
      wireBytes: 0,
    };
    for (let r = 0; r < repeats; r++) {
      const [before, b] = timed(() =>
        query.groups.map((g) => answerSeriesBefore(ask(g), live.ring, typicalGapMs)),
      );
      forget();
      const [after, a] = timed(() => ({ results: query.groups.map((g) => answerSeries(ask(g), live)) }));
      // The page asked again 5 s later (a reload, a tab switched back): the inner buckets are those kept.
      const [later, k] = timed(() => query.groups.map((g) => answerSeries(ask(g, 5000), live)));
      forget();
      const [, v] = timed(() => query.groups.map((g) => answerSeries(ask(g), review)));
      const [json, j] = timed(() => JSON.stringify(after));
      const [frame, w] = timed(() =>
        encodeServerFrame({ t: 'res', id: 1, envelope: { ok: true, result: after } }),
      );
      if (r === 0) {
        // Same points before and after, or the figures compare different work.
        const series = (xs: SeriesResult[]) => JSON.stringify(xs.map((x) => [x.series, x.rawPoints]));
        if (series(before) !== series(after.results))
          throw new Error(`the ${page} ${what} request is answered differently before and after`);
        forget();
        if (series(later) !== series(query.groups.map((g) => answerSeries(ask(g, 5000), live))))
          throw new Error(`the ${page} ${what} request is answered differently from kept buckets`);
        fig.rows = after.results.reduce((n, x) => n + x.rawPoints, 0);
        fig.points = after.results.reduce((n, x) => n + x.series.reduce((m, c) => m + c.t.length, 0), 0);
        fig.bytes = json.length;
        fig.wireBytes = frame.length;
      }
      fig.beforeMs.push(b);
      fig.afterMs.push(a);
      fig.keptMs.push(k);
      fig.reviewMs.push(v);
      fig.jsonMs.push(j);
      fig.wireMs.push(w);
    }
    return fig;
  });
}

export function printCore(figs: CoreFigures[]): void {
  if (figs.length === 0) return;
  const med = (xs: number[]): string => f(pct(xs, 0.5), 1);
  console.log('');
  console.log(
    `Core per getSeriesBatch request, in-process, CPU ms (median of ${figs[0].afterMs.length}; load average ${loadavg()[0].toFixed(1)}): ` +
      'decimation before / after (live rings, nothing kept) / kept (the same window 5 s later, from the buckets ' +
      'the first answer kept), after over a recording’s flat columns (review), JSON.stringify ' +
      'of the answer (the frame before 2026-12-05) and its frame as sent now (binary runs, wire-frame.ts)',
  );
  console.log(
    `${'request'.padEnd(14)} ${'keys'.padEnd(5)} ${'rows read'.padEnd(10)} ${'points'.padEnd(7)} ${'before'.padEnd(7)} ${'after'.padEnd(7)} ${'ratio'.padEnd(6)} ${'kept'.padEnd(6)} ${'review'.padEnd(7)} ${'JSON'.padEnd(6)} ${'bytes'.padEnd(8)} ${'frame'.padEnd(6)} bytes`,
  );
  for (const x of figs)
    console.log(
      `${`${x.page} ${x.what}`.padEnd(14)} ${String(x.keys).padEnd(5)} ${String(x.rows).padEnd(10)} ${String(x.points).padEnd(7)} ${med(x.beforeMs).padEnd(7)} ${med(x.afterMs).padEnd(7)} ${f(pct(x.beforeMs, 0.5) / pct(x.afterMs, 0.5), 1).padEnd(6)} ${med(x.keptMs).padEnd(6)} ${med(x.reviewMs).padEnd(7)} ${med(x.jsonMs).padEnd(6)} ${String(x.bytes).padEnd(8)} ${med(x.wireMs).padEnd(6)} ${x.wireBytes}`,
    );
}

async function open(
  browser: Browser,
  url: string,
): Promise<{ page: Page; perf: () => Promise<PerfRecord[]>; errors: string[]; requests: SentRequest[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors: string[] = [];
  const requests: SentRequest[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('crash', () => errors.push('the page crashed'));
  // History requests as they leave on the WebSocket (the bridge's request frames).
  page.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const payload = String(f.payload);
      const m = /^\{"t":"req","id":\d+,"method":"(getSeries|getSeriesBatch)"/.exec(payload);
      if (m) requests.push({ method: m[1], payload, at: Date.now() });
    }),
  );
  await page.addInitScript(collectPerfScript);
  await goto(page, url);
  const perf = (): Promise<PerfRecord[]> =>
    page.evaluate(() => (window as unknown as { __chartPerf: PerfRecord[] }).__chartPerf);
  return { page, perf, errors, requests };
}

/**
 * Opens the app without waiting for its load event: every stage waits for what it needs (the pipeline, a chart)
 * itself. The raw live stage's page.goto failed with net::ERR_ABORTED on a loaded machine (the stage opens a
 * page right after the batched live stage's 3000 pushes; not reproduced in a quieter run), which ended the whole
 * benchmark before it printed anything: a navigation aborted before it commits is now tried once more, with a
 * line saying so, instead of losing every figure measured until then.
 */
async function goto(page: Page, url: string): Promise<void> {
  try {
    await page.goto(url, { waitUntil: 'commit', timeout: 60_000 });
  } catch (err) {
    if (!/ERR_ABORTED/.test(String(err))) throw err;
    console.log(`  navigation aborted before it committed (${String(err).split('\n')[0]}); trying once more`);
    await page.goto(url, { waitUntil: 'commit', timeout: 60_000 });
  }
}

async function waitFor(
  page: Page,
  ok: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await ok()) return;
    await page.waitForTimeout(250);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

function pct(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '—');

function print(results: ModeResult[]): void {
  const by = (m: ModeName): ModeResult | undefined => results.find((r) => r.mode === m);
  const batched = by('batched')!;
  const perChart = by('per-chart');
  const raw = by('raw');
  const med = (xs: number[], d = 0): string => f(pct(xs, 0.5), d);
  console.log('');
  console.log('Dashboard charts, 24 h of 1 s history (86,400 points per series), 1440×900, Chromium; ms');
  for (const { name } of PAGES) {
    const b = batched.pages[name];
    if (!b) continue;
    const pc = perChart?.pages[name];
    console.log('');
    console.log(
      `${name} page: history requests per page load ${b.loadRequests.join(', ')} batched / ${pc?.loadRequests.join(', ') ?? '—'} per chart; ` +
        `per zoom ${b.zoomRequests.join(', ')} / ${pc?.zoomRequests.join(', ') ?? '—'}`,
    );
    console.log(
      `figures are batched / per chart (each chart its own request); first paint and zoom: median of ${b.loadRequests.length} loads`,
    );
    console.log(
      `${'chart'.padEnd(22)} ${'points'.padEnd(7)} ${'first paint'.padEnd(13)} ${'of it fetch'.padEnd(13)} ${'zoom redraw'.padEnd(13)} ${'zoom refined'.padEnd(13)}`,
    );
    for (const [c, x] of Object.entries(b.charts)) {
      const y = pc?.charts[c];
      const two = (pick: (v: ChartFigures) => string): string => `${pick(x)} / ${y ? pick(y) : '—'}`;
      console.log(
        `${c.padEnd(22)} ${String(x.points).padEnd(7)} ${two((v) => med(v.firstPaintMs)).padEnd(13)} ${two((v) => med(v.firstFetchMs)).padEnd(13)} ${two((v) => med(v.zoomMs, 1)).padEnd(13)} ${two((v) => med(v.zoomRefinedMs)).padEnd(13)}`,
      );
    }
    for (const m of [batched, perChart]) {
      const p = m?.pages[name];
      if (!m || !p) continue;
      const cs = Object.values(p.charts);
      // The page's first paint is that of its charts on screen; the others are drawn after them, when idle.
      const drawn = cs.filter((c) => c.firstPaintMs.length > 0 && !c.outOfSight);
      const worstPaint = Math.max(...drawn.map((c) => pct(c.firstPaintMs, 0.5)));
      // Per load, the page is drawn when its last chart is: the worst chart of each load, then their spread.
      const loads = p.loadRequests.map((_, i) => Math.max(...drawn.map((c) => c.firstPaintMs[i] ?? -1)));
      const worstRefined = Math.max(...cs.map((c) => pct(c.zoomRefinedMs, 0.5)));
      // Charts out of sight take the zoom's data without drawing: only those on screen redraw.
      const worstRedraw = Math.max(...cs.filter((c) => c.zoomMs.length).map((c) => pct(c.zoomMs, 0.5)));
      console.log(
        `${m.mode.padEnd(10)} ${name}: first paint ≤ ${GOALS.firstPaintMs} ms: worst chart median ${f(worstPaint, 0)} ms, ` +
          `last chart per load ${loads.map((x) => f(x, 0)).join(', ')} ms ` +
          `(${loads.every((x) => x <= GOALS.firstPaintMs) ? 'met' : 'missed'}); ` +
          `charts on screen / out of sight per load ${p.inSight.map((n, i) => `${n}/${p.outOfSight[i]}`).join(', ')}; ` +
          `tab pressed → last chart on screen drawn ${p.pressFirstPaintMs.map((x) => f(x, 0)).join(', ')} ms, ` +
          `→ the frame that shows it ${p.pressFrameMs.map((x) => f(x, 0)).join(', ')} ms ` +
          `(from Playwright's click call ${p.pageFirstPaintMs.map((x) => f(x, 0)).join(', ')}); ` +
          `→ last chart out of sight drawn (idle) ${p.laterPaintMs.map((x) => f(x, 0)).join(', ')} ms; ` +
          `zoom ≤ ${GOALS.zoomMs} ms: worst median redraw ` +
          `${f(worstRedraw, 1)} ms, refined ${f(worstRefined, 0)} ms (${worstRefined <= GOALS.zoomMs ? 'met' : 'missed'})`,
      );
      // Wall times above wait for the core and for the other jobs on this machine; this is the page's own work.
      const cpu = (xs: MainThread[]): string =>
        `task ${med(xs.map((x) => x.task))} (script ${med(xs.map((x) => x.script))}, layout ${med(xs.map((x) => x.layout))}, style ${med(xs.map((x) => x.style))})`;
      console.log(
        `${''.padEnd(10)} ${name}: page main thread, median ms: load ${cpu(p.loadCpu)}; zoom ${cpu(p.zoomCpu)}`,
      );
    }
  }
  const kv = (m: ModeResult | undefined) => m?.pages.KV?.charts ?? {};
  console.log('');
  console.log(
    'KV page, live updates and no decimation: figures are decimated (batched) / raw (no decimation)',
  );
  console.log(
    `${'chart'.padEnd(22)} ${'points drawn'.padEnd(16)} ${'first paint'.padEnd(13)} ${'live p50'.padEnd(13)} ${'live p95'.padEnd(13)} ${'demo live p50'.padEnd(14)} ${'zoom refined'.padEnd(13)}`,
  );
  for (const [c, x] of Object.entries(kv(batched))) {
    const y = kv(raw)[c];
    const two = (pick: (v: ChartFigures) => string): string => `${pick(x)} / ${y ? pick(y) : '—'}`;
    console.log(
      `${c.padEnd(22)} ${two((v) => String(v.points)).padEnd(16)} ${two((v) => med(v.firstPaintMs)).padEnd(13)} ${two((v) => med(v.liveMs, 2)).padEnd(13)} ${two((v) => f(pct(v.liveMs, 0.95), 2)).padEnd(13)} ${two((v) => med(v.realLiveMs, 2)).padEnd(14)} ${two((v) => med(v.zoomRefinedMs)).padEnd(13)}`,
    );
  }
  for (const m of results) {
    if (!m.heapMiB.length) continue;
    console.log(
      `${m.mode.padEnd(10)} JS heap after GC, every ${m.heapSampleEvery} of ${m.pushes} live updates: ${m.heapMiB.map((x) => f(x, 1)).join(' → ')} MiB`,
    );
  }
  const live = Object.values(kv(batched)).filter((c) => c.liveMs.length > 0);
  console.log(
    `goal (batched): live update ≤ ${GOALS.liveMs} ms: worst p95 ${f(Math.max(...live.map((c) => pct(c.liveMs, 0.95))), 2)} ms`,
  );
}

const isMain = process.argv[1] !== undefined && /bench[\\/]dashboard\.ts$/.test(process.argv[1]);
if (isMain) {
  // `--pushes N --raw-pushes N --zooms N`: a shorter run (the live stretch is most of the time).
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  runDashboardBench({ pushes: arg('pushes'), rawPushes: arg('raw-pushes'), zooms: arg('zooms') }).catch(
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
