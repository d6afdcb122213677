// History from the operator's Prometheus against the app's own recordings, for a 7-day KV chart and a 7-day
// p99 TTFT chart. A real Prometheus (Debian's) holds 7 days at 15 s, backfilled the way an operator imports
// the app's data (test/support/prometheus-backfill.ts: recording → OpenMetrics export → promtool blocks).
//   Prometheus path  Chromium on browser mode (bench/support/prom-history-web.ts: the product's composition,
//                    history pointed at that Prometheus): the chart's page open on live, "7 d" clicked, until
//                    the chart has drawn that window (its `zoom-refined` measure); bytes of the chart's
//                    getHistory answer over the page's WebSocket, and of Prometheus's answers (what crosses
//                    the SSH tunnel on a real host: the client counts them as they arrive).
//   recording path   the same 7 days from the recording file of the backfill, as review opens it, in this
//                    process (no Chromium): a cold open (decode, evaluate) then the chart's getSeriesBatch;
//                    bytes: the file read, and the JSON answer.
// Goal (issue 14): the Prometheus path draws 7 days in < 1 s and moves ≤ 1 MB per chart. Wall-clock figures
// on a loaded 2-core machine are noisy: CPU time and bytes are printed beside them.
// Run: npm run build && npm run bench -- prom-history
import { existsSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { performance as clock } from 'node:perf_hooks';
import type { Page } from '@playwright/test';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp } from '../e2e/support/web-app';
import { BENCH_WEB_ENV } from './support/bench-client';
import { backfill } from '../test/support/prometheus-backfill';
import { prometheusUnavailableReason, startPrometheus } from '../test/support/prometheus-server';
import { createApp } from '../src/main/compose';
import type { SignalKey } from '../src/shared/signals/spec';
import { signalPromql } from '../src/shared/signals/promql';
import { PromHttpClient } from '../src/main/core/prometheus/http-client';
import { rangeGrid } from '../src/main/core/prometheus/history-step';

const root = join(__dirname, '..');
const DAY = 86_400_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Days held by Prometheus and the recording (7 for the figures; fewer to try the benchmark out). */
const DAYS = Number(process.env.BENCH_PROM_DAYS ?? 7);

interface ChartPlan {
  name: string;
  hash: string;
  chart: string;
  /** A key the chart's getHistory request names (to tell its answer from the other charts'). */
  key: SignalKey;
}

const CHARTS: ChartPlan[] = [
  { name: 'KV usage (decode)', hash: '#/kv', chart: 'kv-pct-decode', key: 'decode.kv_ratio' },
  { name: 'TTFT p50/p90/p99', hash: '#/metrics', chart: 'ttft', key: 'decode.ttft_p99_s' },
];

interface Row {
  path: string;
  chart: string;
  ms: number[];
  cpuMs?: number[];
  toPageBytes: number;
  tunnelBytes: number;
  points: number;
}

/** A row before its runs: no times, no bytes, no points. */
const newRow = (path: string, chart: string, extra: Partial<Row> = {}): Row => ({
  path,
  chart,
  ms: [],
  toPageBytes: 0,
  tunnelBytes: 0,
  points: 0,
  ...extra,
});

const med = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const kib = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;

export async function runPromHistoryBench(): Promise<void> {
  const reason = prometheusUnavailableReason();
  if (reason) {
    console.log(`prom-history: skipped — ${reason}`);
    return;
  }
  if (!existsSync(join(root, 'out', 'renderer', 'index.html'))) throw new Error('run `npm run build` first');
  const end = Math.floor(Date.now() / 15_000) * 15_000 - 60_000;
  const start = end - DAYS * DAY;
  const cpu0 = process.cpuUsage();
  const t0 = clock.now();
  const data = await backfill(start, end, 15_000);
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `backfill: ${DAYS} d at 15 s, ${data.samples.toLocaleString('en')} samples; recording ${kib(statSync(data.recordingPath).size)}, ` +
      `OpenMetrics ${kib(statSync(data.openMetricsPath).size)}; ${((clock.now() - t0) / 1000).toFixed(1)} s wall, ` +
      `${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU in this process (promtool apart)`,
  );
  const prom = await startPrometheus({
    configYaml: 'global:\n  scrape_interval: 15s\nscrape_configs: []\n',
    blocksDir: data.blocksDir,
    retention: '15d',
  });
  const rows: Row[] = [];
  try {
    await settle(prom.url);
    rows.push(...(await engineAlone(prom.url, start, end)));
    rows.push(...(await prometheusPath(prom.url)));
    rows.push(...(await recordingPath(data.recordingPath, start, end)));
  } finally {
    await prom.stop();
    await data.cleanup();
  }
  print(rows);
}

