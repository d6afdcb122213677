// Recording benchmark: a synthetic 24 h PD session (test/support/synthetic-pd-session.ts) is written with
// RecordingWriter and, side by side in the same run, as gzip'd raw exposition text (the baseline).
// Prints bytes per sample, append cost per scrape (p50/p99) and time to open. Run: npx tsx bench/recording.ts [hours]
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { cpus as osCpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createGzip, createGunzip } from 'node:zlib';
import { createReadStream } from 'node:fs';
import type { Clock } from '../src/main/core/clock';
import { RecordingWriter, readRecording } from '../src/main/core/recording';
import { readOverview } from '../src/main/core/recording/overview-reader';
import { scanMarked } from '../src/main/core/recording/members';
import { REVIEW_OVERVIEW } from '../src/main/core/review/overview-table';
import { readFile } from 'node:fs/promises';
import { SyntheticPdSession, formatExposition } from '../test/support/synthetic-pd-session';

// ---------------------------------------------------------------------------------------------------------------
// Baseline: the raw exposition text each scrape returned, gzip'd with the same sync-flush cadence.

/** The cheapest possible reader of the baseline: a line scanner into per-series arrays (a real parser is slower). */
function scanExpositionText(
  text: string,
  ts: number,
  into: Map<string, { t: number[]; v: number[] }>,
): number {
  let n = 0;
  let start = 0;
  while (start < text.length) {
    let nl = text.indexOf('\n', start);
    if (nl < 0) nl = text.length;
    if (text.charCodeAt(start) !== 35 /* # */ && nl > start) {
      const sp = text.lastIndexOf(' ', nl);
      const key = text.slice(start, sp);
      let s = into.get(key);
      if (!s) {
        s = { t: [], v: [] };
        into.set(key, s);
      }
      const raw = text.slice(sp + 1, nl);
      s.t.push(ts);
      s.v.push(raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw));
      n++;
    }
    start = nl + 1;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------------

interface BenchOptions {
  /** Simulated session length (default 24, or the first CLI argument). */
  hours?: number;
  /** Hours of the session also written as the gzip'd raw-text baseline (default min(hours, 2)). */
  baselineHours?: number;
}

const pct = (sorted: Float64Array, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

export async function runRecordingBench(opts: BenchOptions = {}): Promise<void> {
  const hours = opts.hours ?? (Number(process.argv[2]) || 24);
  const baselineHours = Math.min(hours, opts.baselineHours ?? (Number(process.argv[3]) || 2));
  const dir = await mkdtemp(join(tmpdir(), 'pdc-rec-bench-'));
  const start = Date.UTC(2026, 0, 5, 8, 0, 0);
  const sim = new SyntheticPdSession(start, 42, hours * 3_600_000);
  // The writer's flush cadence follows simulated time, so the file has the sync points a real session would have.
  const simClock: Clock = {
    now: () => sim.now,
    setTimeout: (fn, ms) => {
      const h = setTimeout(fn, ms);
      h.unref();
      return { id: Number(h[Symbol.toPrimitive]()) };
    },
    clearTimeout: () => undefined,
  };
  const header = {
    sessionId: 'bench',
    name: 'bench 24 h demo session',
    startedAt: start,
    host: { id: 'demo', label: 'Demo GPU host', kind: 'demo' as const },
    deployment: { id: 'demo', name: 'Demo PD deployment', services: [] },
    appVersion: '0.1.0',
  };
  const allPath = join(dir, 'all.pdrec.jsonl.gz');
  const metricsPath = join(dir, 'metrics-only.pdrec.jsonl.gz');
  const basePath = join(dir, 'baseline.prom.gz');
  // Format 1.3 with the overview the recording service writes (review's signals at the overview's resolution).
  const overview = REVIEW_OVERVIEW;
  const wAll = await RecordingWriter.open(allPath, header, { clock: simClock, overview });
  const wMetrics = await RecordingWriter.open(metricsPath, header, { clock: simClock, overview });
  // Same flush cadence for the baseline as for the recording.
  const flushMs = wAll.header.flushIntervalMs;
  const baseGzip = createGzip({ level: 6, memLevel: 9 });
  const baseFile = createWriteStream(basePath);
  baseGzip.pipe(baseFile);
  let lastBaseFlush = start;

  const ticks = Math.round(hours * 3600);
  const baseTicks = Math.round(baselineHours * 3600);
  const appendUs = new Float64Array(ticks * 3);
  const baseUs = new Float64Array(baseTicks * 3);
  let nAppend = 0;
  let nBase = 0;
  let samples = 0;
  let baseSamples = 0;
  let journalLines = 0;
  const t0 = performance.now();
  for (let i = 0; i < ticks; i++) {
    const tick = sim.step();
    for (const s of tick.scrapes) {
      const a = performance.now();
      wAll.appendScrape(s.ts, s.target, s.exp);
      appendUs[nAppend++] = (performance.now() - a) * 1000;
      wMetrics.appendScrape(s.ts, s.target, s.exp);
      samples += s.exp.sampleCount;
      if (i < baseTicks) {
        const text = formatExposition(s.exp);
        const b = performance.now();
        baseGzip.write(text);
        if (s.ts - lastBaseFlush >= flushMs) {
          baseGzip.flush(2 /* Z_SYNC_FLUSH */);
          lastBaseFlush = s.ts;
        }
        baseUs[nBase++] = (performance.now() - b) * 1000;
        baseSamples += s.exp.sampleCount;
      }
    }
    for (const u of tick.unitStates) wAll.appendUnitState(u.ts, u.role, u.state);
    for (const h of tick.health) wAll.appendHealth(h.ts, h.role, h.health);
    for (const e of tick.events) wAll.appendEvent(e);
    for (const j of tick.journal) wAll.appendJournal(j);
    journalLines += tick.journal.length;
    // Let zlib's thread pool keep up, as it does when scrapes arrive once a second (the simulation runs ~100×
    // faster than that).
    if (i % 4 === 0) await new Promise((r) => setImmediate(r));
    while (wAll.stats.queuedBytes + wMetrics.stats.queuedBytes > 8 << 20)
      await new Promise((r) => setTimeout(r, 5));
    if (i % 3600 === 3599)
      process.stdout.write(`  simulated ${((i + 1) / 3600).toFixed(0)} h of ${hours} h\r`);
  }
  const genSeconds = (performance.now() - t0) / 1000;
  const baseClosed = new Promise<void>((r) => baseFile.on('close', () => r()));
  baseGzip.end();
  await Promise.all([wAll.close(), wMetrics.close(), baseClosed]);
  if (wAll.error || wMetrics.error) throw wAll.error ?? wMetrics.error;
  const allBytes = (await stat(allPath)).size;
  const metricsBytes = (await stat(metricsPath)).size;
  const baseBytes = (await stat(basePath)).size;

  // Time to open: full decode, then a UI-like selection (KV usage, queues, throughput: a handful of series).
  // CPU time is printed too: on a shared machine wall time mostly measures the neighbours.
  const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;
  const loadBefore = loadavg()[0];
  let c0 = process.cpuUsage();
  const o1 = performance.now();
  const rec = await readRecording(allPath);
  const openAllMs = performance.now() - o1;
  const openAllCpu = cpuMs(process.cpuUsage(c0));
  const decodedSamples = rec.series.reduce((a, s) => a + s.v.length, 0);
  const seriesCount = rec.series.length;
  rec.series.length = 0;
  const uiSeries =
    /^(sglang:(kv_used_tokens|kv_evictable_tokens|kv_available_tokens|max_total_num_tokens|num_running_reqs|num_queue_reqs|gen_throughput|token_usage)|smg_http_connections_active)$/;
  c0 = process.cpuUsage();
  const o2 = performance.now();
  const recUi = await readRecording(allPath, { series: (s) => uiSeries.test(s.name) });
  const openUiMs = performance.now() - o2;
  const openUiCpu = cpuMs(process.cpuUsage(c0));
  c0 = process.cpuUsage();
  const o4 = performance.now();
  const ov = await readOverview(allPath);
  const openOvMs = performance.now() - o4;
  const openOvCpu = cpuMs(process.cpuUsage(c0));
  const overviewBytes = scanMarked(await readFile(allPath)).reduce((n, m) => n + m.length, 0);
  c0 = process.cpuUsage();
  const o3 = performance.now();
  const baseSeries = new Map<string, { t: number[]; v: number[] }>();
  let baseRead = 0;
  {
    // Baseline open: gunzip + scan; the scrape boundaries are implied by the text itself, so ts is approximate.
    const gunzip = createGunzip({ finishFlush: 2 });
    let carry = '';
    let k = 0;
    await new Promise<void>((resolve, reject) => {
      gunzip.on('data', (b: Buffer) => {
        const text = carry + b.toString('utf8');
        const cut = text.lastIndexOf('\n');
        baseRead += scanExpositionText(text.slice(0, cut + 1), start + k++, baseSeries);
        carry = text.slice(cut + 1);
      });
      gunzip.on('end', () => resolve());
      gunzip.on('error', reject);
      createReadStream(basePath).pipe(gunzip);
    });
  }
  const openBaseMs = performance.now() - o3;
  const openBaseCpu = cpuMs(process.cpuUsage(c0));
  const loadAfter = loadavg()[0];
  await rm(dir, { recursive: true, force: true });
  const cpus = osCpus().length;

  appendUs.subarray(0, nAppend).sort();
  baseUs.subarray(0, nBase).sort();
  const ap = appendUs.subarray(0, nAppend);
  const bp = baseUs.subarray(0, nBase);
  const f = (x: number, d = 2): string => x.toFixed(d);
  const mib = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;
  const scale = hours / baselineHours;
  console.log('');
  console.log(
    `Recording benchmark: synthetic PD session, ${hours} h at 1 s, 3 targets (Node ${process.version})`,
  );
  console.log(
    `  ${nAppend} scrapes, ${samples} samples, ${seriesCount} series, ${journalLines} journal lines, ${rec.events.length} events; simulation + append loop ${f(genSeconds, 1)} s`,
  );
  console.log(
    `  machine load average ${f(loadBefore, 1)} → ${f(loadAfter, 1)} on ${cpus} cores during the open measurements`,
  );
  console.log('');
  console.log('  size and density');
  console.log(
    `    recording, metrics only             ${mib(metricsBytes).padStart(10)}   ${f(metricsBytes / samples, 3)} B/sample`,
  );
  console.log(
    `    recording, all records              ${mib(allBytes).padStart(10)}   ${f(allBytes / samples, 3)} B/sample (incl. journal, states, events)`,
  );
  console.log(
    `    baseline: gzip'd raw text, ${baselineHours} h      ${mib(baseBytes).padStart(10)}   ${f(baseBytes / baseSamples, 3)} B/sample  → ${f(baseBytes / baseSamples / (metricsBytes / samples), 1)}× the recording`,
  );
  console.log(
    `    of which the overview (format 1.3)  ${mib(overviewBytes).padStart(10)}   ${f(overviewBytes / samples, 3)} B/sample (${f((100 * overviewBytes) / allBytes, 1)} % of the file)`,
  );
  console.log('  append cost per scrape (µs)                 p50      p99      max');
  console.log(
    `    recording appendScrape                ${f(pct(ap, 0.5), 0).padStart(7)}  ${f(pct(ap, 0.99), 0).padStart(7)}  ${f(ap[ap.length - 1], 0).padStart(7)}`,
  );
  console.log(
    `    baseline gzip.write(raw text)         ${f(pct(bp, 0.5), 0).padStart(7)}  ${f(pct(bp, 0.99), 0).padStart(7)}  ${f(bp[bp.length - 1], 0).padStart(7)}   (text formatting not counted)`,
  );
  console.log('  time to open                                  wall      CPU');
  console.log(
    `    readRecording, all ${seriesCount} series              ${f(openAllMs / 1000, 2).padStart(6)} s  ${f(openAllCpu / 1000, 2).padStart(6)} s   ${decodedSamples} samples as Float64Array columns`,
  );
  console.log(
    `    readRecording, ${recUi.series.length} UI series               ${f(openUiMs / 1000, 2).padStart(6)} s  ${f(openUiCpu / 1000, 2).padStart(6)} s   (KV tokens, running, queue, throughput…)`,
  );
  console.log(
    `    readOverview (index → overview members) ${f(openOvMs / 1000, 2).padStart(6)} s  ${f(openOvCpu / 1000, 2).padStart(6)} s   ${ov?.members ?? 0} members, ${mib(ov?.bytesRead ?? 0)} read, ${ov?.tables.length ?? 0} signal tables`,
  );
  console.log(
    `    baseline gunzip + line scan, ${baselineHours} h      ${f(openBaseMs / 1000, 2).padStart(6)} s  ${f(openBaseCpu / 1000, 2).padStart(6)} s   ≈ ${f((openBaseMs * scale) / 1000, 1)} s / ${f((openBaseCpu * scale) / 1000, 1)} s CPU for ${hours} h (${baseRead} samples; a real parser is slower)`,
  );
  console.log(
    `  decompressed ${mib(rec.stats.decodedBytes)} of JSON lines; warnings: ${rec.warnings.length ? rec.warnings.join(' | ') : 'none'}`,
  );
}

const isMain = process.argv[1] !== undefined && /bench[\\/]recording\.ts$/.test(process.argv[1]);
if (isMain) {
  runRecordingBench().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
