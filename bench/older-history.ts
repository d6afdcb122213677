// Older history on a page load (Chromium against the built app, demo host, no Prometheus): the demo's live
// store is minutes old and the Metrics page shows a longer range, so every chart's window reaches past it and
// its history comes through getHistory(Batch) — live rows plus what Prometheus or older recordings hold. Per
// page load it prints the time from the tab click to the last chart on screen (its canvas in the viewport) drawn
// with that history, to every chart drawn (those out of sight too, drawn once the page is idle), and the history
// requests sent; the page batch (the product's path) beside the
// per-chart path (`&batch=0`), alternating in one run. Needs `npm run build` and Chromium (/usr/bin/chromium
// or PD_CHROMIUM). Run: npm run bench -- older-history (BENCH_OLDER_LOADS, default 5 per path).
import type { Page } from '@playwright/test';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp } from '../e2e/support/web-app';
import { chartsOnScreen, collectPerfScript } from '../e2e/support/chart-perf';

const LOADS = Number(process.env.BENCH_OLDER_LOADS ?? 5);
const CHARTS = 19;

interface Load {
  onScreenMs: number;
  everyChartMs: number;
  requests: Record<string, number>;
}

type Measure = { chart: string; kind: string; end: number };
const measures = (page: Page): Promise<Measure[]> =>
  page.evaluate(() => (window as unknown as { __chartPerf: Measure[] }).__chartPerf);

async function oneLoad(page: Page, sent: string[]): Promise<Load> {
  await page.evaluate(() => ((window as unknown as { __chartPerf: unknown[] }).__chartPerf.length = 0));
  sent.length = 0;
  const clickAt = await page.evaluate(() => performance.now());
  await page.getByTestId('nav-metrics').click();
  // Every chart has its history ('fetch': the answer applied, drawn if on screen), then a second with no more
  // answers (live updates go on meanwhile).
  await page.waitForFunction(
    (n) => {
      const l = (window as unknown as { __chartPerf: Measure[] }).__chartPerf;
      return new Set(l.filter((r) => r.kind === 'fetch').map((r) => r.chart)).size >= n;
    },
    CHARTS,
    { timeout: 60_000 },
  );
  let seen = -1;
  for (;;) {
    const n = (await measures(page)).filter((r) => r.kind === 'fetch').length;
    if (n === seen) break;
    seen = n;
    await page.waitForTimeout(1000);
  }
  const all = await measures(page);
  const fetched = all.filter((r) => r.kind === 'fetch');
  // On screen: the charts whose canvas is in the viewport (the third row's sit just below it at 1440×900, and
  // are drawn once the page is idle, as those further down). Each is timed to its first draw with its history
  // (its 'fetch' when it has none to draw: a chart that says why it has no data).
  const visible = await chartsOnScreen(page);
  const drawnAt = (chart: string): number =>
    (all.find((r) => r.chart === chart && r.kind === 'first-paint') ?? fetched.find((r) => r.chart === chart))
      ?.end ?? NaN;
  const onScreen = visible.map((chart) => ({ chart, end: drawnAt(chart) }));
  const requests: Record<string, number> = {};
  for (const m of sent) requests[m] = (requests[m] ?? 0) + 1;
  await page.getByTestId('nav-overview').click();
  await page.waitForTimeout(1500);
  return {
    onScreenMs: Math.max(...onScreen.map((r) => r.end)) - clickAt,
    everyChartMs: Math.max(...fetched.map((r) => drawnAt(r.chart))) - clickAt,
    requests,
  };
}

export async function runOlderHistoryBench(): Promise<void> {
  const app = await startWebApp(['--demo', '--no-open']);
  const browser = await launchChromium();
  try {
    const paths = { batched: '', 'per-chart': '&batch=0' } as const;
    const pages = new Map<string, { page: Page; sent: string[] }>();
    for (const [name, query] of Object.entries(paths)) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.addInitScript(collectPerfScript);
      const sent: string[] = [];
      page.on('websocket', (ws) =>
        ws.on('framesent', (f) => {
          const frame = JSON.parse(String(f.payload)) as { t?: string; method?: string };
          if (frame.t === 'req' && /^get(Series|History)/.test(frame.method ?? '')) sent.push(frame.method!);
        }),
      );
      await page.goto(`${app.url}${query}#/overview`);
      await page.getByTestId('pipeline').waitFor({ timeout: 30_000 });
      await page.waitForTimeout(3000);
      pages.set(name, { page, sent });
    }
    const loads: Record<string, Load[]> = { batched: [], 'per-chart': [] };
    for (let i = 0; i < LOADS; i++)
      for (const [name, { page, sent }] of pages) loads[name].push(await oneLoad(page, sent));
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(
      `Metrics page, demo host (live store minutes old, no Prometheus), ${LOADS} loads per path, alternating; ms`,
    );
    for (const [name, ls] of Object.entries(loads)) {
      console.log(
        `${name.padEnd(10)} click → last chart on screen with its history: ${ls.map((l) => l.onScreenMs.toFixed(0)).join(', ')} ` +
          `(median ${med(ls.map((l) => l.onScreenMs)).toFixed(0)}); → every chart: median ${med(ls.map((l) => l.everyChartMs)).toFixed(0)}; ` +
          `requests per load: ${Object.entries(ls[ls.length - 1].requests)
            .map(([m, n]) => `${m} ×${n}`)
            .join(', ')}`,
      );
    }
    const ratio =
      med(loads['per-chart'].map((l) => l.onScreenMs)) / med(loads.batched.map((l) => l.onScreenMs));
    console.log(`per-chart / batched, last chart on screen: ×${ratio.toFixed(2)}`);
  } finally {
    await browser.close();
    await app.stop();
  }
}

const isMain = process.argv[1] !== undefined && /bench[\\/]older-history\.ts$/.test(process.argv[1]);
if (isMain)
  void runOlderHistoryBench().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(err);
      process.exit(1);
    },
  );