/**
 * Prometheus compacts the backfilled 2 h blocks into larger ones after it starts (minutes of CPU for a week):
 * measured during that, every figure would be the compaction's. Waits until its compaction counter rests.
 */
async function settle(promUrl: string): Promise<void> {
  const count = async (): Promise<string> => {
    const text = await (await fetch(`${promUrl}/metrics`)).text();
    return (
      (/^prometheus_tsdb_compactions_total (\S+)$/m.exec(text)?.[1] ?? '?') +
      (/^prometheus_tsdb_blocks_loaded (\S+)$/m.exec(text)?.[1] ?? '?')
    );
  };
  const t0 = clock.now();
  let last = await count();
  let still = 0;
  while (clock.now() - t0 < 300_000 && still < 3) {
    await new Promise((r) => setTimeout(r, 5000));
    const now = await count();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  console.log(`Prometheus settled (compactions done) after ${((clock.now() - t0) / 1000).toFixed(0)} s`);
}

/** The chart's queries straight from this process: what the engine itself costs, apart from the app and page. */
async function engineAlone(promUrl: string, start: number, end: number): Promise<Row[]> {
  const api = new PromHttpClient({ baseUrl: promUrl, label: 'bench' });
  const rows: Row[] = [];
  try {
    for (const plan of [
      ...CHARTS.map((c) => ({ ...c, pruned: false })),
      ...CHARTS.map((c) => ({ ...c, pruned: true })),
    ]) {
      // The families the data holds (what history-query.ts's probe finds): the pruned query reads one era.
      const held = /^sglang:(kv_used_tokens|max_total_num_tokens|time_to_first_token_seconds_bucket)$/;
      const present = (name: string): boolean => !plan.pruned || held.test(name);
      const keys =
        plan.key === 'decode.kv_ratio'
          ? ['decode.kv_ratio']
          : ['decode.ttft_p50_s', 'decode.ttft_p90_s', 'decode.ttft_p99_s'];
      const grid = rangeGrid(start, end, 700, 15)!;
      const row = newRow(
        plan.pruned ? 'Prometheus query alone, one era' : 'Prometheus query alone, all eras',
        plan.name,
      );
      for (let run = 0; run <= RUNS; run++) {
        const t0 = clock.now();
        let bytes = 0;
        let points = 0;
        for (const key of keys) {
          const q = signalPromql(key, { selector: 'target="decode"', scrapeIntervalS: 15, present });
          if (!q.ok) throw new Error(q.why);
          const r = await api.queryRange(q.expr, grid.startS, grid.endS, grid.stepS);
          bytes += r.bytes;
          points += r.series[0]?.values.length ?? 0;
        }
        if (run === 0) continue;
        row.ms.push(clock.now() - t0);
        row.tunnelBytes = bytes;
        row.points = points;
      }
      rows.push(row);
    }
  } finally {
    api.dispose();
  }
  return rows;
}

async function prometheusPath(promUrl: string): Promise<Row[]> {
  const app = await startWebApp([], { ...BENCH_WEB_ENV, BENCH_PROM_URL: promUrl }, [
    '--import',
    'tsx',
    join(root, 'bench', 'support', 'prom-history-web.ts'),
  ]);
  const browser = await launchChromium();
  const rows: Row[] = [];
  try {
    for (const plan of CHARTS) {
      const row = newRow('Prometheus → Chromium', plan.name);
      // One warm-up (first calls of the page's and the core's code are several times slower), then RUNS.
      for (let run = 0; run <= RUNS; run++) {
        const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
        const got = await measure(page, `${app.url}${plan.hash}`, plan);
        await page.close();
        if (run === 0) continue;
        row.ms.push(got.ms);
        row.toPageBytes = got.answerBytes;
        row.tunnelBytes = got.promBytes;
        row.points = got.points;
      }
      rows.push(row);
    }
  } finally {
    await browser.close();
    await app.stop();
  }
  return rows;
}

async function measure(
  page: Page,
  url: string,
  plan: ChartPlan,
): Promise<{ ms: number; answerBytes: number; promBytes: number; points: number }> {
  const ids = new Set<string>();
  let answerBytes = 0;
  let promBytes = 0;
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => {
      const p = String(f.payload);
      const m = /^\{"t":"req","id":(\d+),"method":"getHistory"/.exec(p);
      if (m && p.includes(`"${plan.key}"`)) ids.add(m[1]);
    });
    ws.on('framereceived', (f) => {
      const p = String(f.payload);
      const m = /"id":(\d+)/.exec(p.slice(0, 40));
      if (!m || !ids.has(m[1])) return;
      answerBytes = Buffer.byteLength(p);
      promBytes = Number(/"promBytes":(\d+)/.exec(p)?.[1] ?? 0);
    });
  });
  await page.addInitScript(() => {
    const list: { chart: string; kind: string; points: number; end: number }[] = [];
    (window as unknown as { __perf: typeof list }).__perf = list;
    new PerformanceObserver((entries) => {
      for (const e of entries.getEntries()) {
        if (!e.name.startsWith('pdc:')) continue;
        const d = (e as PerformanceMeasure).detail as { chart: string; kind: string; points: number };
        list.push({ ...d, end: e.startTime + e.duration });
      }
    }).observe({ type: 'measure' });
  });
  await page.goto(url);
  const section = page.locator(`section[data-testid="chart-${plan.chart}"]`);
  await section.locator('canvas').waitFor({ timeout: 60_000 });
  await page.waitForTimeout(1500);
  const clickAt = await page.evaluate(() => window.performance.now());
  await page.getByTestId('range-7d').click();
  const until = Date.now() + 60_000;
  for (;;) {
    const rec = await page.evaluate(
      ([chart, after]) =>
        (
          window as unknown as { __perf: { chart: string; kind: string; points: number; end: number }[] }
        ).__perf.find((r) => r.chart === chart && r.kind === 'zoom-refined' && r.end > after),
      [plan.chart, clickAt] as const,
    );
    if (rec) return { ms: rec.end - clickAt, answerBytes, promBytes, points: rec.points };
    if (Date.now() > until) throw new Error(`${plan.chart} did not draw 7 days within 60 s`);
    await page.waitForTimeout(50);
  }
}

