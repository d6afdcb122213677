// Dashboard chart benchmark in real Chromium against the real renderer and core (browser mode, demo host):
// 24 h of 1 s history per series (filled into the signal store at start through the benchmark-only
// PD_CONSOLE_BENCH_HISTORY_HOURS switch), then, per chart of the KV page:
//   first paint   mount → first drawn frame with data (includes fetching history over the WebSocket)
//   live update   one pushed point + chart.update('none'), measured in the page
//   zoom          drag-zoom → window fetched again and redrawn
//   memory        JS heap after GC over a stretch of live updates (CDP Runtime.getHeapUsage)
// The same charts are measured WITHOUT decimation (`?decimate=0`: every stored point fetched and drawn)
// in the same run, side by side. Run: npx tsx --tsconfig tsconfig.node.json bench/dashboard.ts
// (needs `npm run build` first, and Chromium: /usr/bin/chromium or PD_CHROMIUM).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp } from '../e2e/support/web-app';

interface PerfRecord {
  chart: string;
  kind: 'first-paint' | 'fetch' | 'live-update' | 'zoom';
  ms: number;
  points: number;
}

export interface ModeResult {
  mode: 'decimated' | 'raw';
  charts: Record<
    string,
    { firstPaintMs: number; points: number; liveMs: number[]; zoomMs: number[]; zoomPoints: number }
  >;
  heapMiB: number[];
  heapSampleEveryS: number;
}

const CHARTS = ['kv-pct-prefill', 'kv-tokens-prefill', 'kv-pct-decode', 'kv-tokens-decode'];
const GOALS = { firstPaintMs: 100, liveMs: 8, zoomMs: 50 };

export async function runDashboardBench(
  opts: { liveSeconds?: number; rawLiveSeconds?: number; zooms?: number } = {},
): Promise<ModeResult[]> {
  const root = join(__dirname, '..');
  if (!existsSync(join(root, 'out', 'main', 'web.js')))
    throw new Error('no built app in out/: run `npm run build` first');
  process.env.PD_CONSOLE_BENCH_HISTORY_HOURS = '24';
  const app = await startWebApp(['--demo', '--no-open']);
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const results: ModeResult[] = [];
    // Let the demo open and the 24 h fill land before the first page loads.
    await new Promise((r) => setTimeout(r, 3000));
    results.push(await measure(browser, app.url, 'decimated', opts.liveSeconds ?? 90, opts.zooms ?? 3));
    results.push(await measure(browser, app.url, 'raw', opts.rawLiveSeconds ?? 30, opts.zooms ?? 3));
    print(results);
    return results;
  } finally {
    await browser?.close();
    await app.stop();
  }
}

async function measure(
  browser: Browser,
  url: string,
  mode: ModeResult['mode'],
  liveSeconds: number,
  zooms: number,
): Promise<ModeResult> {
  const raw = mode === 'raw' ? '&decimate=0' : '';
  const charts: ModeResult['charts'] = {};
  for (const c of CHARTS) charts[c] = { firstPaintMs: NaN, points: 0, liveMs: [], zoomMs: [], zoomPoints: 0 };

  // A: history and zoom alone (live appends off), so the raw charts are timed without contention.
  {
    const { page, perf, errors } = await open(browser, `${url}&range=24h&live=0${raw}#/kv`);
    await waitFor(
      page,
      async () => {
        const p = await perf();
        return CHARTS.every((c) => p.some((r) => r.chart === c && r.kind === 'first-paint'));
      },
      300_000,
      `first paint of ${CHARTS.join(', ')} (${mode})`,
    );
    for (const r of await perf())
      if (r.kind === 'first-paint') Object.assign(charts[r.chart], { firstPaintMs: r.ms, points: r.points });
    // Zooms: drag across a fifth of the decode chart; every chart of the page follows the window.
    for (let z = 0; z < zooms; z++) {
      await page.evaluate(() => ((window as unknown as { __pdcPerf: PerfRecord[] }).__pdcPerf.length = 0));
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
          return CHARTS.every((c) => p.some((r) => r.chart === c && r.kind === 'zoom'));
        },
        120_000,
        `zoom ${z + 1} (${mode})`,
      );
      for (const r of await perf())
        if (r.kind === 'zoom') {
          charts[r.chart].zoomMs.push(r.ms);
          charts[r.chart].zoomPoints = r.points;
        }
      await page.getByTestId('back-to-live').click();
      await waitFor(
        page,
        async () => (await perf()).filter((r) => r.kind === 'fetch').length >= 2 * CHARTS.length,
        120_000,
        'back to live',
      );
    }
    if (errors.length) throw new Error(`page errors during the ${mode} run: ${errors.join('; ')}`);
    await page.close();
  }

  // B: live updates on the 24 h window, and the JS heap after GC along the way.
  const heapMiB: number[] = [];
  const every = 15;
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
        return CHARTS.every((c) => p.some((r) => r.chart === c && r.kind === 'live-update'));
      },
      300_000,
      `a live update on every chart (${mode})`,
    );
    heapMiB.push(await heap());
    for (let s = every; s <= liveSeconds; s += every) {
      await page.waitForTimeout(every * 1000);
      heapMiB.push(await heap());
    }
    for (const r of await perf()) if (r.kind === 'live-update') charts[r.chart].liveMs.push(r.ms);
    if (errors.length) throw new Error(`page errors during the ${mode} run: ${errors.join('; ')}`);
    await page.close();
  }
  return { mode, charts, heapMiB, heapSampleEveryS: every };
}

async function open(
  browser: Browser,
  url: string,
): Promise<{ page: Page; perf: () => Promise<PerfRecord[]>; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('crash', () => errors.push('the page crashed'));
  await page.goto(url);
  const perf = (): Promise<PerfRecord[]> =>
    page.evaluate(() => (window as unknown as { __pdcPerf?: PerfRecord[] }).__pdcPerf ?? []);
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
  console.log('');
  console.log(
    'Dashboard charts, 24 h of 1 s history (86,400 points per series), KV page at 1440×900, Chromium',
  );
  console.log(
    'chart                points drawn (dec / raw)   first paint ms (dec / raw)   live update ms p50, p95 (dec / raw)      zoom ms median (dec / raw), points',
  );
  for (const c of CHARTS) {
    const d = dec.charts[c];
    const r = raw.charts[c];
    console.log(
      `${c.padEnd(20)} ${`${d.points} / ${r.points}`.padEnd(26)} ${`${f(d.firstPaintMs, 0)} / ${f(r.firstPaintMs, 0)}`.padEnd(28)} ${`${f(pct(d.liveMs, 0.5), 2)}, ${f(pct(d.liveMs, 0.95), 2)} / ${f(pct(r.liveMs, 0.5), 2)}, ${f(pct(r.liveMs, 0.95), 2)}`.padEnd(40)} ${f(pct(d.zoomMs, 0.5), 0)} / ${f(pct(r.zoomMs, 0.5), 0)}  (${d.zoomPoints} / ${r.zoomPoints})`,
    );
  }
  for (const m of results) {
    const h = m.heapMiB;
    console.log(
      `${m.mode.padEnd(10)} JS heap after GC every ${m.heapSampleEveryS} s of live updates: ${h.map((x) => f(x, 1)).join(' → ')} MiB (change ${f(h[h.length - 1] - h[0], 1)} MiB over ${(h.length - 1) * m.heapSampleEveryS} s)`,
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
      `zoom ≤ ${GOALS.zoomMs} ms: worst median ${f(
        worst(dec, (c) => pct(c.zoomMs, 0.5)),
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
