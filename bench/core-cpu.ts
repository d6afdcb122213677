// Core CPU per deployment at 1 Hz, without the demo simulation's own cost: the demo GPU host runs in a child
// process (as a real host is another machine), the core in this one connects to it over SSH and polls it —
// metrics, systemd, health, GPUs, journals for the recorder — while this process's CPU time is measured over a
// steady minute. Prints % of one core, and the SSH channels the host saw per minute per unit.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { getHeapSpaceStatistics } from 'node:v8';
import { createApp } from '../src/main/compose';
import type { CoreOptions } from '../src/main/core/core';
import type { ChannelCounts } from './support/demo-host-main';

const WARMUP_MS = Number(process.env.BENCH_CORE_CPU_WARMUP_MS ?? 15_000);
const MEASURE_MS = Number(process.env.BENCH_CORE_CPU_MS ?? 60_000);

/** A .cpuprofile of the core over the measured window only (start-up and warm-up left out), for Chrome DevTools. */
const PROFILE_TO = process.env.BENCH_CORE_CPU_PROFILE;

export async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (file) => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/**
 * CPU ticks (user+sys, 1/100 s) of this process's main thread and of all its other threads (libuv's pool: zlib and
 * fs; V8's workers: concurrent GC and compilation), from /proc: tells JS work from what it hands off. Linux only.
 */
function threadTicks(): { main: number; others: number } | null {
  try {
    let main = 0;
    let others = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]);
      if (Number(tid) === process.pid) main += ticks;
      else others += ticks;
    }
    return { main, others };
  } catch {
    return null;
  }
}

/** A .heapprofile of what the core allocates over the measured window (garbage included): where GC work comes from. */
const HEAP_PROFILE_TO = process.env.BENCH_CORE_CPU_HEAP_PROFILE;

async function startHeapProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async (file) => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** Garbage collections by kind and their main-thread pause, from the moment it is called until `stop()`. */
function watchGc(): () => Map<string, { n: number; ms: number }> {
  const seen = new Map<string, { n: number; ms: number }>();
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = GC_KINDS[(e as unknown as { detail: { kind: number } }).detail.kind] ?? 'other';
      const s = seen.get(kind) ?? { n: 0, ms: 0 };
      s.n++;
      s.ms += e.duration;
      seen.set(kind, s);
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return () => {
    obs.disconnect();
    return seen;
  };
}

/** Bytes in V8's old generation: its growth between two major GCs is what scavenges promoted (survived twice). */
function oldBytes(): number {
  return getHeapSpaceStatistics()
    .filter((s) => s.space_name !== 'new_space')
    .reduce((a, s) => a + s.space_used_size, 0);
}

type Launched = Awaited<ReturnType<NonNullable<CoreOptions['demo']>>>;

export interface RemoteDemo extends Launched {
  /** The SSH channels the host process saw so far. */
  channels(): Promise<ChannelCounts>;
}