async function recordingPath(file: string, start: number, end: number): Promise<Row[]> {
  const rows: Row[] = [];
  const size = statSync(file).size;
  for (const plan of CHARTS) {
    const row = newRow('recording (in process)', plan.name, { cpuMs: [], tunnelBytes: size });
    for (let run = 0; run < RUNS; run++) {
      // A fresh app each run: review's cache starts empty, as for a recording opened the first time.
      const app = createApp({ shell: 'cli', dataDir: mkdtempSync(join(tmpdir(), 'pdc-bench-ph-')) });
      try {
        const cpu0 = process.cpuUsage();
        const t0 = clock.now();
        const opened = await app.review.openFile(file);
        const keys: SignalKey[] =
          plan.key === 'decode.kv_ratio'
            ? ['decode.kv_ratio']
            : ['decode.ttft_p50_s', 'decode.ttft_p90_s', 'decode.ttft_p99_s'];
        const res = await app.handlers.getSeriesBatch({
          deploymentId: opened.summary.deployment.id,
          fromMs: start,
          toMs: end,
          groups: [{ keys, maxPoints: 1400 }],
        });
        const ms = clock.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        row.ms.push(ms);
        row.cpuMs!.push((cpu.user + cpu.system) / 1000);
        row.toPageBytes = Buffer.byteLength(JSON.stringify(res));
        row.points = res.results[0].series.reduce((n, s) => n + s.t.length, 0);
      } finally {
        await app.shutdown();
      }
    }
    rows.push(row);
  }
  return rows;
}

function print(rows: Row[]): void {
  console.log(
    `\nload average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (2 cores shared: wall times are inflated)`,
  );
  const head = [
    'path',
    'chart',
    'range → drawn (median)',
    'runs',
    'CPU',
    'answer to page',
    'read from source',
    'points',
  ];
  const table = rows.map((r) => [
    r.path,
    r.chart,
    `${med(r.ms).toFixed(0)} ms`,
    r.ms.map((x) => x.toFixed(0)).join(' / '),
    r.cpuMs ? `${med(r.cpuMs).toFixed(0)} ms` : '—',
    kib(r.toPageBytes),
    r.path.startsWith('Prometheus')
      ? `${kib(r.tunnelBytes)} (Prometheus answers)`
      : `${kib(r.tunnelBytes)} (the file)`,
    String(r.points),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(line(head));
  for (const t of table) console.log(line(t));
  console.log('goal: Prometheus path < 1000 ms and ≤ 1 MiB per chart');
}

if (require.main === module)
  void runPromHistoryBench().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(err.stack ?? err.message);
      process.exit(1);
    },
  );
