// Review benchmark: opening a 24 h recording (the recording benchmark's synthetic PD session, 1 s scrapes of
// prefill, decode and router, ~900 series, 78 M samples) for review, measured side by side in one run:
//   core       open from the recording (read + signal computation) and from the review cache, the data of the
//              first screen (overview charts + the state at the cursor), CPU time and peak memory;
//   browser    the complete first paint in Chromium (browser mode): click "Open" in the sessions list → the
//              review bar and every chart of the overview drawn with data — cold, then warm (review cache);
//   baseline   gzip'd raw exposition text of the same session: gunzip + the cheapest line scan, for 1 h,
//              extrapolated to 24 h (a real parser is slower);
//   zcat       `zcat FILE > /dev/null` on the same recording in the same run: the goal is the overview drawn
//              in at most 0.25 × that (opened from its overview's signal rows) — a file without overview (an
//              older minor, read the slow way) is drawn for comparison.
// Run: npx tsx --tsconfig tsconfig.node.json bench/review.ts [hours]   (browser part: `npm run build` first,
// and Chromium at /usr/bin/chromium or PD_CHROMIUM; skipped with a message otherwise).
import { spawn } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { allChartsReady } from './support/charts-ready';
import { createGunzip, createGzip } from 'node:zlib';
import { createWriteStream } from 'node:fs';
import { loadReview } from '../src/main/core/review/load-review';
import { readOverview } from '../src/main/core/recording/overview-reader';
import { ReviewCache } from '../src/main/core/review/review-cache';
import { observationAt, snapshotAt } from '../src/main/core/review/state-at';
import { readRecording } from '../src/main/core/recording';
import { isReviewInput } from '../src/main/core/review/review-inputs';
import { buildReviewData } from '../src/main/core/review/review-data';
import { tableReviewData, type TableRecord } from '../src/main/core/review/overview-table';
import { BENCH_START, syntheticRecording } from './review-fixture';
import { SyntheticPdSession, formatExposition } from '../test/support/synthetic-pd-session';
import type { SignalKey } from '../src/shared/signals/spec';

const OVERVIEW_KEYS: SignalKey[] = ['prefill.kv_ratio', 'decode.kv_ratio'];
const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;
const f = (x: number, d = 2): string => x.toFixed(d);

interface Timed {
  wallMs: number;
  cpuMs: number;
}

async function timed<T>(fn: () => Promise<T>): Promise<Timed & { value: T }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  return { value, wallMs: performance.now() - t0, cpuMs: cpuMs(process.cpuUsage(c0)) };
}

async function coreFigures(path: string): Promise<string[]> {
  const out: string[] = [];
  const cacheDir = await mkdtemp(join(tmpdir(), 'pdc-review-bench-cache-'));
  try {
    // Where a cold open goes: reading (inflate + decoding the needed series) vs computing the signals.
    const read = await timed(() => readRecording(path, { series: (s) => isReviewInput(s.name) }));
    const rssAfterRead = process.memoryUsage().rss;
    const build = await timed(async () => buildReviewData(read.value));
    read.value.series.length = 0;

    // The overview's signal rows.
    const ov = await timed(() => readOverview(path));
    const ovBuild = await timed(async () =>
      tableReviewData(ov.value!.recording, ov.value!.tables as TableRecord[]),
    );
    const ovFirst = await timed(async () => firstScreen(ovBuild.value));
    const cache = new ReviewCache(cacheDir);
    const cold = await timed(() => loadReview(path, { cache, noOverview: true }));
    const first = await timed(async () => firstScreen(cold.value.data));
    await cold.value.cached;
    const cacheBytes = (await stat(cacheDir)).isDirectory() ? await dirBytes(cacheDir) : 0;
    const warm = await timed(() => loadReview(path, { cache }));
    const firstWarm = await timed(async () => firstScreen(warm.value.data));
    const journal = await timed(() => warm.value.journal);
    out.push('  core (Node)                                           wall      CPU');
    out.push(
      `    overview: find + read (${ov.value!.foundBy}, ${ov.value!.members} members, ${kib(ov.value!.bytesRead)}) ${f(ov.wallMs).padStart(7)} ms ${f(ov.cpuMs).padStart(6)} ms`,
    );
    out.push(
      `    overview: signal table from its rows              ${f(ovBuild.wallMs).padStart(7)} ms ${f(ovBuild.cpuMs).padStart(6)} ms   ${rows(ovBuild.value)} rows; first screen ${f(ovFirst.wallMs)} ms`,
    );
    out.push(
      `    read the recording (needed series only)         ${f(read.wallMs / 1000).padStart(7)} s ${f(read.cpuMs / 1000).padStart(7)} s   RSS ${mib(rssAfterRead)}`,
    );
    out.push(
      `    compute every signal from the columns            ${f(build.wallMs / 1000).padStart(7)} s ${f(build.cpuMs / 1000).padStart(7)} s   ${rows(build.value)} rows × signals`,
    );
    out.push(
      `    open, no cache (read + compute)                  ${f(cold.wallMs / 1000).padStart(7)} s ${f(cold.cpuMs / 1000).padStart(7)} s`,
    );
    out.push(
      `    open from the review cache                       ${f(warm.wallMs / 1000).padStart(7)} s ${f(warm.cpuMs / 1000).padStart(7)} s   cache entry ${mib(cacheBytes)}`,
    );
    out.push(
      `    first screen: 2 charts (24 h, 1600 pts) + cursor ${f(first.wallMs).padStart(7)} ms ${f(firstWarm.wallMs).padStart(6)} ms (cold / warm data)`,
    );
    out.push(
      `    journal from the cache, after first paint        ${f(journal.wallMs / 1000).padStart(7)} s ${f(journal.cpuMs / 1000).padStart(7)} s   ${journal.value.length} lines`,
    );
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
  return out;
}

function firstScreen(data: Awaited<ReturnType<typeof loadReview>>['data']): number {
  const s = data.table.series({ keys: OVERVIEW_KEYS, maxPoints: 1600 }, data.notExposed, () => undefined);
  observationAt(data, 'rec:bench', 'demo', data.lastScrapeTs);
  snapshotAt(data, data.events, 'rec:bench', data.lastScrapeTs);
  return s.series.reduce((n, c) => n + c.t.length, 0);
}

function rows(d: ReturnType<typeof buildReviewData>): number {
  let n = 0;
  for (const g of d.table.groups.values()) n += g.t.length;
  return n;
}

async function dirBytes(dir: string): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  let n = 0;
  for (const name of await readdir(dir)) n += (await stat(join(dir, name))).size;
  return n;
}