/** The demo GPU host in a child process (as a real host is another machine), reached over SSH. */
export async function remoteDemo(): Promise<RemoteDemo> {
  const child = spawn(
    process.execPath,
    [
      join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      '--tsconfig',
      join(__dirname, '..', 'tsconfig.node.json'),
      join(__dirname, 'support', 'demo-host-main.ts'),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const nextLine = (): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`demo host process exited (${code})`)));
    });
  const j = JSON.parse(await nextLine()) as Omit<Launched, 'hostKeyPublic' | 'stop'> & {
    hostKeyPublic: string;
  };
  return {
    ...j,
    hostKeyPublic: Buffer.from(j.hostKeyPublic, 'base64'),
    channels: async () => {
      const answer = nextLine();
      child.stdin!.write('channels\n');
      return JSON.parse(await answer) as ChannelCounts;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export async function runCoreCpuBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-core-cpu-'));
  let demo: RemoteDemo | undefined;
  const app = createApp({
    shell: 'browser',
    dataDir: dir,
    // BENCH_CORE_CPU_RECORD=0 measures the core without its recorder, to tell the two apart.
    record: process.env.BENCH_CORE_CPU_RECORD !== '0',
    demoLauncher: async () => (demo = await remoteDemo()),
  });
  try {
    const s = await app.core.openDemo({});
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const ch0 = await demo!.channels();
    const profiler = PROFILE_TO ? await startProfile() : undefined;
    const heapProfiler = HEAP_PROFILE_TO ? await startHeapProfile() : undefined;
    const ticks0 = threadTicks();
    const gc = watchGc();
    const old0 = oldBytes();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, MEASURE_MS));
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    const ticks1 = threadTicks();
    const gcs = gc();
    const old1 = oldBytes();
    const ch1 = await demo!.channels();
    if (profiler && PROFILE_TO) await profiler(PROFILE_TO);
    if (heapProfiler && HEAP_PROFILE_TO) await heapProfiler(HEAP_PROFILE_TO);
    const pct = ((cpu.user + cpu.system) / 1000 / wall) * 100;
    const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(64)}${v}\n`);
    line(
      'core CPU of one 1P1D deployment at 1 Hz (demo host in its own process)',
      `${pct.toFixed(2)} % of a core`,
    );
    line(
      '  of which user / system',
      `${((cpu.user / 1000 / wall) * 100).toFixed(2)} / ${((cpu.system / 1000 / wall) * 100).toFixed(2)} %`,
    );
    line(
      '  measured over',
      `${(wall / 1000).toFixed(0)} s after ${WARMUP_MS / 1000} s of warm-up, recording ${process.env.BENCH_CORE_CPU_RECORD === '0' ? 'off' : 'on'}`,
    );
    line(
      '  core process CPU time per second (user+sys)',
      `${((cpu.user + cpu.system) / wall).toFixed(1)} ms/s (load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
    if (ticks0 && ticks1)
      line(
        '  of which main thread / other threads (zlib, fs, GC helpers)',
        `${(((ticks1.main - ticks0.main) * 10) / (wall / 1000)).toFixed(1)} / ${(
          ((ticks1.others - ticks0.others) * 10) /
          (wall / 1000)
        ).toFixed(1)} ms/s`,
      );
    for (const [kind, g] of gcs)
      line(
        `  GC ${kind}: per minute, main-thread pause per second`,
        `${((g.n * 60_000) / wall).toFixed(1)}, ${(g.ms / (wall / 1000)).toFixed(2)} ms/s`,
      );
    const mem = process.memoryUsage();
    line(
      '  heap used / external (array buffers) at the end',
      `${(mem.heapUsed / 1048576).toFixed(1)} / ${(mem.external / 1048576).toFixed(1)} MB`,
    );
    if (!gcs.has('major'))
      line(
        '  promoted to the old generation (no major GC ran)',
        `${((old1 - old0) / 1024 / (wall / 1000)).toFixed(1)} kB/s`,
      );
    line('goal', '≤ 1 % of a core (issue 16; 3.7 % at e1788f1, the commit before the cut)');
    line('SSH channels opened per minute (host process counts them)', '');
    const perMin = (n: number): string => ((n * 60_000) / wall).toFixed(1);
    const keys = [...new Set([...Object.keys(ch1.exec), ...Object.keys(ch0.exec)])].sort();
    for (const k of keys) line(`  exec ${k}`, perMin((ch1.exec[k] ?? 0) - (ch0.exec[k] ?? 0)));
    line('  direct-tcpip (HTTP)', perMin(ch1.tcpip - ch0.tcpip));
    const shellKeys = [...new Set([...Object.keys(ch1.shell ?? {}), ...Object.keys(ch0.shell ?? {})])].sort();
    if (shellKeys.length) line('Commands sent to persistent shells per minute (no channel each)', '');
    for (const k of shellKeys) line(`  ${k}`, perMin((ch1.shell?.[k] ?? 0) - (ch0.shell?.[k] ?? 0)));
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
  } finally {
    await app.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) void runCoreCpuBench().then(() => process.exit(0));
