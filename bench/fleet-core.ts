// The core's side of the fleet scale bench (issue 15 "Scale": 32 workers on 8 hosts at 1 Hz, beside one 1P1D
// host): the demo fleet runs in a child process (as real hosts are other machines; support/demo-fleet-main.ts),
// the core connects to it over SSH through the ssh config the fleet wrote — exactly connectHost on the router's
// host — and polls every worker: metrics, systemd, health, GPUs, the recorder's journals. Over a steady window it
// measures
//   core CPU            the core process's CPU time (user+sys) per second of wall time, and as % of one core,
//                       with its spread over windows of BENCH_FLEET_WINDOW_MS
//   SSH per host        connections that logged in, channels open at the same moment (max), channels opened
//                       per minute (exec and direct-tcpip), counted by each host's SSH server
// The core runs twice (BENCH_FLEET_MODE=tsx|bundled|both, default both): in the bench's own process through tsx
// (the method before), and bundled by esbuild in a child process of its own, as the product ships it
// (support/bundled-run.ts: tsx's transformed sources on the heap cost every major GC). The simulation's CPU is
// in neither: it is the fleet's own process.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { createApp } from '../src/main/compose';
import type { FleetShape } from '../src/main/demo/topology';
import type { FleetHostCounts, FleetReady } from './support/demo-fleet-main';
import { runBundled } from './support/bundled-run';
import { startHeapProfile, startProfile, startSpan, type Span } from './support/process-span';
import { startSurvivors } from './support/survivors';
import { tuneGarbageCollector } from '../src/main/gc-tuning';

/** A .cpuprofile of the fleet's core over its measured window (BENCH_FLEET_PROFILE=file), for Chrome DevTools. */
const PROFILE_TO = process.env.BENCH_FLEET_PROFILE;
/** A .heapprofile of what the fleet's core allocates over its window (BENCH_FLEET_HEAP_PROFILE=file). */
const HEAP_PROFILE_TO = process.env.BENCH_FLEET_HEAP_PROFILE;
/**
 * BENCH_FLEET_SURVIVORS=file: what the fleet's core still holds at the end of its window of what it allocated
 * in it, by holder (support/survivors.ts). The snapshots cost seconds of CPU: the figures of such a run are not.
 */
const SURVIVORS_TO = process.env.BENCH_FLEET_SURVIVORS;
/** tsx, bundled or both (default): see the top of this file. */
const MODE = process.env.BENCH_FLEET_MODE ?? 'both';
/** Set in the bundled child: print its figures as one JSON line for the parent instead of the report. */
const AS_CHILD = process.env.BENCH_FLEET_CHILD === '1';

/**
 * Before the measured window: the fleet opening, and V8 compiling the code the steady rounds run — which takes
 * minutes, not seconds. After 15 s the fleet's core took 88 ms/s, half of it on other threads (perf: a fifth of
 * all samples in TurboFan, ≈ 1 function compiled a second, most for the first time); after 5 minutes the same
 * fleet took 37 (main 25 / others 12), with the same scrapes and allocation per round. An operator keeps the
 * console open all day, so the steady figure is the settled one; the warm-up is printed minute by minute beside it.
 */
const WARMUP_MS = Number(process.env.BENCH_FLEET_WARMUP_MS ?? 300_000);
const WARMUP_WINDOW_MS = 60_000;
const MEASURE_MS = Number(process.env.BENCH_FLEET_MS ?? 60_000);
/** The measured window is cut into windows of this length, whose CPU spread is printed. */
const WINDOW_MS = Number(process.env.BENCH_FLEET_WINDOW_MS ?? 10_000);
export const SCALE: FleetShape = { hosts: 8, prefill: 8, decode: 24 };
const SINGLE: FleetShape = { hosts: 1, prefill: 1, decode: 1 };
const GOALS = { cpuPct: 5, connectionsPerHost: 1, channelsPerHost: 8 };
const root = join(__dirname, '..');

