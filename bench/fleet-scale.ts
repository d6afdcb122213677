// Scale of one fleet deployment (issue 15 "Scale"): 32 workers on 8 hosts (8 prefill, 24 decode) at 1 Hz,
// with a one-host 1P1D deployment measured the same way beside it. First the core (fleet-core.ts: its CPU per
// second, through tsx in this process and bundled as shipped in a child, and the SSH channels per host), then,
// in real Chromium (browser mode, bench/support/fleet-web.ts, needs `npm run build`):
//   KV page             time per live update per chart (the charts' own "pdc:<chart>:live-update" measures),
//                       beside a second page open at the same time with Chart.js's legend on the canvas
//                       (`?legend=canvas`, the path before the HTML legend) and the ratio of their medians;
//                       one-series charts (no legend either way) are the control for the noise of that ratio
//   overview            renderer main-thread time per observation (CDP Performance.getMetrics TaskDuration
//                       over the window, divided by the observations that arrived): the overview draws no
//                       charts, so its figure is for the whole page
// The machine is shared: CPU time and counts are what to compare, wall-clock page timings are inflated by load.
//   npm run bench -- fleet-scale      (BENCH_FLEET_MS=60000 the window; BENCH_FLEET_BROWSER=0 skips Chromium,
//                                      BENCH_FLEET_CORE=0 the core figures; BENCH_FLEET_MODE=tsx|bundled|both
//                                      how the core runs; BENCH_FLEET_PROFILE=file a .cpuprofile and
//                                      BENCH_FLEET_HEAP_PROFILE=file a .heapprofile of the fleet's core (the
//                                      bundled one when both run); BENCH_FLEET_RENDERER_PROFILE=file a
//                                      .cpuprofile of the fleet KV page over its window, BENCH_FLEET_RENDERER_TRACE=
//                                      file a Chromium trace of it: style, layout, scripts)
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, CDPSession, Page } from '@playwright/test';
import type { FleetShape } from '../src/main/demo/topology';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp } from '../e2e/support/web-app';
import { collectPerfScript } from '../e2e/support/chart-perf';
import { remoteFleet, runFleetCore, SCALE } from './fleet-core';

/** A .cpuprofile of the fleet's KV page over its measured window (BENCH_FLEET_RENDERER_PROFILE=file). */
const RENDERER_PROFILE_TO = process.env.BENCH_FLEET_RENDERER_PROFILE;
/** A Chromium trace (style, layout, paint, scripts) of the fleet's KV page over its window. */
const RENDERER_TRACE_TO = process.env.BENCH_FLEET_RENDERER_TRACE;

const BROWSER_MS = Number(process.env.BENCH_FLEET_BROWSER_MS ?? 30_000);
const SINGLE: FleetShape = { hosts: 1, prefill: 1, decode: 1 };
const GOALS = { liveMs: 8 };
const root = join(__dirname, '..');

export interface PageFigures {
  /** Live-update ms per chart of the KV page (only charts on screen draw). */
  kvLiveMs: Record<string, number[]>;
  /**
   * The same updates split by their place in a push: the first chart drawn after a push, and the others. The
   * first pays for whatever the page left to restyle and lay out since the last frame (its canvas's font is
   * resolved against the page's style), so a gap between the two is the page's work, not the chart's.
   */
  kvLiveFirstMs: number[];
  kvLiveRestMs: number[];
  /** KV page: renderer main-thread ms per observation (CDP TaskDuration), the whole page's cost of a second. */
  kvMsPerUpdate: number;
  /**
   * The same charts in a second page open over the same window, with the legend drawn on the canvas by
   * Chart.js (`?legend=canvas`, as before the HTML legend): both see the same pushes and the same load.
   */
  kvLiveCanvasLegendMs: Record<string, number[]>;
  /** Overview: renderer main-thread ms per observation, and how many observations the window had. */
  overviewMsPerUpdate: number;
  overviewUpdates: number;
}

interface PerfRecord {
  chart: string;
  kind: string;
  ms: number;
  end: number;
}

/** Live updates split into the first of each push (records ending within 100 ms of each other) and the rest. */
function byPlaceInPush(records: PerfRecord[]): { first: number[]; rest: number[] } {
  const live = records.filter((r) => r.kind === 'live-update').sort((a, b) => a.end - b.end);
  const first: number[] = [];
  const rest: number[] = [];
  let last = -Infinity;
  for (const r of live) {
    (r.end - r.ms - last > 100 ? first : rest).push(r.ms);
    last = r.end;
  }
  return { first, rest };
}