function kib(b: number): string {
  return `${(b / 1024).toFixed(0)} KiB`;
}

function mib(b: number): string {
  return `${(b / 1024 / 1024).toFixed(0)} MiB`;
}

/** Raw exposition text of the same session for `hours`, gzip'd the same way; time to gunzip + scan it. */
async function baseline(hours: number): Promise<{ bytes: number; samples: number } & Timed> {
  const dir = await mkdtemp(join(tmpdir(), 'pdc-review-bench-base-'));
  const path = join(dir, 'baseline.prom.gz');
  try {
    const sim = new SyntheticPdSession(BENCH_START, 42, hours * 3_600_000);
    const gz = createGzip({ level: 6 });
    const file = createWriteStream(path);
    gz.pipe(file);
    const closed = new Promise<void>((r) => file.on('close', () => r()));
    for (let i = 0; i < hours * 3600; i++) {
      for (const s of sim.step().scrapes)
        if (!gz.write(formatExposition(s.exp))) await new Promise((r) => gz.once('drain', r));
      if (i % 2 === 1) gz.flush(2);
    }
    gz.end();
    await closed;
    let samples = 0;
    const t = await timed(
      () =>
        new Promise<void>((resolve, reject) => {
          const g = createGunzip({ finishFlush: 2 });
          let carry = '';
          g.on('data', (b: Buffer) => {
            const text = carry + b.toString('utf8');
            const cut = text.lastIndexOf('\n');
            let start = 0;
            while (start <= cut) {
              const nl = text.indexOf('\n', start);
              if (text.charCodeAt(start) !== 35 && nl > start) {
                const sp = text.lastIndexOf(' ', nl);
                if (Number.isFinite(Number(text.slice(sp + 1, nl))) || text.endsWith('Inf', nl)) samples++;
              }
              start = nl + 1;
            }
            carry = text.slice(cut + 1);
          });
          g.on('end', () => resolve());
          g.on('error', reject);
          createReadStream(path).pipe(g);
        }),
    );
    return { bytes: (await stat(path)).size, samples, wallMs: t.wallMs, cpuMs: t.cpuMs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function browserFigures(path: string, labels: string[], paints: number[]): Promise<string[]> {
  const root = join(__dirname, '..');
  const outDir = process.env.PD_E2E_OUT ?? join(root, 'out');
  if (!existsSync(join(outDir, 'main', 'web.js')))
    return [`  browser: SKIPPED — no built app in ${outDir} (run \`npm run build\` first)`];
  const { launchChromium } = await import('../e2e/support/browser');
  let browser;
  try {
    browser = await launchChromium();
  } catch (err) {
    return [`  browser: SKIPPED — Chromium could not start: ${(err as Error).message.split('\n')[0]}`];
  }
  const data = await mkdtemp(join(tmpdir(), 'pdc-review-bench-app-'));
  await mkdir(join(data, 'recordings'), { recursive: true });
  const id = '20260105-080000Z-b24h00';
  await copyFile(path, join(data, 'recordings', `${id}.pdrec.jsonl.gz`));
  const proc = spawn(process.execPath, [join(outDir, 'main', 'web.js'), '--no-open'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PD_CONSOLE_DATA_DIR: data },
  });
  let log = '';
  proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const out: string[] = [
    '  browser (Chromium, browser mode): click "Open" → review bar + every overview chart drawn',
  ];
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no URL from browser mode:\n${log}`)), 30_000);
      const check = (): void => {
        const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(log);
        if (m) {
          clearTimeout(t);
          resolve(m[1]);
        }
      };
      proc.stdout!.on('data', check);
    });
    for (const label of labels) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.goto(url);
      await page.getByTestId('open-sessions').click();
      const open = page.getByTestId(`session-open-${id}`);
      await open.waitFor({ timeout: 120_000 });
      const t0 = performance.now();
      await open.click();
      await page.getByTestId('review-bar').waitFor({ timeout: 300_000 });
      const tBar = performance.now() - t0;
      await allChartsReady(page);
      const tPaint = performance.now() - t0;
      paints.push(tPaint);
      out.push(
        `    ${label.padEnd(30)} review bar ${f(tBar / 1000).padStart(6)} s   complete first paint ${f(tPaint / 1000).padStart(6)} s`,
      );
      await page.getByTestId('close-deployment').click();
      await page.close();
      // Let the cache entry of the first open be written before the second (after the full read in the
      // background, for a review opened from its overview).
      const cacheDir = join(data, 'cache', 'review');
      for (let i = 0; i < 120; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        const names = await readdir(cacheDir).catch(() => [] as string[]);
        if (names.some((n) => n.endsWith('.rvc'))) break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await browser.close();
    proc.kill('SIGTERM');
    await rm(data, { recursive: true, force: true });
  }
  return out;
}

/** Wall time of `zcat FILE > /dev/null`. */
function zcat(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn('sh', ['-c', 'zcat "$0" > /dev/null', path], { stdio: 'ignore' });
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`zcat exited ${code}`)),
    );
  });
}

export async function runReviewBench(hours = Number(process.argv[2]) || 24): Promise<void> {
  const path = await syntheticRecording(hours);
  const legacy = await syntheticRecording(hours, false, 'no-overview');
  const size = (await stat(path)).size;
  const load0 = loadavg()[0];
  const core = await coreFigures(path);
  const paints: number[] = [];
  const legacyPaints: number[] = [];
  const zcatMs: number[] = [await zcat(path)];
  const browser = await browserFigures(
    path,
    ['never opened (overview)', 'review cache (second open)'],
    paints,
  );
  zcatMs.push(await zcat(path));
  browser.push(
    ...(await browserFigures(legacy, ['no overview, never opened (slow path)'], legacyPaints)).slice(1),
  );
  zcatMs.push(await zcat(path));
  const zc = [...zcatMs].sort((a, b) => a - b)[1];
  if (paints.length)
    browser.push(
      `  goal: overview drawn ÷ zcat FILE > /dev/null (${zcatMs.map((z) => f(z, 0)).join(' / ')} ms, median ${f(zc, 0)} ms): ` +
        `overview ${f(paints[0], 0)} ms → ${f(paints[0] / zc)}` +
        (paints.length > 1
          ? `; second open (review cache) ${f(paints[1], 0)} ms → ${f(paints[1] / zc)}`
          : '') +
        (legacyPaints.length
          ? `; no overview ${f(legacyPaints[0], 0)} ms → ${f(legacyPaints[0] / zc)}`
          : '') +
        ' (goal ≤ 0.25)',
    );
  else browser.push(`  zcat FILE > /dev/null: ${zcatMs.map((z) => f(z, 0)).join(' / ')} ms`);
  const baseHours = Math.min(1, hours);
  const base = await baseline(baseHours);
  const scale = hours / baseHours;
  console.log('');
  console.log(
    `Review benchmark: ${hours} h synthetic PD session (${mib(size)} recording), Node ${process.version}, ${cpus().length} cores, load ${f(load0, 1)} → ${f(loadavg()[0], 1)}`,
  );
  for (const l of [...core, ...browser]) console.log(l);
  console.log(
    `  baseline: gzip'd raw text, ${baseHours} h: ${mib(base.bytes)}, gunzip + line scan ${f(base.wallMs / 1000)} s wall / ${f(base.cpuMs / 1000)} s CPU (${base.samples} samples) ≈ ${f((base.wallMs * scale) / 1000, 1)} s / ${f((base.cpuMs * scale) / 1000, 1)} s CPU and ${mib(base.bytes * scale)} for ${hours} h — before any signal is computed`,
  );
}

const isMain = process.argv[1] !== undefined && /bench[\\/]review\.ts$/.test(process.argv[1]);
if (isMain) {
  runReviewBench().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
