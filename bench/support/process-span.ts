// What a bench measures of its own process over a span: CPU time split by thread (from /proc), its garbage
// collections and the JS heap it allocated (V8's own per-GC figures, no sampling), and the CPU and heap
// profilers for where it goes. Shared by core-cpu and fleet-core; kept apart from either bench so a bundle of
// one (support/bundled-run.ts) does not carry the other's entry point.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { GCProfiler, getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

/** A .cpuprofile of this process from the call until the returned stop, for Chrome DevTools. */
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

/** A .heapprofile of what this process allocates (garbage included) from the call until the returned stop. */
export async function startHeapProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    // BENCH_HEAP_PROFILE_PROMOTED=1 leaves out what the scavenges collect: what is left is what the young
    // generation promoted (and the major GCs then mark), by where it was allocated.
    includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_PROFILE_PROMOTED !== '1',
  });
  return async (file) => {
    // The young generation's garbage since its last scavenge is "not collected" yet and would count as promoted:
    // one scavenge first (needs BENCH_NODE_FLAGS=--expose-gc).
    const gc = (globalThis as { gc?: (o: { type: 'minor' }) => void }).gc;
    if (process.env.BENCH_HEAP_PROFILE_PROMOTED === '1') gc?.({ type: 'minor' });
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

/** One measured span of the core process: CPU per second of it, split by thread, and its GCs. */
export interface Span {
  wallMs: number;
  /** CPU ms per second: user + sys of the process, and (from /proc, Linux) main thread and the others. */
  cpu: number;
  user: number;
  sys: number;
  main: number | null;
  others: number | null;
  gc: Record<string, { n: number; ms: number }>;
  /** Old-generation growth per second when no major GC ran in the span (what scavenges promoted). */
  promotedKBs: number | null;
  /** JS heap bytes allocated per second, garbage included: what the GCs found used minus what the last one left. */
  allocatedKBs: number;
}

interface GcStat {
  beforeGC: { heapStatistics: { usedHeapSize: number } };
  afterGC: { heapStatistics: { usedHeapSize: number } };
}

/**
 * Bytes allocated on the JS heap while `stop` had not been called, from V8's own per-GC heap figures (no sampling
 * profiler, so nothing slows the core down): before each GC the heap holds what the previous one left plus what
 * was allocated since.
 */
function watchAllocation(): () => number {
  const profiler = new GCProfiler();
  const used0 = getHeapStatistics().used_heap_size;
  profiler.start();
  return () => {
    const stats = (profiler.stop()?.statistics ?? []) as unknown as GcStat[];
    let left = used0;
    let bytes = 0;
    for (const g of stats) {
      bytes += Math.max(0, g.beforeGC.heapStatistics.usedHeapSize - left);
      left = g.afterGC.heapStatistics.usedHeapSize;
    }
    return bytes + Math.max(0, getHeapStatistics().used_heap_size - left);
  };
}

export function startSpan(): () => Span {
  const ticks0 = threadTicks();
  const gc = watchGc();
  const allocation = watchAllocation();
  const old0 = oldBytes();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const c = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    const ticks1 = threadTicks();
    const gcs = gc();
    const allocated = allocation();
    const s = wallMs / 1000;
    return {
      wallMs,
      cpu: (c.user + c.system) / 1000 / s,
      user: c.user / 1000 / s,
      sys: c.system / 1000 / s,
      main: ticks0 && ticks1 ? ((ticks1.main - ticks0.main) * 10) / s : null,
      others: ticks0 && ticks1 ? ((ticks1.others - ticks0.others) * 10) / s : null,
      gc: Object.fromEntries(gcs),
      promotedKBs: gcs.has('major') ? null : (oldBytes() - old0) / 1024 / s,
      allocatedKBs: allocated / 1024 / s,
    };
  };
}
