// Dashboard chart benchmark in real Chromium against the real renderer and core (browser mode, demo host):
// 24 h of 1 s history per series (filled into the signal store at start by the benchmarks' own composition,
// bench/support/bench-web.ts), then, per chart of the KV page on the 24 h range:
//   first paint   KV page opened in a booted app → first frame drawn with data (includes fetching history)
//   zoom          drag-zoom → every chart redrawn on the new window, then refined with that window's data
//   live update   one pushed point + chart.update('none'), timed in the page: the demo's own updates, then
//                 thousands of `signals` events pushed by the backend over the same WebSocket
//   memory        JS heap after GC along those updates (CDP HeapProfiler.collectGarbage, Runtime.getHeapUsage)
// The same charts are measured WITHOUT decimation (`?decimate=0`: every stored point fetched and drawn)
// in the same run, side by side. Run: npx tsx --tsconfig tsconfig.node.json bench/dashboard.ts
// (needs `npm run build` first, and Chromium: /usr/bin/chromium or PD_CHROMIUM).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp, type WebApp } from '../e2e/support/web-app';
import { BENCH_WEB_ENTRY, BENCH_WEB_ENV, collectPerfScript, pushSignals } from './support/bench-client';

interface PerfRecord {
  chart: string;
  kind: 'first-paint' | 'fetch' | 'live-update' | 'zoom' | 'zoom-refined';
  ms: number;
  points: number;
}

export interface ModeResult {
  mode: 'decimated' | 'raw';
  charts: Record<
    string,
    {
      firstPaintMs: number;
      /** Of which: the history request's round trip (core decimation, JSON, WebSocket). */
      firstFetchMs: number;
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
  >;
  heapMiB: number[];
  heapSampleEvery: number;
  pushes: number;
}

const CHARTS = ['kv-pct-prefill', 'kv-tokens-prefill', 'kv-pct-decode', 'kv-tokens-decode'];
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
    results.push(await measure(browser, app, 'decimated', opts.pushes ?? 3000, opts.zooms ?? 3));
    results.push(await measure(browser, app, 'raw', opts.rawPushes ?? 300, opts.zooms ?? 3));
    print(results);
    return results;
  } finally {
    await browser?.close();
    await app.stop();
  }
}

async function measure(
  browser: Browser,
  app: WebApp,
  mode: ModeResult['mode'],
  pushes: number,
  zooms: number,
): Promise<ModeResult> {
  const raw = mode === 'raw' ? '&decimate=0' : '';
  const charts: ModeResult['charts'] = {};
  for (const c of CHARTS)
    charts[c] = {
      firstPaintMs: NaN,
      firstFetchMs: NaN,
      points: 0,
      liveMs: [],
      realLiveMs: [],
      zoomMs: [],
      zoomRefinedMs: [],
      zoomPoints: 0,
    };
  const url = app.url;
  const clear = (page: Page) =>
    page.evaluate(() => ((window as unknown as { __benchPerf: PerfRecord[] }).__benchPerf.length = 0));

  console.log(`[${mode}] first paint and zoom…`);
  // A: the app booted on the overview, then the KV page opened on 24 h (live appends off, so the raw
  // charts are timed without their own live updates competing).
  {
    const { page, perf, errors } = await open(browser, `${url}&range=24h&live=0${raw}#/overview`);
    await page.getByTestId('pipeline').waitFor({ timeout: 60_000 });
    await page.waitForTimeout(2000);
    await clear(page);
    await page.getByTestId('nav-kv').click();
    await waitFor(
      page,
      async () => {
        const p = await perf();
        return CHARTS.every((c) => p.some((r) => r.chart === c && r.kind === 'first-paint'));
      },
      300_000,
      `first paint of ${CHARTS.join(', ')} (${mode})`,
    );
    for (const r of await perf()) {
      if (r.kind === 'first-paint') Object.assign(charts[r.chart], { firstPaintMs: r.ms, points: r.points });
      if (r.kind === 'fetch' && Number.isNaN(charts[r.chart].firstFetchMs))
        charts[r.chart].firstFetchMs = r.ms;
    }
    // Zooms: drag across a fifth of the decode chart; every chart of the page follows the window.
    for (let z = 0; z < zooms; z++) {
      await clear(page);
      const box = (await page.getByTestId('canvas-kv-pct-decode').boundingBox())!;
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width * (0.3 + z * 0.05), y);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * (0.5 + z * 0.05), y, { steps: 4 });
      await page.mouse.up();
      await waitFor(
        page,
        async () => {
          const p = await perf();
          return CHARTS.every((c) => p.some((r) => r.chart === c && r.kind === 'zoom-refined'));
        },
        120_000,
        `zoom ${z + 1} (${mode})`,
      );
      for (const r of await perf()) {
        if (r.kind === 'zoom') charts[r.chart].zoomMs.push(r.ms);
        if (r.kind === 'zoom-refined') {
          charts[r.chart].zoomRefinedMs.push(r.ms);
          charts[r.chart].zoomPoints = r.points;
        }
      }
      await clear(page);
      await page.getByTestId('back-to-live').click();
      await waitFor(
        page,
        async () => (await perf()).filter((r) => r.kind === 'fetch').length >= CHARTS.length,
        120_000,
        'back to live',
      );
    }
    if (errors.length) throw new Error(`page errors during the ${mode} run: ${errors.join('; ')}`);
    await page.close();
  }

  console.log(
    `[${mode}] live updates: real for 20 s, then ${pushes} through the same path, heap along the way…`,
  );
  // B: live updates on the 24 h window. First the demo's own (one per second), then many more pushed
  // by the backend over the same WebSocket, so "memory over many updates" takes seconds, not hours.
  const heapMiB: number[] = [];
  const every = Math.max(1, Math.floor(pushes / 6));
  {
    const { page, perf, errors } = await open(browser, `${url}&range=24h${raw}#/kv`);
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
        return CHARTS.every((c) => p.some((r) => r.chart === c && r.kind === 'first-paint'));
      },
      300_000,
      `first paint (${mode}, live)`,
    );
    await clear(page);
    await page.waitForTimeout(20_000);
    for (const r of await perf()) if (r.kind === 'live-update') charts[r.chart].realLiveMs.push(r.ms);
    await clear(page);
    heapMiB.push(await heap());
    const t0 = Date.now() + 60_000;
    for (let done = 0; done < pushes; done += every) {
      const n = Math.min(every, pushes - done);
      await pushSignals(app, n, t0 + done * 1000);
      await waitFor(
        page,
        async () => (await perf()).filter((r) => r.kind === 'live-update').length >= n * CHARTS.length,
        120_000,
        `${n} pushed updates drawn (${mode})`,
      );
      // Take the timings out of the page before measuring the heap: they are the benchmark's, not the app's.
      for (const r of await perf()) if (r.kind === 'live-update') charts[r.chart].liveMs.push(r.ms);
      await clear(page);
      heapMiB.push(await heap());
    }
    if (errors.length) throw new Error(`page errors during the ${mode} run: ${errors.join('; ')}`);
    await page.close();
  }
  return { mode, charts, heapMiB, heapSampleEvery: every, pushes };
}