export interface RemoteFleet {
  ready: FleetReady;
  counts(reset?: boolean): Promise<FleetHostCounts[]>;
  stop(): Promise<void>;
}

export async function remoteFleet(shape: FleetShape): Promise<RemoteFleet> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      '--tsconfig',
      join(root, 'tsconfig.node.json'),
      join(__dirname, 'support', 'demo-fleet-main.ts'),
      '--hosts',
      String(shape.hosts),
      '--prefill',
      String(shape.prefill),
      '--decode',
      String(shape.decode),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines: Interface = createInterface({ input: child.stdout! });
  const nextLine = (): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`demo fleet process exited (${code})`)));
    });
  const ready = JSON.parse(await nextLine()) as FleetReady;
  return {
    ready,
    counts: async (reset = false) => {
      const answer = nextLine();
      child.stdin!.write(reset ? 'reset\n' : 'counts\n');
      return JSON.parse(await answer) as FleetHostCounts[];
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export interface CoreFigures {
  shape: FleetShape;
  workers: number;
  services: number;
  wallMs: number;
  cpuMsPerS: number;
  cpuPct: number;
  /** The same window split by thread, with its GCs and the JS heap it allocated. */
  span: Span;
  /** CPU ms per s of each window of WINDOW_MS in the measured window. */
  windowCpuMsPerS: number[];
  /** CPU ms per s of each minute of the warm-up before it. */
  warmupCpuMsPerS: number[];
  connectionsPerHost: number[];
  /** Per host: the most channels open at once during the window. */
  openMaxPerHost: number[];
  /** Per host: channels opened per minute (exec + direct-tcpip). */
  openedPerMinPerHost: number[];
  execPerMin: number;
  tcpipPerMin: number;
  observations: number;
  /**
   * Scrapes that reached the core in the window: on a loaded machine probes miss their budget and a round
   * carries fewer, and so allocates less — the per-scrape figure compares runs at different loads.
   */
  scrapes: number;
  fallback: string | null;
  /** The first host's channels open at the end, by kind. */
  openKinds: Record<string, number>;
  /** Per host: the channels open at the end, by kind (HTTP tunnels, shells, journal follows). */
  kindsPerHost: Array<{ name: string; tunnels: number; shells: number; follows: number }>;
}

/** A host's open channels by what they carry: "tcpip <addr>" tunnels, "exec sh" shells, other execs follows. */
function byKind(c: FleetHostCounts): { name: string; tunnels: number; shells: number; follows: number } {
  let tunnels = 0;
  let shells = 0;
  let follows = 0;
  for (const [k, n] of Object.entries(c.openKinds)) {
    if (k.startsWith('tcpip ')) tunnels += n;
    else if (k === 'exec sh') shells += n;
    else follows += n;
  }
  return { name: c.name, tunnels, shells, follows };
}

/** This process's CPU ms per s of wall time over `totalMs`, in windows of `windowMs`. */
async function cpuWindows(totalMs: number, windowMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let left = totalMs; left > 0; left -= windowMs) {
    const w0 = process.cpuUsage();
    const wt0 = performance.now();
    await new Promise((r) => setTimeout(r, Math.min(windowMs, left)));
    const w = process.cpuUsage(w0);
    out.push((w.user + w.system) / 1000 / ((performance.now() - wt0) / 1000));
  }
  return out;
}

/** Measures one shape; `profile`: write the profiles the variables name (the fleet shape only). */
async function measureCore(shape: FleetShape, profile: boolean): Promise<CoreFigures> {
  const fleet = await remoteFleet(shape);
  const dir = mkdtempSync(join(tmpdir(), 'pdc-fleet-scale-'));
  const app = createApp({ shell: 'browser', dataDir: dir, homeDir: fleet.ready.home });
  try {
    const alias = fleet.ready.entry;
    const s = await app.handlers.connectHost({ host: { id: alias, label: alias, kind: 'ssh', alias } });
    let observations = 0;
    app.core.on('observation', () => observations++);
    let scrapes = 0;
    app.core.hooks.on('scrape', () => scrapes++);
    const warmupCpuMsPerS = await cpuWindows(WARMUP_MS, WARMUP_WINDOW_MS);
    const c0 = await fleet.counts(true);
    const obs0 = observations;
    const scrapes0 = scrapes;
    const profiling = profile && shape.hosts > 1;
    const profiler = PROFILE_TO && profiling ? await startProfile() : undefined;
    const heapProfiler = HEAP_PROFILE_TO && profiling ? await startHeapProfile() : undefined;
    const survivors = SURVIVORS_TO && profiling ? await startSurvivors() : undefined;
    const endSpan = startSpan();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const windowCpuMsPerS = await cpuWindows(MEASURE_MS, WINDOW_MS);
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    const span = endSpan();
    // Counted now: the reads below wait on the fleet's process and the close, and rounds go on meanwhile (on a
    // loaded machine several seconds of them, which read as 1.1–1.35 rounds a second).
    const obs1 = observations;
    const scrapes1 = scrapes;
    const c1 = await fleet.counts();
    if (profiler && PROFILE_TO) await profiler(PROFILE_TO);
    if (heapProfiler && HEAP_PROFILE_TO) await heapProfiler(HEAP_PROFILE_TO);
    if (survivors && SURVIVORS_TO) writeFileSync(SURVIVORS_TO, `${await survivors(60)}\n`);
    const perMin = (n: number): number => (n * 60_000) / wallMs;
    const sum = (f: (c: FleetHostCounts) => number, cs: FleetHostCounts[]): number =>
      cs.reduce((a, c) => a + f(c), 0);
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
    return {
      shape,
      workers: fleet.ready.workers,
      services: s.deployment.services.length,
      wallMs,
      cpuMsPerS: (cpu.user + cpu.system) / wallMs,
      cpuPct: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
      span,
      windowCpuMsPerS,
      warmupCpuMsPerS,
      connectionsPerHost: c1.map((c) => c.connections),
      openMaxPerHost: c1.map((c) => c.open.max),
      openedPerMinPerHost: c1.map((c, i) => perMin(c.exec + c.tcpip - c0[i].exec - c0[i].tcpip)),
      execPerMin: perMin(sum((c) => c.exec, c1) - sum((c) => c.exec, c0)),
      tcpipPerMin: perMin(sum((c) => c.tcpip, c1) - sum((c) => c.tcpip, c0)),
      observations: obs1 - obs0,
      scrapes: scrapes1 - scrapes0,
      fallback: fleet.ready.fallback,
      openKinds: c1[0].openKinds,
      kindsPerHost: c1.map(byKind),
    };
  } finally {
    await app.shutdown();
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Shapes {
  mode: 'tsx' | 'bundled';
  scale: CoreFigures;
  single: CoreFigures;
  /** The Node and V8 the core ran on (BENCH_NODE can make the bundled child's another). */
  runtime: { node: string; v8: string };
}

async function measureShapes(profile: boolean): Promise<Omit<Shapes, 'mode'>> {
  // As the product's entries do (PD_CONSOLE_GC_TUNING=0 measures without; bench/gc-tuning.ts runs both).
  tuneGarbageCollector();
  const scale = await measureCore(SCALE, profile);
  const single = await measureCore(SINGLE, profile);
  return { scale, single, runtime: { node: process.versions.node, v8: process.versions.v8 } };
}

const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '–');
const max = (xs: number[]): number => (xs.length ? Math.max(...xs) : NaN);
const spread = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? `${f(s[0])} / ${f(s[s.length >> 1])} / ${f(s[s.length - 1])}` : '–';
};
/** JS heap allocated per observation (one a second): the garbage each round leaves for the scavenges. */
const perRound = (c: CoreFigures): number => (c.span.allocatedKBs * c.wallMs) / 1000 / c.observations;
const perScrape = (c: CoreFigures): number => (c.span.allocatedKBs * c.wallMs) / 1000 / c.scrapes;
const scrapesPerRound = (c: CoreFigures): string => f(c.scrapes / c.observations);

function printCore({ mode, scale, single, runtime }: Shapes): void {
  const row = (label: string, a: string, b: string, goal = ''): void =>
    void process.stdout.write(`${label.padEnd(52)}${a.padStart(24)} ${b.padStart(24)}   ${goal}\n`);
  const name = (c: CoreFigures): string => `${c.shape.hosts}h ${c.shape.prefill}P${c.shape.decode}D`;
  process.stdout.write(
    `\nCore at 1 Hz, ${mode === 'bundled' ? 'bundled by esbuild in a child process (as shipped)' : 'through tsx in the bench process'}, Node ${runtime.node}; demo fleet in its own process (CPU time, not wall-clock latency)\n`,
  );
  row('', name(scale), name(single), 'goal (fleet)');
  row(
    'workers / services polled',
    `${scale.workers} / ${scale.services}`,
    `${single.workers} / ${single.services}`,
  );
  row('core CPU, ms per s (user+sys)', f(scale.cpuMsPerS), f(single.cpuMsPerS));
  row('core CPU, % of one core', f(scale.cpuPct, 2), f(single.cpuPct, 2), `≤ ${GOALS.cpuPct} %`);
  row(
    `  windows of ${WINDOW_MS / 1000} s, ms per s: min / median / max`,
    spread(scale.windowCpuMsPerS),
    spread(single.windowCpuMsPerS),
  );
  const threads = (c: CoreFigures): string => `${f(c.span.main ?? NaN)} / ${f(c.span.others ?? NaN)}`;
  row('  main thread / other threads (GC, pool), ms per s', threads(scale), threads(single));
  const warmup = (c: CoreFigures): string => c.warmupCpuMsPerS.map((x) => f(x, 0)).join(' ');
  row(
    `  warm-up, ms per s in each ${WARMUP_WINDOW_MS / 1000} s (V8 compiling meanwhile)`,
    warmup(scale),
    warmup(single),
  );
  row('  JS heap allocated, kB per round', f(perRound(scale), 0), f(perRound(single), 0));
  row(
    '  scrapes per round; JS heap allocated, kB per scrape',
    `${scrapesPerRound(scale)}; ${f(perScrape(scale), 0)}`,
    `${scrapesPerRound(single)}; ${f(perScrape(single), 0)}`,
  );
  const gcs = (c: CoreFigures): string => {
    const n = (k: string): number => ((c.span.gc[k]?.n ?? 0) * 60_000) / c.wallMs;
    return `${f(n('minor'), 0)} / ${f(n('major') + n('incremental'), 1)}`;
  };
  row('  GCs per minute: minor / major+incremental', gcs(scale), gcs(single));
  row(
    'SSH connections per host (max)',
    String(max(scale.connectionsPerHost)),
    String(max(single.connectionsPerHost)),
    `= ${GOALS.connectionsPerHost}`,
  );
  row(
    'channels open at once per host (max)',
    String(max(scale.openMaxPerHost)),
    String(max(single.openMaxPerHost)),
    `≤ ${GOALS.channelsPerHost}`,
  );
  row(
    'channels opened per minute per host (max)',
    f(max(scale.openedPerMinPerHost)),
    f(max(single.openedPerMinPerHost)),
  );
  row(
    '  all hosts: exec / direct-tcpip per minute',
    `${f(scale.execPerMin)} / ${f(scale.tcpipPerMin)}`,
    `${f(single.execPerMin)} / ${f(single.tcpipPerMin)}`,
  );
  row(
    'observations emitted per s',
    f((scale.observations * 1000) / scale.wallMs, 2),
    f((single.observations * 1000) / single.wallMs, 2),
  );
  process.stdout.write(
    `  per host (${name(scale)}): open max ${scale.openMaxPerHost.join(' ')}; opened/min ${scale.openedPerMinPerHost.map((x) => f(x, 0)).join(' ')}\n`,
  );
  process.stdout.write(
    `  open at the end by kind (HTTP tunnels + shells + journal follows): ${scale.kindsPerHost
      .map((k) => `${k.name} ${k.tunnels}+${k.shells}+${k.follows}`)
      .join(', ')}; one host: ${single.kindsPerHost
      .map((k) => `${k.tunnels}+${k.shells}+${k.follows}`)
      .join(', ')}\n`,
  );
  process.stdout.write(
    `  measured over ${f(scale.wallMs / 1000, 0)} s / ${f(single.wallMs / 1000, 0)} s after ${WARMUP_MS / 1000} s of warm-up, recording on; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  process.stdout.write(
    `  open at the end on ${scale.shape.hosts > 1 ? 'the router host' : 'the host'}: ${Object.entries(
      scale.openKinds,
    )
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ')}; one host: ${Object.entries(single.openKinds)
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ')}\n`,
  );
  if (scale.fallback) process.stdout.write(`  note: ${scale.fallback}\n`);
}

/** The fleet figure of both methods in columns: the change of method, in one run. */
function printSideBySide(tsx: Shapes, bundled: Shapes): void {
  const row = (label: string, a: string, b: string): void =>
    void process.stdout.write(`${label.padEnd(52)}${a.padStart(24)} ${b.padStart(24)}\n`);
  const threads = (c: CoreFigures): string => `${f(c.span.main ?? NaN)} / ${f(c.span.others ?? NaN)}`;
  process.stdout.write(`\nThe core, both methods in this run (tsx first, then bundled)\n`);
  row('', 'tsx, in process', 'bundled, child');
  row('fleet core CPU, ms per s', f(tsx.scale.cpuMsPerS), f(bundled.scale.cpuMsPerS));
  row(
    '  windows: min / median / max',
    spread(tsx.scale.windowCpuMsPerS),
    spread(bundled.scale.windowCpuMsPerS),
  );
  row('  main / other threads, ms per s', threads(tsx.scale), threads(bundled.scale));
  row('  JS heap allocated, kB per round', f(perRound(tsx.scale), 0), f(perRound(bundled.scale), 0));
  row('  scrapes per round', scrapesPerRound(tsx.scale), scrapesPerRound(bundled.scale));
  row('single host core CPU, ms per s', f(tsx.single.cpuMsPerS), f(bundled.single.cpuMsPerS));
}

/** The core figures of the methods BENCH_FLEET_MODE names, each printed as it comes, then side by side. */
export async function runFleetCore(): Promise<void> {
  if (!['tsx', 'bundled', 'both'].includes(MODE))
    throw new Error(`BENCH_FLEET_MODE must be tsx, bundled or both, got "${MODE}"`);
  const runs: Shapes[] = [];
  if (MODE !== 'bundled') {
    // With both, the profiles are the shipped (bundled) core's.
    runs.push({ mode: 'tsx', ...(await measureShapes(MODE === 'tsx')) });
    printCore(runs[runs.length - 1]);
  }
  if (MODE !== 'tsx') {
    const env = { ...process.env, BENCH_FLEET_CHILD: '1' };
    runs.push({ mode: 'bundled', ...runBundled<Omit<Shapes, 'mode'>>('fleet-core', env) });
    printCore(runs[runs.length - 1]);
  }
  if (runs.length === 2) printSideBySide(runs[0], runs[1]);
}

if (require.main === module && AS_CHILD)
  void measureShapes(true).then((shapes) => {
    process.stdout.write(`${JSON.stringify(shapes)}\n`);
    process.exit(0);
  });