/** Opens a page that collects the charts' measures and counts the observation events reaching it. */
async function openPage(browser: Browser, url: string): Promise<{ page: Page; observations: () => number }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  let n = 0;
  page.on('websocket', (ws) =>
    ws.on('framereceived', (fr) => {
      if (String(fr.payload).startsWith('{"t":"evt","event":"observation"')) n++;
    }),
  );
  await page.addInitScript(collectPerfScript);
  await page.goto(url);
  return { page, observations: () => n };
}

/** The page's main-thread time so far (CDP Performance.getMetrics TaskDuration), ms. */
async function taskMsOf(cdp: CDPSession): Promise<number> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
}

async function measurePages(shape: FleetShape): Promise<PageFigures> {
  const fleet = await remoteFleet(shape);
  const app = await startWebApp(
    ['--host', fleet.ready.entry],
    { TSX_TSCONFIG_PATH: join(root, 'tsconfig.node.json'), PD_CONSOLE_SSH_HOME: fleet.ready.home },
    ['--import', 'tsx', join(__dirname, 'support', 'fleet-web.ts')],
  );
  let browser: Browser | undefined;
  try {
    const until = Date.now() + 180_000;
    while (!app.output().includes('fleet connected')) {
      if (Date.now() > until) throw new Error(`the fleet did not open within 180 s:\n${app.output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    browser = await launchChromium();
    // KV page: the charts' own live-update measures over the window, beside the same page with the legend on
    // the canvas (the path before), open at the same time.
    const before = new URL(app.url);
    before.searchParams.set('legend', 'canvas');
    before.hash = '/kv';
    const [{ page: kv, observations: kvObservations }, { page: kvBefore }] = await Promise.all([
      openPage(browser, `${app.url}#/kv`),
      openPage(browser, before.toString()),
    ]);
    for (const pg of [kv, kvBefore]) {
      await pg.getByTestId('page-kv').waitFor({ timeout: 120_000 });
      await pg
        .locator('section[data-testid^="chart-"][data-state="ready"]')
        .first()
        .waitFor({ timeout: 120_000 });
    }
    await kv.waitForTimeout(5000);
    const clear = (pg: Page): Promise<unknown> =>
      pg.evaluate(() => ((window as unknown as { __chartPerf: unknown[] }).__chartPerf.length = 0));
    await Promise.all([clear(kv), clear(kvBefore)]);
    const profiler = RENDERER_PROFILE_TO && shape.hosts > 1 ? await kv.context().newCDPSession(kv) : null;
    if (profiler) {
      await profiler.send('Profiler.enable');
      await profiler.send('Profiler.start');
    }
    const tracing = RENDERER_TRACE_TO && shape.hosts > 1;
    if (tracing)
      await browser.startTracing(kv, {
        path: RENDERER_TRACE_TO,
        categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'],
      });
    const kvCdp = await kv.context().newCDPSession(kv);
    await kvCdp.send('Performance.enable');
    const kvTask0 = await taskMsOf(kvCdp);
    const kvObs0 = kvObservations();
    await kv.waitForTimeout(BROWSER_MS);
    const kvMsPerUpdate = ((await taskMsOf(kvCdp)) - kvTask0) / Math.max(1, kvObservations() - kvObs0);
    if (tracing) {
      await browser.stopTracing();
      process.stdout.write(`renderer trace of the fleet KV page: ${RENDERER_TRACE_TO}\n`);
    }
    if (profiler) {
      const { profile } = await profiler.send('Profiler.stop');
      writeFileSync(RENDERER_PROFILE_TO!, JSON.stringify(profile));
      process.stdout.write(`renderer profile of the fleet KV page: ${RENDERER_PROFILE_TO}\n`);
    }
    const recordsOf = (pg: Page): Promise<PerfRecord[]> =>
      pg.evaluate(() => (window as unknown as { __chartPerf: PerfRecord[] }).__chartPerf);
    const liveOf = (records: PerfRecord[]): Record<string, number[]> => {
      const ms: Record<string, number[]> = {};
      for (const r of records) if (r.kind === 'live-update') (ms[r.chart] ??= []).push(r.ms);
      return ms;
    };
    const kvRecords = await recordsOf(kv);
    const [kvLiveMs, kvLiveCanvasLegendMs] = [liveOf(kvRecords), liveOf(await recordsOf(kvBefore))];
    const { first: kvLiveFirstMs, rest: kvLiveRestMs } = byPlaceInPush(kvRecords);
    await kvBefore.close();
    await kv.close();
    // Overview: no charts; the page's main-thread time per observation that reached it.
    const { page: ov, observations } = await openPage(browser, `${app.url}#/overview`);
    await ov.getByTestId('page-overview').waitFor({ timeout: 120_000 });
    await ov.waitForTimeout(5000);
    const cdp = await ov.context().newCDPSession(ov);
    await cdp.send('Performance.enable');
    const t0 = await taskMsOf(cdp);
    const n0 = observations();
    await ov.waitForTimeout(BROWSER_MS);
    const spent = (await taskMsOf(cdp)) - t0;
    const updates = observations() - n0;
    await ov.close();
    return {
      kvLiveMs,
      kvLiveFirstMs,
      kvLiveRestMs,
      kvMsPerUpdate,
      kvLiveCanvasLegendMs,
      overviewMsPerUpdate: updates ? spent / updates : NaN,
      overviewUpdates: updates,
    };
  } finally {
    await browser?.close();
    await app.stop();
    await fleet.stop();
  }
}