async function open(
  browser: Browser,
  url: string,
): Promise<{ page: Page; perf: () => Promise<PerfRecord[]>; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('crash', () => errors.push('the page crashed'));
  await page.addInitScript(collectPerfScript);
  await page.goto(url);
  const perf = (): Promise<PerfRecord[]> =>
    page.evaluate(() => (window as unknown as { __benchPerf: PerfRecord[] }).__benchPerf);
  return { page, perf, errors };
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
  const [dec, raw] = results;
  const both = (pick: (m: ModeResult) => string): string => `${pick(dec)} / ${pick(raw)}`;
  console.log('');
  console.log(
    'Dashboard charts, 24 h of 1 s history (86,400 points per series), KV page at 1440×900, Chromium',
  );
  console.log('figures are decimated / raw (no decimation); ms');
  console.log(
    `${'chart'.padEnd(18)} ${'points drawn'.padEnd(16)} ${'first paint'.padEnd(13)} ${'of it fetch'.padEnd(13)} ${'live p50'.padEnd(13)} ${'live p95'.padEnd(13)} ${'demo live p50'.padEnd(14)} ${'zoom redraw'.padEnd(13)} ${'zoom refined'.padEnd(13)} refined points`,
  );
  for (const c of CHARTS) {
    const row = (pick: (x: ModeResult['charts'][string]) => string) => both((m) => pick(m.charts[c]));
    console.log(
      `${c.padEnd(18)} ${row((x) => String(x.points)).padEnd(16)} ${row((x) => f(x.firstPaintMs, 0)).padEnd(13)} ${row((x) => f(x.firstFetchMs, 0)).padEnd(13)} ${row((x) => f(pct(x.liveMs, 0.5), 2)).padEnd(13)} ${row((x) => f(pct(x.liveMs, 0.95), 2)).padEnd(13)} ${row((x) => f(pct(x.realLiveMs, 0.5), 2)).padEnd(14)} ${row((x) => f(pct(x.zoomMs, 0.5), 1)).padEnd(13)} ${row((x) => f(pct(x.zoomRefinedMs, 0.5), 0)).padEnd(13)} ${row((x) => String(x.zoomPoints))}`,
    );
  }
  for (const m of results) {
    const h = m.heapMiB;
    console.log(
      `${m.mode.padEnd(10)} JS heap after GC, every ${m.heapSampleEvery} of ${m.pushes} live updates: ${h.map((x) => f(x, 1)).join(' → ')} MiB`,
    );
  }
  const worst = (m: ModeResult, pick: (c: ModeResult['charts'][string]) => number): number =>
    Math.max(...CHARTS.map((c) => pick(m.charts[c])));
  console.log(
    `goals (decimated): first paint ≤ ${GOALS.firstPaintMs} ms: worst ${f(
      worst(dec, (c) => c.firstPaintMs),
      0,
    )} ms; ` +
      `live update ≤ ${GOALS.liveMs} ms: worst p95 ${f(
        worst(dec, (c) => pct(c.liveMs, 0.95)),
        2,
      )} ms; ` +
      `zoom ≤ ${GOALS.zoomMs} ms: worst median redraw ${f(
        worst(dec, (c) => pct(c.zoomMs, 0.5)),
        1,
      )} ms, refined with fetched data ${f(
        worst(dec, (c) => pct(c.zoomRefinedMs, 0.5)),
        0,
      )} ms`,
  );
}

const isMain = process.argv[1] !== undefined && /bench[\\/]dashboard\.ts$/.test(process.argv[1]);
if (isMain) {
  runDashboardBench().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