const pct = (xs: number[], p: number): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '–');

function printPages(scale: PageFigures, single: PageFigures): void {
  const row = (label: string, a: string, b: string, goal = ''): void =>
    void process.stdout.write(`${label.padEnd(52)}${a.padStart(16)}${b.padStart(16)}   ${goal}\n`);
  process.stdout.write(
    '\nRenderer, real Chromium (browser mode), wall-clock on a loaded machine: p50 / p95 ms\n',
  );
  row('', 'fleet', 'single host');
  const charts = [...new Set([...Object.keys(scale.kvLiveMs), ...Object.keys(single.kvLiveMs)])].sort();
  const cell = (xs: number[] | undefined): string =>
    xs?.length ? `${f(pct(xs, 0.5), 2)} / ${f(pct(xs, 0.95), 2)}` : '–';
  for (const c of charts)
    row(`KV live update: ${c}`, cell(scale.kvLiveMs[c]), cell(single.kvLiveMs[c]), `≤ ${GOALS.liveMs} ms`);
  // Same pushes, same load, same moment: the ratio holds where the wall-clock figures above do not.
  const ratio = (a: number[] | undefined, b: number[] | undefined): string =>
    a?.length && b?.length ? `${f(pct(a, 0.5) / pct(b, 0.5), 2)}×` : '–';
  for (const c of charts) {
    row(
      `  canvas legend (before): ${c}`,
      cell(scale.kvLiveCanvasLegendMs[c]),
      cell(single.kvLiveCanvasLegendMs[c]),
    );
    row(
      `  p50 HTML legend / canvas legend: ${c}`,
      ratio(scale.kvLiveMs[c], scale.kvLiveCanvasLegendMs[c]),
      ratio(single.kvLiveMs[c], single.kvLiveCanvasLegendMs[c]),
    );
  }
  row('  first chart drawn after a push', cell(scale.kvLiveFirstMs), cell(single.kvLiveFirstMs));
  row('  the other charts of the push', cell(scale.kvLiveRestMs), cell(single.kvLiveRestMs));
  row(
    'KV page: main-thread ms per update (whole page)',
    f(scale.kvMsPerUpdate, 2),
    f(single.kvMsPerUpdate, 2),
  );
  row(
    'overview: main-thread ms per update (whole page)',
    f(scale.overviewMsPerUpdate, 2),
    f(single.overviewMsPerUpdate, 2),
  );
}

export async function runFleetScaleBench(): Promise<void> {
  process.stdout.write(
    `core: ${SCALE.hosts} hosts × ${SCALE.prefill + SCALE.decode} workers, then one host…\n`,
  );
  if (process.env.BENCH_FLEET_CORE !== '0') await runFleetCore();
  if (process.env.BENCH_FLEET_BROWSER === '0') return;
  if (!existsSync(join(root, 'out', 'renderer', 'index.html'))) {
    process.stdout.write(
      '\n(renderer figures skipped: no built renderer in out/, run `npm run build` first)\n',
    );
    return;
  }
  process.stdout.write('\nrenderer: fleet, then one host…\n');
  const pagesScale = await measurePages(SCALE);
  const pagesSingle = await measurePages(SINGLE);
  printPages(pagesScale, pagesSingle);
}

if (require.main === module) void runFleetScaleBench().then(() => process.exit(0));
